"""Hybrid ranking (R-RECALL-2..3): pure code, no I/O.

Score chain, in this order:
  vector lane cosine c; keyword lane BM25 rank r -> |r| / (1 + |r|) (SPEC section 8);
  each lane spread within the query (below); merge by chunk id;
  hybrid = w_vec * v + w_text * t;  relevance = hybrid x importance x project;
  min score on relevance; final = relevance x journal decay;
  exact path tiers (full path > basename > stem) sort above every content match;
  MMR re-rank inside each tier (reorders, never rescores); max results.

Why "spread": cosine ranges differ by embedder (multilingual-e5's sit in 0.7-0.9,
USE's in 0.0-0.7) and |r|/(1+|r|) squeezes every BM25 match into 0.75-0.9, so a raw
mix lets one lane drown the other and neither orders much. Each lane's score is half
its absolute value (so a weak best hit stays weak and the min score keeps a meaning)
and half the best value times the query's own min-max position (so each lane orders
its own hits across the whole range). Measured on the LoCoMo development split (see
bench/README.md): this raised hybrid session recall@5 from 0.846 to 0.903.

Why a lane that cannot see a chunk does not vote: the keyword lane cannot match a
Chinese note to an English question (no shared word is possible), so for a chunk
written only in scripts the query does not use, the hybrid is the vector score alone
instead of being halved by a lane that was blind to it: cross-lingual recall works.

Why the min score comes before decay: decay is for ordering. Applied before the
threshold, a 30-day half-life silently drops every relevant memory older than a few
months (LoCoMo decay-on recall@5 0.355 -> 0.426 with the threshold first).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from ..storage.index.rows import Candidate
from ..storage.projects import INVALID_PROJECT
from ..tokens import jaccard, scripts, token_set
from .triggers import bm25_normalise

LN2 = math.log(2)
TIER_NAMES = {3: "full path", 2: "basename", 1: "stem", 0: ""}


@dataclass(frozen=True)
class RankConfig:
    """Ranking settings for one search (weights, min score, decay, MMR)."""

    max_results: int = 6
    min_score: float = 0.35
    w_vec: float = 0.4
    w_text: float = 0.6
    half_life_days: float = 30.0
    decay_floor: float = 0.0  # the least decay can scale a hit by (settings: 0.8)
    mmr_lambda: float = 0.7
    mmr_same_file: float = 0.0  # how similar two journal hits of one file (day) count
    scaling: str = "spread"  # spread | minmax | raw (both lanes)
    min_before_decay: bool = True  # the min score judges relevance; decay only orders
    keyword_only: bool = False


@dataclass(frozen=True)
class Scored:
    """A candidate with every step of its score chain (what ``--explain`` prints)."""

    candidate: Candidate
    vector: float = 0.0
    text: float = 0.0
    hybrid: float = 0.0
    decay: float = 1.0
    importance_mult: float = 1.0
    project_mult: float = 1.0
    final: float = 0.0
    below_min: bool = False
    mmr_rank: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def tier(self) -> int:
        return self.candidate.path_tier

    @property
    def relevance(self) -> float:
        """Everything but decay: what the min score judges by default."""
        return self.hybrid * self.importance_mult * self.project_mult

    def explain(self) -> dict[str, object]:
        c = self.candidate
        return {
            "cosine": None if c.cosine is None else round(c.cosine, 4),
            "vector": round(self.vector, 4),
            "bm25_rank": None if c.bm25 is None else round(c.bm25, 4),
            "text": round(self.text, 4),
            "hybrid": round(self.hybrid, 4),
            "decay": round(self.decay, 4),
            "importance": c.importance,
            "importance_mult": round(self.importance_mult, 4),
            "project_mult": round(self.project_mult, 4),
            "path_tier": TIER_NAMES[c.path_tier] or None,
            "relevance": round(self.relevance, 4),
            "final": round(self.final, 4),
            "below_min_score": self.below_min,
            **({"found_by": "; ".join(self.notes)} if self.notes else {}),
        }


def decay_factor(day: date | None, today: date, half_life_days: float) -> float:
    """Journal decay from the file-name date; undated and curated files are evergreen."""
    if day is None:
        return 1.0
    age = max(0, (today - day).days)
    return math.exp(-LN2 * age / half_life_days)


def recency(day: date | None, today: date, half_life_days: float, floor: float) -> float:
    """The decay a journal hit gets: bounded below by ``floor``, so recency orders hits
    of comparable relevance (a changed fact beats its old value) but an old memory that
    is the only good match is never pushed under newer noise."""
    return floor + (1.0 - floor) * decay_factor(day, today, half_life_days)


def importance_multiplier(importance: int | None) -> float:
    if importance is None:
        return 1.0
    return 0.75 + 0.05 * min(10, max(1, importance))


def project_multiplier(projects: Sequence[str], active: frozenset[str]) -> float:
    """x1.15 when all the entry's keys are active, x0.9 when tagged elsewhere, else 1."""
    if not projects:
        return 1.0
    if INVALID_PROJECT not in projects and all(p in active for p in projects):
        return 1.15
    return 0.9


def spread(values: dict[int, float], how: str = "spread") -> dict[int, float]:
    """One lane's scores for one query: ``raw`` (clamped to 0..1), ``minmax`` (the
    query's own range), or ``spread``: half absolute, half the best value times the
    min-max position (see the module docstring)."""
    if not values:
        return {}
    absolute = {k: max(0.0, min(1.0, v)) for k, v in values.items()}
    if how == "raw":
        return absolute
    lo, hi = min(values.values()), max(values.values())
    width = hi - lo
    position = {k: ((v - lo) / width if width > 1e-9 else 1.0) for k, v in values.items()}
    if how == "minmax":
        return position
    top = max(absolute.values())
    return {k: 0.5 * absolute[k] + 0.5 * top * position[k] for k in values}


def keyword_blind(asked: frozenset[str], text: str) -> bool:
    """The keyword lane could not have matched ``text`` for a question written in the
    scripts ``asked``: they share no script."""
    return bool(asked) and not (asked & scripts(text))


def score(
    candidates: Iterable[Candidate],
    cfg: RankConfig,
    *,
    today: date,
    active_projects: frozenset[str] = frozenset(),
    asked: frozenset[str] = frozenset(),
) -> list[Scored]:
    """Every candidate scored (unsorted); ``asked``: the scripts the question is
    written in."""
    cands = list(candidates)
    if cfg.scaling == "relative":
        # cosine as it is; BM25 relative to the query's best, which keeps its absolute
        # strength (a best match on a common word stays weak)
        vecs = {c.chunk_id: max(0.0, c.cosine) for c in cands if c.cosine is not None}
        best = max((abs(c.bm25) for c in cands if c.bm25 is not None), default=0.0)
        top = bm25_normalise(best)
        texts = {
            c.chunk_id: top * abs(c.bm25) / best for c in cands if c.bm25 is not None and best > 0
        }
    else:
        vecs = spread({c.chunk_id: c.cosine for c in cands if c.cosine is not None}, cfg.scaling)
        texts = spread(
            {c.chunk_id: bm25_normalise(c.bm25) for c in cands if c.bm25 is not None}, cfg.scaling
        )
    w_vec, w_text = (0.0, 1.0) if cfg.keyword_only else (cfg.w_vec, cfg.w_text)
    out = []
    for c in cands:
        v = vecs.get(c.chunk_id, 0.0)
        t = texts.get(c.chunk_id, 0.0)
        if c.bm25 is None and w_vec > 0 and keyword_blind(asked, c.text):
            hybrid = v  # the keyword lane was blind to this chunk: it does not vote
        else:
            hybrid = w_vec * v + w_text * t
        d = (
            recency(c.day, today, cfg.half_life_days, cfg.decay_floor)
            if c.kind in ("journal", "transcript")
            else 1.0
        )
        im = importance_multiplier(c.importance)
        pm = project_multiplier(c.projects, active_projects)
        final = hybrid * d * im * pm
        out.append(Scored(c, v, t, hybrid, d, im, pm, final))
    return out


def relevance(s: Scored, cfg: RankConfig) -> float:
    """What the min score judges: everything but decay (unless configured otherwise)."""
    return s.relevance if cfg.min_before_decay else s.final


def _order(s: Scored) -> tuple[float, str, int, int]:
    """Best first; ties broken by location, never by chunk id (a rebuilt index assigns
    other ids and must rank exactly the same)."""
    c = s.candidate
    return (-s.final, c.path, c.start_line, c.end_line)


def _dated(s: Scored) -> str | None:
    """The file of a journal or transcript hit (one day, one session), else None."""
    c = s.candidate
    return c.path if c.kind in ("journal", "transcript") else None


def _mmr(items: list[Scored], lam: float, k: int, same_file: float = 0.0) -> list[Scored]:
    """Maximal marginal relevance: reorder to avoid near-duplicates; scores unchanged.
    Two journal or transcript hits of one file count as at least ``same_file`` similar
    (a day already shown: the next results reach other days and sessions). Stops once
    ``k`` are chosen (nobody sees the rest)."""
    if k <= 0:
        return []
    if len(items) <= 2:
        return sorted(items, key=_order)[:k]
    sets = {s.candidate.chunk_id: token_set(s.candidate.text) for s in items}
    # (item, its tokens, its file when a journal or transcript), read once per item
    remaining = [(s, sets[s.candidate.chunk_id], _dated(s)) for s in sorted(items, key=_order)]

    Item = tuple[Scored, frozenset[str], str | None]

    def similar(a: Item, b: Item) -> float:
        sim = jaccard(a[1], b[1])
        return max(sim, same_file) if a[2] is not None and a[2] == b[2] else sim

    first = remaining.pop(0)
    chosen: list[Scored] = [first[0]]
    # each candidate's highest similarity to what was chosen so far, updated with the
    # newest choice only: O(k x n) instead of O(k^2 x n), the same order
    sim = [similar(s, first) for s in remaining]
    while remaining and len(chosen) < k:
        best_i, best_v = 0, -math.inf
        for i, s in enumerate(remaining):
            value = lam * s[0].final - (1 - lam) * sim[i]
            if value > best_v:
                best_i, best_v = i, value
        picked = remaining.pop(best_i)
        sim.pop(best_i)
        chosen.append(picked[0])
        sim = [max(m, similar(s, picked)) for m, s in zip(sim, remaining, strict=True)]
    return chosen


def rank(
    candidates: Iterable[Candidate],
    cfg: RankConfig,
    *,
    today: date,
    active_projects: frozenset[str] = frozenset(),
    asked: frozenset[str] = frozenset(),
    pool: int = 0,
) -> list[Scored]:
    """The final result list (at most ``cfg.max_results``), then, up to ``pool`` hits
    in all, the next passing hits by score (no diversity re-rank: a cheap look past the
    cut, for supersession)."""
    scored = score(candidates, cfg, today=today, active_projects=active_projects, asked=asked)
    return rank_scored(scored, cfg, pool=pool)


def rank_scored(scored: Sequence[Scored], cfg: RankConfig, *, pool: int = 0) -> list[Scored]:
    """:func:`rank` of candidates already scored (a search that scored them more than
    once, per question part, keeps each one's best)."""
    tiered = [s for s in scored if s.tier > 0]
    content = [s for s in scored if s.tier == 0]
    passing = [s for s in content if relevance(s, cfg) >= cfg.min_score]
    if not passing and not tiered:
        # nothing passes: keyword hits under the min score, flagged as such
        passing = [replace(s, below_min=True) for s in content if s.candidate.bm25 is not None]
    result: list[Scored] = []
    for tier in (3, 2, 1):
        group = [s for s in tiered if s.tier == tier]
        result.extend(_mmr(group, cfg.mmr_lambda, cfg.max_results - len(result)))
    left = cfg.max_results - len(result)
    result.extend(_mmr(passing, cfg.mmr_lambda, left, cfg.mmr_same_file))
    result = result[: cfg.max_results]
    if pool > len(result):
        chosen = {s.candidate.chunk_id for s in result}
        rest = sorted((s for s in passing if s.candidate.chunk_id not in chosen), key=_order)
        result.extend(rest[: pool - len(result)])
    return [_at_rank(s, i + 1) for i, s in enumerate(result)]


def _at_rank(s: Scored, rank: int) -> Scored:
    """``replace(s, mmr_rank=rank)`` without reading the dataclass's fields anew (a
    search ranks ~24): the same values, a new object."""
    out = object.__new__(Scored)
    out.__dict__.update(s.__dict__, mmr_rank=rank)
    return out


__all__ = [
    "Candidate",
    "RankConfig",
    "Scored",
    "bm25_normalise",
    "decay_factor",
    "importance_multiplier",
    "keyword_blind",
    "project_multiplier",
    "rank",
    "rank_scored",
    "recency",
    "relevance",
    "score",
    "spread",
]
