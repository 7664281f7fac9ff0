"""Versions and version links among a search's hits, read from the index: the hits'
own vectors and what the durable-line classifier reads in them
(:mod:`reverie.recall.versions`), and the newer lines the files link to
the hits, link by link (:mod:`reverie.recall.chains`), each scored as the question's
vector lane scores it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..durable.model import keep
from ..durable.weights import load_model
from ..provenance.links import line_key
from ..provenance.paths import in_group_corpus
from ..storage.index.port import IndexReader
from ..storage.index.rows import LaneScores
from .asof import TimeAsk
from .chains import DEPTH, Link, follow
from .question import Question
from .ranking import Scored
from .versions import Version, order

if TYPE_CHECKING:
    import numpy as np
else:
    from ..storage.lazy import numpy as np

SUPERSEDE_POOL = 24  # the ranked hits versions are looked for in (a newer one may move up)


def versions_of(
    ix: IndexReader, ranked: list[Scored], q: Question
) -> tuple[list[Scored], dict[int, Version]]:
    """The best hit's versions in the order the question's time wants
    (:mod:`reverie.recall.versions`), told by the hits' own stored vectors."""
    dated = [r for r in ranked[:SUPERSEDE_POOL] if r.candidate.day is not None]
    vectors = ix.vectors([r.candidate.chunk_id for r in dated]) if len(dated) > 1 else {}
    said = statements(ix, [r for r in dated if r.candidate.chunk_id in vectors], vectors)
    return order(
        ranked, q.ask, q.subject.terms, vectors=vectors, window=SUPERSEDE_POOL, statements=said
    )


def statements(
    ix: IndexReader, hits: list[Scored], vectors: dict[int, Any]
) -> dict[int, float] | None:
    """Each hit's keep probability by the durable-line classifier, read from its stored
    vector (nothing is embedded); None when the index's vectors are not the embedder's
    the classifier was fitted on, or its weights cannot be read: versions then group as
    if every line stated something."""
    if not hits:
        return {}
    try:
        model = load_model()
    except Exception:  # a broken package never blocks a search
        return None
    if ix.meta("embedder") != model.embedder:
        return None
    rows = np.stack([np.asarray(vectors[h.candidate.chunk_id], dtype=np.float32) for h in hits])
    p = keep(model, [h.candidate.text for h in hits], rows)
    return {h.candidate.chunk_id: v for h, v in zip(hits, p, strict=True)}


def chains_of(
    ix: IndexReader,
    ranked: list[Scored],
    ask: TimeAsk,
    rank: Callable[[list[Any]], list[Scored]],
    qvec: Any,
) -> tuple[list[Scored], dict[int, Link]]:
    """The newer versions the files link to the hits (:mod:`reverie.recall.chains`),
    followed link by link, each scored as the question's lanes would score it."""
    known = {r.candidate.chunk_id: r for r in ranked}
    todo = [r for r in ranked[:SUPERSEDE_POOL] if r.candidate.kind in ("journal", "transcript")]
    if todo and not ix.has_links():  # no link anywhere: no line's key is worth hashing
        return ranked, {}
    newer: dict[int, list[Scored]] = {}
    for _ in range(DEPTH):
        keys = {line_key(r.candidate.path, line): r.candidate.chunk_id
                for r in todo for line in r.candidate.text.split("\n") if line.strip()}  # fmt: skip
        found = ix.replacing(keys) if keys else {}
        fresh = [i for ids in found.values() for i in ids if i not in known]
        if fresh:
            more = ix.vectors(fresh) if qvec is not None else {}
            known.update(
                (s.candidate.chunk_id, s) for s in _by_question(ix, fresh, more, qvec, rank)
            )
        todo = []
        for key, ids in found.items():
            for i in ids:
                if i in known:
                    newer.setdefault(keys[key], []).append(known[i])
                    todo += [known[i]] if i in fresh else []
        if not todo:
            break
    if not newer:
        return ranked, {}
    return follow(ranked, newer, ask)


def _by_question(
    ix: IndexReader,
    ids: list[int],
    vecs: dict[int, Any],
    qvec: Any,
    rank: Callable[[list[Any]], list[Scored]],
) -> list[Scored]:
    """The chunks ``ids`` scored as the question's vector lane scores them (cosine of
    their stored vectors ``vecs``; none: no vector score)."""
    cos: dict[int, float] = {}
    if qvec is not None:
        q = qvec / (float(qvec @ qvec) ** 0.5 or 1.0)
        cos = {i: float(v @ q) / (float(v @ v) ** 0.5 or 1.0) for i, v in vecs.items()}
    found = ix.candidates(ids, LaneScores(cos, {}, {}))
    return rank([c for c in found if not in_group_corpus(c.path)])


__all__ = ["SUPERSEDE_POOL", "chains_of", "statements", "versions_of"]
