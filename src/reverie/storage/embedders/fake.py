"""A deterministic embedder for tests: feature hashing, no model, no network.

Each word of :func:`reverie.tokens.token_set` (ASCII words, CJK unigrams and bigrams)
is hashed into one of ``dims`` buckets with a +/-1 sign, then the vector is
L2-normalised, so texts sharing words have a higher cosine than unrelated ones, in
every process and on every machine (no Python ``hash()`` salt).

End-to-end tests drive the CLI in a subprocess, where they cannot pass constructor
arguments, so failures can also be switched on from the environment:

``REVERIE_FAKE_EMBED_DOWN=1``
    every call raises a transient :class:`ProviderError` (provider down).
``REVERIE_FAKE_EMBED_FAIL_AFTER=N``
    the first N texts embedded in this process succeed; a call that would take the
    process total past N raises a transient :class:`ProviderError`.
``REVERIE_FAKE_EMBED_DELAY=SECONDS``
    every call sleeps that long first (a slow provider: lets a test kill a sync mid-way).

The environment is read on every call, so a test may flip it between calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ...errors import ConfigError, ProviderError
from ...tokens import token_set
from .base import EmbedderIdentity, normalise

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use

PROVIDER = "fake"
ENV_DOWN = "REVERIE_FAKE_EMBED_DOWN"
ENV_FAIL_AFTER = "REVERIE_FAKE_EMBED_FAIL_AFTER"
ENV_DELAY = "REVERIE_FAKE_EMBED_DELAY"

_process_lock = threading.Lock()
_process_texts = 0  # texts embedded by every FakeEmbedder in this process


def process_texts_embedded() -> int:
    """Texts embedded by all fake embedders of this process (what FAIL_AFTER counts)."""
    return _process_texts


def reset_process_counter() -> None:
    """Forget the process-wide count (for tests that use ``FAIL_AFTER`` in-process)."""
    global _process_texts
    with _process_lock:
        _process_texts = 0


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class FakeEmbedder:
    """Hashing embedder with switchable failures and call counters.

    ``down`` / ``fail_after`` override the environment when given. ``poison`` is a
    predicate: a call containing a text for which it is true fails (transiently), which
    lets tests check that batch halving isolates one bad text.
    """

    def __init__(
        self,
        dims: int = 256,
        *,
        down: bool | None = None,
        fail_after: int | None = None,
        poison: Callable[[str], bool] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if dims < 8:
            raise ConfigError(f"fake embedder needs at least 8 dims, got {dims}")
        self.identity = EmbedderIdentity(PROVIDER, f"hash-{dims}", dims)
        self.dims = dims
        self.down = down
        self.fail_after = fail_after
        self.poison = poison
        self._environ = environ
        self.calls = 0  # embed calls attempted, failed ones included
        self.texts_embedded = 0  # texts successfully embedded by this instance
        self.batches: list[list[str]] = []  # texts of every call, in order

    # ---- failure switches -------------------------------------------------------------

    def _env(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _is_down(self) -> bool:
        return self.down if self.down is not None else _truthy(self._env().get(ENV_DOWN))

    def _fail_after(self) -> int | None:
        if self.fail_after is not None:
            return self.fail_after
        raw = self._env().get(ENV_FAIL_AFTER, "").strip()
        if not raw:
            return None
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{ENV_FAIL_AFTER} must be an integer, got {raw!r}") from None

    # ---- embedding --------------------------------------------------------------------

    def vector(self, text: str) -> np.ndarray:
        """The (unnormalised) hashed feature vector of one text."""
        vec = np.zeros(self.dims, dtype=np.float32)
        # uncached: a sync embeds every chunk once, and the cache (keyed by whole texts)
        # would keep up to 65,536 of them alive after it (issue 22.12)
        features = token_set.__wrapped__(text) or frozenset({"\0" + text.strip().lower()})
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        if not vec.any():  # features cancelled out in one bucket: never a zero vector
            digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % self.dims] = 1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        global _process_texts
        self.calls += 1
        self.batches.append(list(texts))
        delay = self._env().get(ENV_DELAY, "").strip()
        if delay:
            time.sleep(float(delay))
        if self._is_down():
            raise ProviderError(PROVIDER, "down (REVERIE_FAKE_EMBED_DOWN)", transient=True)
        if self.poison is not None and any(self.poison(t) for t in texts):
            raise ProviderError(PROVIDER, "rejected a poisoned text", transient=True)
        limit = self._fail_after()
        with _process_lock:
            if limit is not None and _process_texts + len(texts) > limit:
                raise ProviderError(
                    PROVIDER,
                    f"failing after {limit} texts (REVERIE_FAKE_EMBED_FAIL_AFTER)",
                    transient=True,
                )
            _process_texts += len(texts)
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return normalise(np.stack([self.vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


__all__ = [
    "ENV_DELAY",
    "ENV_DOWN",
    "ENV_FAIL_AFTER",
    "FakeEmbedder",
    "process_texts_embedded",
    "reset_process_counter",
]
