"""Standing intents as data, and the zero-model trigger matcher (pure).

An *event* intent carries trigger term sets: ``"bank, transfer; 银行"`` is two triggers,
the first of two terms. A trigger fires on a message that holds every one of its terms:
a Latin term matches whole words (lightly stemmed: *releases* holds *release*), a CJK
term matches as a substring (Chinese has no spaces to split on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..errors import ReverieError
from ..tokens import is_cjk, terms


class Kind(StrEnum):
    """How an intent fires: at a time, on an event, or not at all (a wish)."""

    TIME = "time"  # a one-off time or a cron expression
    EVENT = "event"  # trigger term sets matched against inbound messages
    WISH = "wish"  # neither: kept with a review date


class Status(StrEnum):
    """Where an intent is in its life; only ``armed`` ones ever fire."""

    PENDING = "pending"  # proposed by the agent: never fires until the owner confirms
    ARMED = "armed"
    DONE = "done"  # a one-off that fired, or an event intent whose budget is spent
    EXPIRED = "expired"
    CANCELLED = "cancelled"


LIVE = (Status.PENDING, Status.ARMED)
MAX_TERMS = 8  # terms in one trigger
MAX_TRIGGERS = 8  # triggers of one intent
MAX_TERM_CHARS = 64
MAX_TEXT_CHARS = 1000


def stem(word: str) -> str:
    """A light English stem so that *mentions*, *mentioned* and *mention* meet."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _term(raw: str) -> str:
    term = " ".join(raw.split()).lower()
    if not term or not terms(term):
        return ""
    if len(term) > MAX_TERM_CHARS:
        raise ReverieError(f"trigger term too long (over {MAX_TERM_CHARS} chars): {raw[:40]!r}")
    return term


def parse_triggers(spec: str) -> tuple[tuple[str, ...], ...]:
    """``"term, term; other term"``: triggers separated by ``;``, terms by ``,``
    (full-width ``；`` ``，`` ``、`` too). Blank terms are dropped."""
    out: list[tuple[str, ...]] = []
    for part in re.split(r"[;；]", spec):
        trig = tuple(dict.fromkeys(t for t in map(_term, re.split(r"[,，、]", part)) if t))
        if trig:
            out.append(trig[:MAX_TERMS])
    if not out:
        raise ReverieError(f"no trigger terms in {spec!r} (use 'term, term; other term')")
    return tuple(out[:MAX_TRIGGERS])


def format_triggers(triggers: tuple[tuple[str, ...], ...]) -> str:
    return "; ".join(", ".join(t) for t in triggers)


@dataclass(frozen=True)
class Inbound:
    """A message prepared once for matching against many triggers."""

    lower: str
    stems: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Inbound:
        lower = text.lower()
        return cls(lower, frozenset(stem(t) for t in terms(lower) if not is_cjk(t[0])))


def term_keys(term: str) -> tuple[list[str], list[str]]:
    """A term's Latin stems (looked up in the word index) and CJK runs (substrings)."""
    latin: list[str] = []
    cjk: list[str] = []
    for t in terms(term):
        (cjk if is_cjk(t[0]) else latin).append(t if is_cjk(t[0]) else stem(t))
    return latin, cjk


def term_in(term: str, msg: Inbound) -> bool:
    latin, cjk = term_keys(term)
    return all(s in msg.stems for s in latin) and all(c in msg.lower for c in cjk)


def matching_trigger(triggers: tuple[tuple[str, ...], ...], msg: Inbound) -> tuple[str, ...] | None:
    """The first trigger whose every term the message holds, else None."""
    for trig in triggers:
        if trig and all(term_in(t, msg) for t in trig):
            return trig
    return None


@dataclass(frozen=True)
class Spec:
    """A compiled intent, before it is stored."""

    kind: Kind
    text: str
    at: datetime | None = None
    cron: str | None = None
    triggers: tuple[tuple[str, ...], ...] = ()
    review_by: datetime | None = None


@dataclass
class Intent:
    """One standing intent as stored (times are aware datetimes, UTC in the store)."""

    id: str
    kind: Kind
    status: Status
    text: str
    origin: str  # who made it: owner (armed at once) or agent (a proposal)
    proposed_by: str  # cli | session:<id>#<seq> | session:<id> | mcp
    created: datetime
    at: datetime | None = None
    cron: str | None = None
    tz: str = ""
    triggers: tuple[tuple[str, ...], ...] = ()
    review_by: datetime | None = None
    expires: datetime | None = None
    cooldown_s: float = 86400.0
    budget: int = 3
    fired: int = 0
    last_fired: datetime | None = None
    next_turn: datetime | None = None
    next_notify: datetime | None = None
    confirmed: datetime | None = None
    ended: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def when(self) -> str:
        """How the intent fires, for people."""
        if self.kind is Kind.EVENT:
            return "on " + format_triggers(self.triggers)
        if self.cron:
            return f"every {self.cron} ({self.tz})"
        if self.kind is Kind.WISH and self.review_by:
            return "review by " + self.review_by.astimezone(_zone(self.tz)).date().isoformat()
        if self.at:
            return "at " + self.at.astimezone(_zone(self.tz)).isoformat(timespec="minutes")
        return ""

    def as_dict(self) -> dict[str, Any]:
        def iso(d: datetime | None) -> str | None:
            return d.astimezone(_zone(self.tz)).isoformat(timespec="seconds") if d else None

        return {
            "id": self.id,
            "kind": self.kind.value,
            "status": self.status.value,
            "text": self.text,
            "when": self.when,
            "origin": self.origin,
            "proposed_by": self.proposed_by,
            "created": iso(self.created),
            "at": iso(self.at),
            "cron": self.cron,
            "tz": self.tz,
            "triggers": [list(t) for t in self.triggers],
            "review_by": iso(self.review_by),
            "expires": iso(self.expires),
            "cooldown_hours": round(self.cooldown_s / 3600, 3),
            "budget": self.budget,
            "fired": self.fired,
            "last_fired": iso(self.last_fired),
            "next_turn": iso(self.next_turn),
            "next_notify": iso(self.next_notify),
        }


@dataclass(frozen=True)
class Fired:
    """One intent that fired in a turn, and why."""

    intent: Intent
    reason: str  # "due <time>" | "matched <terms>" | "review"

    def as_dict(self) -> dict[str, Any]:
        i = self.intent
        return {
            "id": i.id,
            "kind": i.kind.value,
            "text": i.text,
            "why": self.reason,
            "when": i.when,
            "fired": i.fired,
            "budget": i.budget if i.kind is Kind.EVENT else None,
        }


def _zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name) if name else None
    except (ValueError, KeyError, OSError):
        return None


__all__ = [
    "LIVE",
    "Fired",
    "Inbound",
    "Intent",
    "Kind",
    "Spec",
    "Status",
    "format_triggers",
    "matching_trigger",
    "parse_triggers",
    "stem",
    "term_in",
    "term_keys",
]
