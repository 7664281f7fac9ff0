"""Batch embedding for a sync (SPEC 2.3 step 6): cache first, batches, retries, breaker.

The indexer hands over every chunk text of a sync and gets back one vector or None
per text. None means "not this time": the chunk is indexed keyword-only and a later
sync fills the vector in (R-RECALL-4). The pipeline never raises for a provider
failure; it reports it in :class:`EmbedOutcome`, and ``fatal`` carries a
non-transient error (bad key, wrong URL) that the caller should surface, because a
provider that is explicitly configured but unusable is an error, not a downgrade.

Algorithm
---------
1. Identical texts are embedded once.
2. The cache (keyed by embedder identity and sha256 of the text) is asked first.
3. The rest is cut, in order, into batches of at most ``batch_tokens`` tokens and
   ``max_batch_texts`` texts; a text over the budget travels alone.
4. A batch gets ``attempts`` tries with jittered exponential backoff in between
   (``backoff_min`` .. ``backoff_max`` seconds, via the injected ``sleep``).
5. A batch that still fails is split in half and each half gets its own tries, down
   to single texts, so one text the provider always rejects costs only that text.
6. Circuit breaker: a non-transient error opens it at once. Otherwise it counts
   consecutive *failures*, where a failure is a single-text batch that failed, or a
   split whose two halves both failed (a split with one good half points at a bad
   text, not at the provider). Any successful call resets the count. When the count
   reaches ``breaker_failures`` the breaker opens and no further calls are made.
   With the defaults a dead provider costs at most two failures' worth of calls
   (e.g. 3 batches x 3 attempts for each failing split).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...errors import ProviderError
from ...tokens import count_tokens
from .base import Embedder, EmbedderIdentity, EmbeddingCache, normalise, text_hash

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use


@dataclass
class EmbedOutcome:
    """What one ``embed_documents`` run achieved.

    ``vectors`` lines up with the input texts. ``computed``, ``cached`` and ``failed``
    count *distinct* texts, so they add up to the number of distinct inputs.
    """

    vectors: list[np.ndarray | None]
    computed: int = 0
    cached: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    breaker_open: bool = False
    fatal: ProviderError | None = None  # a non-transient error the caller should report

    @property
    def complete(self) -> bool:
        return self.failed == 0


class _Run:
    """State of one ``embed_documents`` call (breaker, counters, results by hash)."""

    def __init__(self, pipeline: EmbeddingPipeline, dims: int) -> None:
        self.p = pipeline
        self.dims = dims
        self.results: dict[str, np.ndarray] = {}
        self.failed: set[str] = set()
        self.errors: list[str] = []
        self.consecutive = 0
        self.breaker_open = False
        self.fatal: ProviderError | None = None

    def _note_failure(self) -> None:
        self.consecutive += 1
        if self.consecutive >= self.p.breaker_failures:
            self.breaker_open = True

    def _delay(self, retry: int) -> float:
        """Jittered exponential backoff before retry number ``retry`` (1-based)."""
        lo = self.p.backoff_min
        hi = min(self.p.backoff_max, lo * (2.0**retry))
        return self.p.rng.uniform(lo, max(lo, hi))

    def attempt(self, batch: list[tuple[str, str]]) -> bool:
        """Try one batch up to ``attempts`` times; store vectors on success."""
        texts = [text for _, text in batch]
        for n in range(self.p.attempts):
            if n:
                self.p.sleep(self._delay(n))
            try:
                vectors = self.p.embedder.embed_documents(texts)
                vectors = np.asarray(vectors, dtype=np.float32)
                if vectors.shape != (len(texts), self.dims):
                    raise ProviderError(
                        self.p.embedder.identity.provider,
                        f"returned shape {vectors.shape} for {len(texts)} texts of {self.dims} dims",
                        transient=False,
                    )
            except ProviderError as exc:
                self.errors.append(str(exc))
                if not exc.transient:
                    self.fatal = self.fatal or exc
                    self.breaker_open = True
                    return False
                continue
            for (h, _), vec in zip(batch, normalise(vectors), strict=True):
                self.results[h] = vec
            self.consecutive = 0
            return True
        return False

    def run_top(self, batch: list[tuple[str, str]]) -> None:
        if self.breaker_open:
            return
        if self.attempt(batch):
            return
        if self.breaker_open:
            return
        if len(batch) == 1:
            self._note_failure()
            return
        self.split(batch)

    def split(self, batch: list[tuple[str, str]]) -> None:
        """Resolve a failed batch of two or more texts by halving."""
        mid = len(batch) // 2
        halves = [batch[:mid], batch[mid:]]
        outcomes: list[bool] = []
        for half in halves:
            if self.breaker_open:
                return
            outcomes.append(self.attempt(half))
        if self.breaker_open:
            return
        if not any(outcomes):
            self._note_failure()
        for half, ok in zip(halves, outcomes, strict=True):
            if not ok and len(half) > 1 and not self.breaker_open:
                self.split(half)


class EmbeddingPipeline:
    """Embeds a sync's texts through a cache with batching, retries and a breaker."""

    def __init__(
        self,
        embedder: Embedder,
        cache: EmbeddingCache | None,
        *,
        batch_tokens: int = 8000,
        max_batch_texts: int = 2048,
        attempts: int = 3,
        backoff_min: float = 0.5,
        backoff_max: float = 8.0,
        breaker_failures: int = 2,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.embedder = embedder
        self.cache = cache
        self.batch_tokens = max(1, batch_tokens)
        self.max_batch_texts = max(1, max_batch_texts)
        self.attempts = max(1, attempts)
        self.backoff_min = backoff_min
        self.backoff_max = max(backoff_min, backoff_max)
        self.breaker_failures = max(1, breaker_failures)
        self.sleep = sleep
        self.rng = rng if rng is not None else random.Random()

    def batches(self, items: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
        """Cut ``(hash, text)`` items, in order, into batches within the budgets."""
        out: list[list[tuple[str, str]]] = []
        current: list[tuple[str, str]] = []
        used = 0
        for item in items:
            cost = max(1, count_tokens(item[1]))
            if current and (
                used + cost > self.batch_tokens or len(current) >= self.max_batch_texts
            ):
                out.append(current)
                current, used = [], 0
            current.append(item)
            used += cost
        if current:
            out.append(current)
        return out

    def embed_documents(self, texts: Sequence[str]) -> EmbedOutcome:
        """One vector (or None) per text; provider failures are reported, not raised."""
        hashes = [text_hash(t) for t in texts]
        unique: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            unique.setdefault(h, t)
        outcome = EmbedOutcome(vectors=[None] * len(texts))
        if not unique:
            return outcome
        try:
            identity: EmbedderIdentity = self.embedder.identity  # may probe a remote server
        except ProviderError as exc:
            outcome.failed = len(unique)
            outcome.errors.append(str(exc))
            outcome.breaker_open = True
            outcome.fatal = None if exc.transient else exc
            return outcome

        found: dict[str, np.ndarray] = {}
        if self.cache is not None:
            found = {
                h: np.asarray(v, dtype=np.float32)
                for h, v in self.cache.get_many(identity, list(unique)).items()
                if h in unique and np.shape(v) == (identity.dims,)
            }
        run = _Run(self, identity.dims)
        for batch in self.batches([(h, t) for h, t in unique.items() if h not in found]):
            run.run_top(batch)
            if run.breaker_open:
                break

        if run.results and self.cache is not None:
            self.cache.put_many(identity, dict(run.results))
        vectors = {**found, **run.results}
        outcome.vectors = [vectors.get(h) for h in hashes]
        outcome.cached = len(found)
        outcome.computed = len(run.results)
        outcome.failed = len(unique) - outcome.cached - outcome.computed
        outcome.errors = run.errors
        outcome.breaker_open = run.breaker_open
        outcome.fatal = run.fatal
        return outcome

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search query once (no retry: search must stay fast).

        Raises :class:`ProviderError`; the caller falls back to keyword-only search
        when it is transient and reports it when it is not (R-RECALL-4).
        """
        vector = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        if vector.ndim != 1:
            raise ProviderError(
                self.embedder.identity.provider,
                f"query vector has shape {vector.shape}",
                transient=False,
            )
        return normalise(vector)[0]


__all__ = ["EmbedOutcome", "EmbeddingPipeline"]
