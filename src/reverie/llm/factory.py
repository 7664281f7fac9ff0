"""Build the configured LLM from settings (``llm``, ``llm_model``, ``llm_base_url`` ...).

``llm = none`` is a normal state (the write flow then skips LLM steps), so it yields None
rather than an error; a provider that is configured but incomplete is a ConfigError that
names the missing setting, because silently degrading would hide the misconfiguration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import ConfigError
from .base import LLM

Purpose = Literal["main", "flush"]


def _model(settings: Mapping[str, Any], purpose: Purpose) -> str:
    if purpose == "flush" and settings["llm_flush_model"]:
        return str(settings["llm_flush_model"])
    return str(settings["llm_model"])


def make_llm(
    settings: Mapping[str, Any],
    *,
    purpose: Purpose = "main",
    environ: Mapping[str, str] | None = None,
) -> LLM | None:
    """The LLM for ``purpose`` ("flush" uses ``llm_flush_model`` when set), or None.

    ``environ`` is read only for the fake provider's script (default ``os.environ``).
    """
    kind = settings["llm"]
    if kind == "none":
        return None
    timeout = float(settings["llm_timeout"])
    model = _model(settings, purpose)
    if kind == "fake":
        env = os.environ if environ is None else environ
        from .fake import ScriptedLLM, script_from_env  # providers load on first use

        return ScriptedLLM(script_from_env(env), model=model or "scripted", timeout=timeout)
    if not model:
        raise ConfigError(f"llm {kind} needs llm_model (REVERIE_LLM_MODEL)")
    base_url = str(settings["llm_base_url"])
    api_key = str(settings["llm_api_key"])
    if kind == "openai":
        if not base_url:
            raise ConfigError(
                "llm openai needs llm_base_url (REVERIE_LLM_BASE_URL), "
                "e.g. https://api.openai.com/v1 or http://localhost:11434/v1"
            )
        from .openai_chat import OpenAIChatLLM

        return OpenAIChatLLM(model=model, base_url=base_url, api_key=api_key, timeout=timeout)
    if kind == "anthropic":
        from .anthropic import AnthropicLLM

        return AnthropicLLM(model=model, base_url=base_url, api_key=api_key, timeout=timeout)
    raise ConfigError(f"llm must be one of none, openai, anthropic, fake; got {kind!r}")


__all__ = ["Purpose", "make_llm"]
