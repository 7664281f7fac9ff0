"""What the model reads: evidence inside the snippets of a token budget, for the engine
and for a naive baseline a user could write in an afternoon.

- **Agent's view** (ours): ask ``Reverie.search`` with default settings (decay on, the
  clock at the last session) and a ``budget_tokens`` budget; read the hits' framed
  snippets in rank order; an evidence turn counts as read when its whole line is inside
  one of them.
- **Naive baseline**: every turn line on its own (no chunking, no decay), scored
  ``0.7 x cosine + 0.3 x BM25`` (BM25 by ``bm25s``, normalised by the query's best,
  cosine from the same embedder, tokens by the engine's own tokenizer so Chinese works),
  lines read in score order until the budget is spent.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import bm25s
import numpy as np

from reverie.engine import Reverie
from reverie.tokens import count_tokens, segment

BUDGET = 2000


def norm(text: str) -> str:
    return " ".join(text.split())


def read_within(texts: Sequence[str], budget: int) -> str:
    """The texts a model reads in order, whole, while they fit in ``budget`` tokens."""
    out, used = [], 0
    for t in texts:
        cost = count_tokens(t)
        if used + cost > budget:
            break
        out.append(t)
        used += cost
    return "\n".join(norm(t) for t in out)


def found(read: str, turn_lines: Sequence[str]) -> float:
    """Share of evidence turns whose whole line (without the list dash) was read."""
    if not turn_lines:
        return 0.0
    return sum(1 for t in turn_lines if norm(t.removeprefix("- ")) in read) / len(turn_lines)


def agent_view(engine: Reverie, question: str, turn_lines: Sequence[str], budget: int) -> float:
    """Evidence read with the engine's defaults (decay on) within ``budget`` tokens."""
    if "budget_tokens" in inspect.signature(engine.search).parameters:
        resp = engine.search(question, budget_tokens=budget, record=False)  # type: ignore[call-arg]
    else:  # before the budget existed: the default call, snippets cut at the budget
        resp = engine.search(question, record=False)
    return found(read_within([h.framed for h in resp.hits], budget), turn_lines)


class NaiveBaseline:
    """Plain BM25 + cosine (0.7 / 0.3) over single turn lines."""

    def __init__(self, lines: Sequence[str], embedder: Any, vectors: Any = None) -> None:
        """``vectors``: the lines' embeddings when the caller has them (computed once
        and cached); else the embedder embeds the lines here."""
        self.lines = list(lines)
        self.embedder = embedder
        self.bm25 = bm25s.BM25()
        self.bm25.index([self._tokens(t) for t in self.lines], show_progress=False)
        if vectors is None and embedder is not None:
            vectors = embedder.embed_documents(self.lines)
        if vectors is not None:
            vecs = np.asarray(vectors, dtype=np.float32)
            self.vectors: np.ndarray | None = vecs / np.maximum(
                np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9
            )
        else:
            self.vectors = None

    @staticmethod
    def _tokens(text: str) -> list[str]:
        return segment(text).lower().split() or ["_"]

    def ranked(self, question: str) -> list[str]:
        return [self.lines[i] for i in self.order(question)]

    def order(self, question: str) -> list[int]:
        """Indices of the best 200 lines, best first."""
        q = self._tokens(question)
        text = np.asarray(self.bm25.get_scores(q), dtype=np.float32)
        best = float(text.max()) if text.size else 0.0
        text = text / best if best > 0 else text
        score = 0.3 * text
        if self.vectors is not None:
            qv = np.asarray(self.embedder.embed_query(question), dtype=np.float32)
            qv = qv / max(float(np.linalg.norm(qv)), 1e-9)
            score = score + 0.7 * (self.vectors @ qv)
        return [int(i) for i in np.argsort(-score, kind="stable")[:200]]

    def view(self, question: str, turn_lines: Sequence[str], budget: int) -> float:
        return found(read_within(self.ranked(question), budget), turn_lines)


__all__ = ["BUDGET", "NaiveBaseline", "agent_view", "found", "read_within"]
