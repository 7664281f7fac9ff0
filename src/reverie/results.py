"""Typed results for expected outcomes (gates, acceptance checks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Accepted(Generic[T]):
    value: T | None = None
    ok: bool = field(default=True, init=False)


@dataclass(frozen=True)
class Rejected:
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
    ok: bool = field(default=False, init=False)


Outcome = Accepted[Any] | Rejected

__all__ = ["Accepted", "Outcome", "Rejected"]
