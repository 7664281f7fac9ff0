"""LLM providers behind one small protocol (used by flush, REM and consolidation).

``make_llm(settings)`` builds the configured one; ``ScriptedLLM`` is the deterministic
fake for tests and demos.
"""

from __future__ import annotations

from .anthropic import AnthropicLLM
from .base import LLM, Completion, Message
from .factory import make_llm
from .fake import ScriptedLLM, SimulatedTimeout
from .openai_chat import OpenAIChatLLM
from .structured import extract_json, parse_structured

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
