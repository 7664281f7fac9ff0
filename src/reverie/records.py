"""Records: plain data with value equality, for the classes the per-prompt hook builds.

``reverie hook user-prompt-submit`` starts a fresh interpreter on every prompt, and its
start-up is most of its cost. A dataclass costs that process the import of
``inspect`` (with ``ast``, ``dis`` and ``tokenize``: about one bare Python start) and
0.2-0.5 ms a class (code made with ``exec``); a ``typing.NamedTuple`` 0.1-0.3 ms a class.
A :class:`Record` subclass names its fields in ``__slots__`` and sets them in its
``__init__``, and compares, hashes and prints by them as a frozen dataclass does; it is
never changed once made. (Kept so by ``tests/test_hook_path.py``; everywhere else
dataclasses stay the rule.)
"""

from __future__ import annotations

from typing import Any


class Record:
    """Equality, hash and repr by the fields in ``__slots__``."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


__all__ = ["Record"]
