"""LLM providers behind one small protocol (used by flush, REM and consolidation).

``make_llm(settings)`` builds the configured one; ``ScriptedLLM`` is the deterministic
fake for tests and demos.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .anthropic import AnthropicLLM
    from .base import LLM, Completion, Message
    from .factory import make_llm
    from .fake import ScriptedLLM, SimulatedTimeout
    from .openai_chat import OpenAIChatLLM
    from .structured import extract_json, parse_structured

# Loaded on first use: the providers pull in the HTTP client, which one-shot commands
# that never call a model (``reverie hook user-prompt-submit``) should not pay for.
_HOME = {
    "LLM": "base",
    "Completion": "base",
    "Message": "base",
    "AnthropicLLM": "anthropic",
    "OpenAIChatLLM": "openai_chat",
    "ScriptedLLM": "fake",
    "SimulatedTimeout": "fake",
    "make_llm": "factory",
    "extract_json": "structured",
    "parse_structured": "structured",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "LLM",
    "AnthropicLLM",
    "Completion",
    "Message",
    "OpenAIChatLLM",
    "ScriptedLLM",
    "SimulatedTimeout",
    "extract_json",
    "make_llm",
    "parse_structured",
]
