"""An optional reranking stage: a ``/rerank`` endpoint of the kind local model servers
offer (llama.cpp, vLLM, LocalAI, Jina, Cohere: query + documents -> scores), applied to
the top candidates under a hard deadline. Off by default (``rerank_url`` empty).

Fail-open: a slow, unreachable or broken reranker leaves the hybrid order exactly as it
was and says why (R-RECALL-4's spirit for an optional stage: memory gets dumber, never
mute). The deadline is enforced by the caller (a worker thread it stops waiting for),
not by trusting the server or the HTTP client's per-phase timeouts.

Wire format sent: ``{"model", "query", "documents": [str], "top_n"}``; replies read:
``{"results": [{"index", "relevance_score" | "score"}]}`` or a bare list of
``{"index", "score"}`` (text-embeddings-inference).
"""

from __future__ import annotations

import concurrent.futures
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="rerank")


@dataclass(frozen=True)
class Reranked:
    """Scores by document index, or None with the reason the hybrid order was kept."""

    scores: dict[int, float] | None
    note: str


class Reranker:
    """One configured ``/rerank`` endpoint."""

    def __init__(self, url: str, *, model: str = "", api_key: str = "", timeout: float = 2.0):
        self.url = url
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        import httpx  # loaded with the first reranker: not on every one-shot command

        self._client: httpx.Client = httpx.Client()

    def _post(self, query: str, documents: Sequence[str]) -> dict[int, float]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body: dict[str, Any] = {"query": query, "documents": list(documents)}
        body["top_n"] = len(documents)
        if self.model:
            body["model"] = self.model
        response = self._client.post(self.url, json=body, headers=headers, timeout=self.timeout)
        response.raise_for_status()
        return parse_scores(response.json(), len(documents))

    def rerank(self, query: str, documents: Sequence[str]) -> Reranked:
        if not documents:
            return Reranked({}, "nothing to rerank")
        import httpx

        future = _POOL.submit(self._post, query, documents)
        try:
            return Reranked(future.result(timeout=self.timeout), f"reranked by {self.url}")
        except concurrent.futures.TimeoutError:
            future.cancel()
            return Reranked(
                None, f"reranker gave no answer within {self.timeout:g} s; hybrid order kept"
            )
        except (httpx.HTTPError, ValueError) as exc:
            what = (
                f"HTTP {exc.response.status_code}"
                if isinstance(exc, httpx.HTTPStatusError)
                else str(exc)
            )
            return Reranked(None, f"reranker failed ({what[:200]}); hybrid order kept")


def parse_scores(data: Any, n: int) -> dict[int, float]:
    """Document index -> score from either reply shape; ValueError when malformed."""
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("reply has no results list")
    out: dict[int, float] = {}
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("a result is not an object")
        index = item.get("index")
        score = item.get("relevance_score", item.get("score"))
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < n
            or not isinstance(score, int | float)
            or isinstance(score, bool)
            or not math.isfinite(score)
        ):
            raise ValueError(f"malformed result {str(item)[:80]}")
        out[index] = float(score)
    if not out:
        raise ValueError("reply scored no document")
    return out


def reorder(order: Sequence[int], scores: dict[int, float]) -> list[int]:
    """``order`` (positions) with the scored ones sorted by score, best first; ties and
    unscored positions keep their hybrid order, after the scored ones."""
    scored = sorted((i for i in order if i in scores), key=lambda i: (-scores[i], order.index(i)))
    return scored + [i for i in order if i not in scores]


__all__ = ["Reranked", "Reranker", "parse_scores", "reorder"]
