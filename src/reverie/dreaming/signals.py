"""Deep-sleep scoring: six signals and a small bonus, in plain code (R-DREAM-4, SPEC section 8).

A memory graduates because it keeps being useful, not because it was written
confidently: every signal is computed from how the recall store saw the candidate
being retrieved, never from what the text claims. Pure: ``now`` is passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime

from ..recall.evidence import (
    MAX_CONCEPT_TAGS,
    MAX_QUERY_HASHES,
    MAX_RECALL_DAYS,
    MAX_SNIPPET_CHARS,
    MAX_TAG_CHARS,
    RecallStats,
    concept_tags,
)

# Weights of the weighted sum (R-DREAM-4); they add up to 1.
WEIGHTS: dict[str, float] = {
    "relevance": 0.30,
    "frequency": 0.24,
    "diversity": 0.15,
    "recency": 0.15,
    "recurrence": 0.10,
    "richness": 0.06,
}
RECENCY_HALF_LIFE_DAYS = 14.0
FREQUENCY_SATURATION = 10  # ln(1 + 10) / ln 11 == 1
DIVERSITY_SATURATION = 5
RECURRENCE_SPAN_DAYS = 7.0
RICHNESS_SATURATION = 6
LIGHT_BONUS_WEIGHT = 0.06
REM_BONUS_WEIGHT = 0.09
BONUS_HITS_SATURATION = 6  # ln(1 + 6) / ln 7 == 1


@dataclass(frozen=True)
class Signals:
    """The six signals (each in [0, 1]), the light/REM bonus and the final score."""

    relevance: float
    frequency: float
    diversity: float
    recency: float
    recurrence: float
    richness: float
    bonus: float
    score: float

    def weighted(self) -> dict[str, float]:
        """Each signal's contribution to the score, for "why was this (not) promoted"."""
        return {name: WEIGHTS[name] * getattr(self, name) for name in WEIGHTS}

    def as_dict(self) -> dict[str, float]:
        return {
            **{name: getattr(self, name) for name in WEIGHTS},
            "bonus": self.bonus,
            "score": self.score,
        }


def _unit(x: float) -> float:
    """``x`` clamped to [0, 1]; NaN counts as 0 so a corrupt store never promotes."""
    if math.isnan(x):
        return 0.0
    return min(1.0, max(0.0, x))


def _aware(dt: datetime) -> datetime:
    """Naive datetimes are taken as UTC so naive and aware values can be compared."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def days_between(earlier: datetime, later: datetime) -> float:
    """Days from ``earlier`` to ``later``, never negative (clock skew is not "the future")."""
    seconds = (_aware(later) - _aware(earlier)).total_seconds()
    return max(0.0, seconds / 86400.0)


def frequency(signals: int) -> float:
    return _unit(math.log1p(max(0, signals)) / math.log1p(FREQUENCY_SATURATION))


def relevance(total_score: float, signals: int) -> float:
    return _unit(total_score / signals) if signals > 0 else 0.0


def diversity(distinct_queries: int, distinct_days: int) -> float:
    return _unit(max(distinct_queries, distinct_days) / DIVERSITY_SATURATION)


def recency(age_days: float) -> float:
    return _unit(math.exp(-math.log(2) * max(0.0, age_days) / RECENCY_HALF_LIFE_DAYS))


def recurrence(days: frozenset[date]) -> float:
    """0.2 for a single day (or none); more days spread over a longer span score higher."""
    if len(days) <= 1:
        return 0.2
    span = (max(days) - min(days)).days
    return _unit(0.55 * math.log(len(days)) / math.log(5) + 0.45 * span / RECURRENCE_SPAN_DAYS)


def richness(tag_count: int) -> float:
    return _unit(tag_count / RICHNESS_SATURATION)


def hit_strength(hits: int) -> float:
    return _unit(math.log1p(max(0, hits)) / math.log1p(BONUS_HITS_SATURATION))


def compute_signals(stats: RecallStats, now: datetime) -> Signals:
    """Score one candidate with the SPEC section 8 formulas, clamped to [0, 1]."""
    n = stats.signal_count
    rec = recency(days_between(stats.last_recalled, now))
    parts = {
        "relevance": relevance(stats.total_score, n),
        "frequency": frequency(n),
        "diversity": diversity(len(stats.query_hashes), len(stats.recall_days)),
        "recency": rec,
        "recurrence": recurrence(stats.recall_days),
        "richness": richness(len(stats.concept_tags)),
    }
    bonus = (
        LIGHT_BONUS_WEIGHT * hit_strength(stats.light_hits) * rec
        + REM_BONUS_WEIGHT * hit_strength(stats.rem_hits) * rec
    )
    total = sum(WEIGHTS[name] * value for name, value in parts.items()) + bonus
    return Signals(**parts, bonus=bonus, score=_unit(total))


def promoted_importance(score: float) -> int:
    """The importance trailer of a promoted entry: clamp(round(score * 10), 3, 10)."""
    value = math.floor(_unit(score) * 10 + 0.5)  # half-up, as OpenClaw's Math.round
    return min(10, max(3, value))


__all__ = [
    "MAX_CONCEPT_TAGS",
    "MAX_QUERY_HASHES",
    "MAX_RECALL_DAYS",
    "MAX_SNIPPET_CHARS",
    "MAX_TAG_CHARS",
    "RECENCY_HALF_LIFE_DAYS",
    "WEIGHTS",
    "RecallStats",
    "Signals",
    "compute_signals",
    "concept_tags",
    "days_between",
    "promoted_importance",
]
