"""The BM25 lane's scores, worked in place and from one phrase without an accumulator,
are the doubles of the plain formula (fts5Bm25Function's order), with removed docs
and more than one segment too."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie.storage.index.bm25 import IDF_FLOOR, K1, B, Bm25Index, Doc, query_phrases

WORDS = ["alpha", "beta", "gamma", "delta", "kafka", "broker", "port", "été", "naïve"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)


def _plain(ix: Bm25Index, phrases: list[tuple[str, ...]]) -> dict[int, float]:
    """doc number -> score by the formula written out, postings masked by hand."""
    n_rows = float(len(ix))
    avgdl = ix._total / n_rows
    acc: dict[int, float] = {}
    for phrase in phrases:
        docs, tf = ix._phrase(phrase)
        live = ix._alive[docs]
        docs, tf = docs[live], tf[live]
        if not len(docs):
            continue
        n_hit = float(len(docs))
        idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
        idf = IDF_FLOOR if idf <= 0.0 else idf
        s = idf * (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * ix._len[docs] / avgdl))
        for d, v in zip(docs.tolist(), s.tolist(), strict=True):
            acc[d] = acc.get(d, 0.0) + v
    return dict(sorted(acc.items()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(text, min_size=1, max_size=20),
    st.lists(text, max_size=8),
    st.sets(st.integers(0, 19), max_size=8),
    st.lists(text, min_size=1, max_size=5),
)
def test_scores_are_the_plain_formulas_doubles(
    first: list[str], later: list[str], gone: set[int], queries: list[str]
) -> None:
    ix = Bm25Index()
    ix.add(Doc(i, str(i), t, ("a.md", i, 0)) for i, t in enumerate(first))
    ix.add(Doc(100 + i, str(i), t, ("b.md", i, 0)) for i, t in enumerate(later))  # a segment
    ix.remove(gone)
    for q in queries:
        phrases = list(query_phrases(q))
        nums, got = ix.scores(phrases) if len(ix) else (np.zeros(0), np.zeros(0))
        want = _plain(ix, phrases) if len(ix) else {}
        assert nums.tolist() == list(want)
        assert got.tolist() == list(want.values())  # the same doubles, not close ones
