"""Helpers shared by the benchmarks: percentiles, `--set` parsing, and engine hooks.

The hooks change only what the benchmark needs to vary (the vector-score scaling and
the stored vector floor) from outside ``src/``, so a measured configuration can be
handed to the lead as a precise diff of defaults.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from reverie import ranking
from reverie import search as rsearch
from reverie.embedders.base import EmbedderIdentity
from reverie.engine import Reverie
from reverie.index.db import set_meta, transaction
from reverie.ranking import RankConfig, Scored


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); exact for the sample, no interpolation."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``["name=value", ...]`` -> settings overrides for ``Reverie.open(**overrides)``."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"--set wants name=value, got {item!r}")
        out[name.strip()] = value.strip()
    return out


class MemoQueryEmbedder:
    """Wraps an embedder so each distinct query is embedded once per process.

    The benchmark asks the same question under several lane/decay configurations;
    without this the query embedding would be paid six times and dominate run time.
    Documents pass straight through.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity: EmbedderIdentity = inner.identity
        self._memo: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._memo.get(text)
        if vec is None:
            vec = np.asarray(self.inner.embed_query(text))
            self._memo[text] = vec
        return vec


def set_vector_scaling(engine: Reverie, scaling: str | None) -> None:
    """Make the engine's searcher build its RankConfig with ``vector_scaling``."""
    if not scaling:
        return
    searcher = engine.searcher
    original = searcher.config

    def config(*, keyword_only: bool, floor: float, max_results: int | None) -> RankConfig:
        return replace(
            original(keyword_only=keyword_only, floor=floor, max_results=max_results),
            vector_scaling=scaling,
        )

    searcher.config = config  # type: ignore[method-assign]


def set_vector_floor(engine: Reverie, floor: str | None) -> None:
    """Override the vector floor: a number is written into the (benchmark's own) index
    meta; ``query-median`` uses, per query, the median cosine of the query against
    every stored vector (needs ``engine.warm()``): the query's own noise floor."""
    if floor is None:
        return
    if floor != "query-median":
        with transaction(engine.conn):
            set_meta(engine.conn, "vector_floor", float(floor))
        return
    searcher = engine.searcher
    embedder = engine.embedder
    search, config = searcher.search, searcher.config
    current: dict[str, float] = {}

    def search_hook(conn: Any, query: str, **kw: Any) -> Any:
        matrix = searcher.vectors._matrix
        if embedder is not None and matrix is not None and len(matrix):
            current["floor"] = float(np.median(matrix @ embedder.embed_query(query)))
        return search(conn, query, **kw)

    def config_hook(*, keyword_only: bool, floor: float, max_results: int | None) -> RankConfig:
        return config(
            keyword_only=keyword_only, floor=current.get("floor", floor), max_results=max_results
        )

    searcher.search = search_hook  # type: ignore[method-assign]
    searcher.config = config_hook  # type: ignore[method-assign]


def rank_min_before_decay(
    candidates: Any, cfg: RankConfig, *, today: Any, active_projects: frozenset[str] = frozenset()
) -> list[Scored]:
    """Variant of :func:`reverie.ranking.rank`: the min score judges relevance before
    journal decay (hybrid x importance x project), and decay only orders what passed,
    so an old but relevant journal line is ranked lower instead of dropped."""
    scored = ranking.score(candidates, cfg, today=today, active_projects=active_projects)
    tiered = [s for s in scored if s.tier > 0]
    content = [s for s in scored if s.tier == 0]
    passing = [s for s in content if s.hybrid * s.importance_mult * s.project_mult >= cfg.min_score]
    if not passing and not tiered:
        passing = [replace(s, below_min=True) for s in content if s.candidate.bm25 is not None]
    result: list[Scored] = []
    for tier in (3, 2, 1):
        result.extend(ranking._mmr([s for s in tiered if s.tier == tier], cfg.mmr_lambda))
    result.extend(ranking._mmr(passing, cfg.mmr_lambda))
    return [replace(s, mmr_rank=i + 1) for i, s in enumerate(result[: cfg.max_results])]


def text_scores_spread(bm25: dict[int, float]) -> dict[int, float]:
    """Keyword score with the same shape as the calibrated vector score: half the
    saturating |r|/(1+|r|), half the top value times the query's own min-max spread.
    |r|/(1+|r|) alone squeezes ranks -3..-8 into 0.75..0.89, so the keyword lane
    barely orders anything once it is mixed with the vector lane."""
    if not bm25:
        return {}
    sat = {k: ranking.bm25_normalise(v) for k, v in bm25.items()}
    lo, hi = min(sat.values()), max(sat.values())
    top = hi
    spread = hi - lo
    return {
        k: 0.5 * v + 0.5 * top * ((v - lo) / spread if spread > 1e-9 else 1.0)
        for k, v in sat.items()
    }


_original_score = ranking.score


def score_text_spread(
    candidates: Any, cfg: RankConfig, *, today: Any, active_projects: frozenset[str] = frozenset()
) -> list[Scored]:
    """:func:`reverie.ranking.score` with :func:`text_scores_spread` for the keyword lane."""
    cands = list(candidates)
    scored = _original_score(cands, cfg, today=today, active_projects=active_projects)
    texts = text_scores_spread({c.chunk_id: c.bm25 for c in cands if c.bm25 is not None})
    w_vec, w_text = (0.0, 1.0) if cfg.keyword_only else (cfg.w_vec, cfg.w_text)
    out = []
    for s in scored:
        t = texts.get(s.candidate.chunk_id, 0.0)
        hybrid = w_vec * s.vector + w_text * t
        final = hybrid * s.decay * s.importance_mult * s.project_mult
        out.append(replace(s, text=t, hybrid=hybrid, final=final))
    return out


def use_text_spread(on: bool) -> None:
    """Swap :func:`reverie.ranking.score` for :func:`score_text_spread`."""
    if on:
        ranking.score = score_text_spread  # type: ignore[assignment]


def use_min_before_decay(on: bool) -> None:
    """Swap the ranking used by :mod:`reverie.search` for :func:`rank_min_before_decay`."""
    if on:
        rsearch.rank = rank_min_before_decay  # type: ignore[assignment]


__all__ = [
    "MemoQueryEmbedder",
    "parse_sets",
    "percentile",
    "set_vector_floor",
    "set_vector_scaling",
    "use_min_before_decay",
    "use_text_spread",
]
