"""Typed results for expected outcomes (gates, acceptance checks).

An expected "no" is a value, not an exception. ``Accepted`` and ``Rejected`` carry a
``Literal`` tag (``ok``), so both ``if outcome.ok:`` and ``match`` narrow the union::

    match decide(stats, now=now):
        case Accepted(value=gates): ...
        case Rejected(code=gate, reason=why): ...

``Pending`` is the third answer of a request only the owner may grant: it was kept, not
done, under an id the owner confirms or rejects.

``Rejected.code`` is a stable identifier (a gate's name, a check's name) for code and
tests; ``Rejected.reason`` is always the sentence a person reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Accepted(Generic[T]):
    """The check passed; ``value`` is what it produced."""

    value: T
    ok: Literal[True] = field(default=True, init=False)


@dataclass(frozen=True)
class Rejected:
    """The check refused: ``code`` names which rule, ``reason`` says why in words."""

    code: str
    reason: str
    detail: Mapping[str, Any] = field(default_factory=dict)
    ok: Literal[False] = field(default=False, init=False)


@dataclass(frozen=True)
class Pending(Generic[T]):
    """Not done on the caller's word: recorded, waiting for the owner
    (``reverie pending confirm ID`` or ``reject ID``). ``code`` names the rule that held
    it back, ``reason`` says why in words, ``value`` is what waits."""

    id: str
    code: str
    reason: str
    value: T
    ok: Literal[False] = field(default=False, init=False)


Outcome: TypeAlias = Accepted[T] | Rejected

__all__ = ["Accepted", "Outcome", "Pending", "Rejected"]
