"""Light sleep and REM (R-DREAM-2, R-DREAM-3): pure code over recall statistics.

Neither phase ever writes MEMORY.md; a failure here cannot hurt long-term memory.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..provenance.origin import is_promotable
from ..tokens import jaccard, token_set
from .content import Judge
from .junk import junk_reason
from .memory_file import clean_snippet
from .phrases import phrases
from .signals import RecallStats, _aware

DEDUP_SIMILARITY = 0.88
LIGHT_LOOKBACK_DAYS = 2
LIGHT_MAX_CANDIDATES = 100
REM_LOOKBACK_DAYS = 7
REM_MAX_THEMES = 10
REM_MIN_STRENGTH = 0.75


@dataclass(frozen=True)
class Dropped:
    """A candidate light sleep dropped, with the reason."""

    key: str
    reason: str


@dataclass(frozen=True)
class LightResult:
    """What light sleep staged and what it dropped."""

    staged: tuple[RecallStats, ...]
    dropped: tuple[Dropped, ...]


def _merge(keep: RecallStats, other: RecallStats) -> RecallStats:
    return replace(
        keep,
        recall_count=keep.recall_count + other.recall_count,
        total_score=keep.total_score + other.total_score,
        max_score=max(keep.max_score, other.max_score),
        query_hashes=frozenset(list(keep.query_hashes | other.query_hashes)[:32]),
        recall_days=keep.recall_days | other.recall_days,
        first_recalled=min(_aware(keep.first_recalled), _aware(other.first_recalled)),
        last_recalled=max(_aware(keep.last_recalled), _aware(other.last_recalled)),
    )


def light(
    stats: Sequence[RecallStats],
    *,
    now: datetime,
    lookback_days: int = LIGHT_LOOKBACK_DAYS,
    max_candidates: int = LIGHT_MAX_CANDIDATES,
    judge: Judge,
    promoted: Callable[[RecallStats], bool] = lambda s: False,
) -> LightResult:
    """Stage candidates recalled in the last ``lookback_days`` (SPEC section 8: 2):
    junk, chatter (``judge``: :mod:`.content`; of a line provenance lets through, so that
    a line it refuses is refused by its provenance) and already-promoted lines out, near-duplicates
    (>= 0.88) merged into the most recalled copy of the same provenance, at most
    ``max_candidates`` that could be promoted. A line's counts cover its whole
    history, so a fact needed again today is staged however old its journal is."""
    dropped: list[Dropped] = []
    fresh: list[RecallStats] = []
    horizon = _aware(now) - timedelta(days=lookback_days)
    for s in stats:
        if _aware(s.last_recalled) < horizon:
            dropped.append(Dropped(s.key, f"not recalled in the last {lookback_days} days"))
            continue
        reason = junk_reason(s.snippet)
        if reason:
            dropped.append(Dropped(s.key, f"junk: {reason}"))
            continue
        verdict = judge(clean_snippet(s.snippet)) if _promotable(s) else None
        if verdict is not None and not verdict.durable:  # (provenance refuses the others
            dropped.append(Dropped(s.key, f"content: {verdict.reason}"))  # first, by name)
            continue
        if promoted(s):
            dropped.append(Dropped(s.key, "already promoted to MEMORY.md"))
            continue
        fresh.append(s)
    fresh.sort(key=lambda s: (-s.recall_count, -s.total_score, s.key))
    kept: list[RecallStats] = []
    sets: list[frozenset[str]] = []
    for s in fresh:
        toks = token_set(s.snippet)
        for i, k in enumerate(kept):
            same_trust = (k.origin, k.session_kind) == (s.origin, s.session_kind)
            if same_trust and jaccard(toks, sets[i]) >= DEDUP_SIMILARITY:
                kept[i] = _merge(k, s)
                dropped.append(Dropped(s.key, f"near-duplicate of {k.key}"))
                break
        else:
            kept.append(s)
            sets.append(toks)
    # the cap counts only candidates that could ever be promoted, so farmed poison can
    # never crowd an owner's fact out; the others stay for the record and are rejected
    # by the provenance gate before anything else (and before any prompt is built)
    eligible = [s for s in kept if _promotable(s)]
    ineligible = [s for s in kept if not _promotable(s)]
    for s in eligible[max_candidates:]:
        dropped.append(Dropped(s.key, f"over the {max_candidates}-candidate limit"))
    return LightResult(tuple(eligible[:max_candidates] + ineligible), tuple(dropped))


def _promotable(s: RecallStats) -> bool:
    return s.origin is not None and is_promotable(s.origin, s.session_kind)


@dataclass(frozen=True)
class Theme:
    """A recurring REM theme: a phrase shared by several recent traces."""

    tag: str
    keys: tuple[str, ...]
    days: int
    strength: float
    example: str


def theme_strength(count: int) -> float:
    """ln(1 + n) / ln 5, capped at 1: three notes sharing a concept reach 0.86."""
    return min(1.0, math.log(1 + count) / math.log(5))


def rem_themes(
    stats: Sequence[RecallStats],
    *,
    now: datetime,
    lookback_days: int = REM_LOOKBACK_DAYS,
    max_themes: int = REM_MAX_THEMES,
    min_strength: float = REM_MIN_STRENGTH,
) -> list[Theme]:
    """Multi-word concepts (phrases of adjacent content words) shared by several
    recent candidates, strongest first; a phrase is dropped for a longer one shared by
    the same traces. A single word says nothing to a reader and is never a theme."""
    horizon = _aware(now) - timedelta(days=lookback_days)
    by_tag: dict[str, list[RecallStats]] = defaultdict(list)
    for s in stats:
        if _aware(s.last_recalled) < horizon:
            continue
        for tag in phrases(s.snippet):
            by_tag[tag].append(s)
    groups = {tag: frozenset(m.key for m in members) for tag, members in by_tag.items()}
    themes = []
    for tag, members in by_tag.items():
        if any(tag != o and tag in o and groups[o] == groups[tag] for o in groups):
            continue
        strength = theme_strength(len(members))
        if strength < min_strength:
            continue
        days = len({d for m in members for d in m.recall_days})
        example = max(members, key=lambda m: m.recall_count).snippet
        themes.append(
            Theme(tag, tuple(sorted(m.key for m in members)), days, round(strength, 3), example)
        )
    themes.sort(key=lambda t: (-t.strength, -len(t.keys), t.tag))
    return themes[:max_themes]


def reflect(themes: Sequence[Theme]) -> list[str]:
    """Deterministic reflections (used when no model is configured)."""
    return [
        f"Recurring theme '{t.tag}': {len(t.keys)} notes over {t.days} day(s), e.g. “{t.example[:160]}”"
        for t in themes
    ]


__all__ = ["Dropped", "LightResult", "Theme", "light", "reflect", "rem_themes", "theme_strength"]
