"""A session's active projects (R-SCOPE-1 read side): an LRU of at most 4 keys. Pure.

Entering a directory makes its project the most recent; a fifth project pushes the
least recently entered one out. Search boosts entries of active projects and trigger
injection requires every key of an entry to be active, so a project that fell out of
the LRU stops firing its triggers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .remote import is_valid_key

MAX_ACTIVE = 4


@dataclass(frozen=True)
class ActiveProjects:
    """Most recent first; ``current``: the project of the directory the session is in
    now (None outside a repository), the one a write made now is tagged with."""

    keys: tuple[str, ...] = ()
    current: str | None = None
    limit: int = MAX_ACTIVE

    def enter(self, key: str | None) -> ActiveProjects:
        """The set after entering a directory of project ``key`` (None: no repository,
        which changes the current project but leaves the LRU as it was)."""
        if key is None or not is_valid_key(key):
            return ActiveProjects(self.keys, None, self.limit)
        keys = (key, *(k for k in self.keys if k != key))[: max(1, self.limit)]
        return ActiveProjects(keys, key, self.limit)

    @property
    def active(self) -> frozenset[str]:
        return frozenset(self.keys)

    @classmethod
    def restore(
        cls, keys: Iterable[object], current: object = None, limit: int = MAX_ACTIVE
    ) -> ActiveProjects:
        """From a persisted record: anything that is no valid key is dropped."""
        valid = [k for k in keys if isinstance(k, str) and is_valid_key(k)]
        cur = current if isinstance(current, str) and current in valid else None
        return cls(tuple(dict.fromkeys(valid))[: max(1, limit)], cur, limit)

    def as_record(self) -> dict[str, object]:
        return {"type": "scope", "projects": list(self.keys), "current": self.current}


def merge_active(*sets: Iterable[str]) -> frozenset[str]:
    """The union of several active sets, valid keys only."""
    return frozenset(k for s in sets for k in s if is_valid_key(k))


__all__ = ["MAX_ACTIVE", "ActiveProjects", "merge_active"]
