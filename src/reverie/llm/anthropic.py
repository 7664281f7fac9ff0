"""Anthropic Messages API (``POST {base_url}/v1/messages``).

Differences from chat completions that matter here: the system prompt is a top-level
field (system-role messages are folded into it), ``max_tokens`` is mandatory, the reply
is a list of content blocks, and there is no JSON mode, so JSON is asked for in the
system prompt and validated locally like everywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Message
from .http import HttpLLM
from .structured import join_system, json_instruction

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class AnthropicLLM(HttpLLM):
    """Anthropic's Messages API (``/v1/messages``), JSON mode by instruction."""

    name = "anthropic"
    default_base_url = ANTHROPIC_BASE_URL

    def _request(
        self,
        messages: Sequence[Message],
        system: str | None,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        folded = [m.content for m in messages if m.role == "system"]
        prompt = join_system(
            system, *folded, json_instruction(json_schema) if json_schema else None
        )
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
        }
        if prompt:
            body["system"] = prompt
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return f"{self.base_url}/v1/messages", headers, body

    def _reply(self, data: dict[str, Any]) -> tuple[str, str, dict[str, Any], str]:
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise self._malformed("no content blocks")
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if not texts:
            raise self._malformed("no text content block")
        hint = (
            "the reply was cut off at max_tokens" if data.get("stop_reason") == "max_tokens" else ""
        )
        raw = data.get("usage")
        usage: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        model = data.get("model")
        return "".join(texts), model if isinstance(model, str) else self.model, usage, hint


__all__ = ["ANTHROPIC_BASE_URL", "ANTHROPIC_VERSION", "AnthropicLLM"]
