"""Promotion gates: every one must pass, none trades off against another (R-DREAM-5, -6).

The gates run in a fixed order and all of them are always evaluated, so that "why was
this not promoted?" can show the whole picture; the verdict names the first failure.
Provenance comes first and fails closed: text of unknown origin, untrusted or system
text, and anything from cron, heartbeat or sub-agent sessions is never promoted,
however often it was recalled. Pure: ``now`` is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..provenance.origin import PROMOTABLE_ORIGINS, Origin, SessionKind
from ..results import Accepted, Rejected
from .content import Judge
from .junk import junk_reason
from .memory_file import clean_snippet
from .signals import RecallStats, Signals, compute_signals

GATE_PROVENANCE = "provenance"
GATE_JUNK = "junk"
GATE_CONTENT = "content"
GATE_ALREADY_PROMOTED = "already_promoted"
GATE_MIN_RECALLS = "min_recalls"
GATE_MIN_QUERIES = "min_queries"
GATE_MAX_AGE = "max_age"
GATE_MIN_SCORE = "min_score"
GATE_ORDER: tuple[str, ...] = (
    GATE_PROVENANCE,
    GATE_JUNK,
    GATE_CONTENT,
    GATE_ALREADY_PROMOTED,
    GATE_MIN_RECALLS,
    GATE_MIN_QUERIES,
    GATE_MAX_AGE,
    GATE_MIN_SCORE,
)


@dataclass(frozen=True)
class GateConfig:
    """Gate thresholds; defaults are SPEC section 8's and the ``dream_*`` settings'."""

    min_score: float = 0.75
    min_recalls: int = 3
    min_queries: int = 3
    max_age_days: int = 30

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> GateConfig:
        """The thresholds from a ``reverie.settings.Settings`` mapping."""
        return cls(
            min_score=float(settings["dream_min_score"]),
            min_recalls=int(settings["dream_min_recalls"]),
            min_queries=int(settings["dream_min_queries"]),
            max_age_days=int(settings["dream_max_age_days"]),
        )


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict on a candidate: its name, pass or fail, and why."""

    name: str
    passed: bool
    reason: str


def _provenance(stats: RecallStats) -> GateResult:
    origin: object = stats.origin
    kind: object = stats.session_kind
    if not isinstance(origin, Origin):
        return GateResult(GATE_PROVENANCE, False, "provenance: unknown origin")
    if kind is not None and not isinstance(kind, SessionKind):
        return GateResult(GATE_PROVENANCE, False, "provenance: unknown session kind")
    if origin not in PROMOTABLE_ORIGINS:
        return GateResult(GATE_PROVENANCE, False, f"provenance: {origin.value} origin")
    if kind is not None and not kind.promotable:
        return GateResult(GATE_PROVENANCE, False, f"provenance: {kind.value} session")
    where = f", {kind.value} session" if kind is not None else ""
    return GateResult(GATE_PROVENANCE, True, f"provenance: {origin.value} origin{where}")


def _junk(stats: RecallStats) -> GateResult:
    why = junk_reason(stats.snippet)
    if why is None:
        return GateResult(GATE_JUNK, True, "junk: none")
    return GateResult(GATE_JUNK, False, f"junk: {why}")


def _content(stats: RecallStats, judge: Judge) -> GateResult:
    verdict = judge(clean_snippet(stats.snippet))
    return GateResult(GATE_CONTENT, verdict.durable, f"content: {verdict.reason}")


def _already(already_promoted: bool) -> GateResult:
    if already_promoted:
        return GateResult(GATE_ALREADY_PROMOTED, False, "already promoted to MEMORY.md")
    return GateResult(GATE_ALREADY_PROMOTED, True, "not yet in MEMORY.md")


def _at_least(name: str, label: str, value: float, minimum: float, fmt: str) -> GateResult:
    ok = value >= minimum
    op = ">=" if ok else "<"
    return GateResult(name, ok, f"{label} {value:{fmt}} {op} {minimum:{fmt}}")


def age_days(stats: RecallStats, now: datetime) -> int:
    """Age of the candidate's *need*: days since it was last recalled (SPEC section 8:
    "not needed in the last 30 days", however old its journal is)."""
    last: date = stats.last_recalled.date()
    return max(0, (now.date() - last).days)


def _max_age(stats: RecallStats, now: datetime, max_days: int) -> GateResult:
    age = age_days(stats, now)
    if age > max_days:
        return GateResult(GATE_MAX_AGE, False, f"last needed {age} days ago > {max_days}")
    return GateResult(GATE_MAX_AGE, True, f"last needed {age} days ago <= {max_days}")


def evaluate(
    stats: RecallStats,
    signals: Signals,
    *,
    now: datetime,
    already_promoted: bool,
    judge: Judge,
    config: GateConfig | None = None,
) -> list[GateResult]:
    """Every gate, in GATE_ORDER, each with pass/fail and a human reason."""
    cfg = config or GateConfig()
    return [
        _provenance(stats),
        _junk(stats),
        _content(stats, judge),
        _already(already_promoted),
        _at_least(GATE_MIN_RECALLS, "recall count", stats.recall_count, cfg.min_recalls, "d"),
        _at_least(
            GATE_MIN_QUERIES, "distinct queries", len(stats.query_hashes), cfg.min_queries, "d"
        ),
        _max_age(stats, now, cfg.max_age_days),
        _at_least(GATE_MIN_SCORE, "score", signals.score, cfg.min_score, ".4f"),
    ]


def decide(
    stats: RecallStats,
    signals: Signals | None = None,
    *,
    now: datetime,
    judge: Judge,
    already_promoted: bool = False,
    config: GateConfig | None = None,
) -> Accepted[list[GateResult]] | Rejected:
    """Accepted(gate results) when every gate passes, else Rejected(first failing gate).

    ``Rejected.code`` is the first failing gate's name, ``Rejected.reason`` its reason;
    ``Rejected.detail`` holds ``gates`` (all results) and ``score``; ``signals`` are
    computed when not given.
    """
    sig = signals if signals is not None else compute_signals(stats, now)
    results = evaluate(
        stats, sig, now=now, already_promoted=already_promoted, judge=judge, config=config
    )
    for result in results:
        if not result.passed:
            return Rejected(result.name, result.reason, {"gates": results, "score": sig.score})
    return Accepted(results)


__all__ = [
    "GATE_ALREADY_PROMOTED",
    "GATE_CONTENT",
    "GATE_JUNK",
    "GATE_MAX_AGE",
    "GATE_MIN_QUERIES",
    "GATE_MIN_RECALLS",
    "GATE_MIN_SCORE",
    "GATE_ORDER",
    "GATE_PROVENANCE",
    "GateConfig",
    "GateResult",
    "age_days",
    "decide",
    "evaluate",
]
