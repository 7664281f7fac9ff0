"""OpenAI-compatible chat completions: OpenAI, Ollama, vLLM, LM Studio, OpenRouter.

One wire format (``POST {base_url}/chat/completions``) covers every local and hosted
server people actually run, so this is the provider for anything that is not Anthropic.
``base_url`` includes the version prefix, e.g. ``https://api.openai.com/v1`` or
``http://localhost:11434/v1``; the Bearer key is optional because local servers need none.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import httpx

from .base import DEFAULT_TIMEOUT, Message, Sleep
from .http import DEFAULT_RETRIES, RETRY_AFTER_CAP, HttpLLM
from .structured import join_system, json_instruction

JsonMode = Literal["object", "schema", "off"]


class OpenAIChatLLM(HttpLLM):
    """Chat completions provider.

    ``json_mode`` picks how JSON is requested when a schema is given: ``"object"`` sends
    ``response_format: json_object`` (widest support), ``"schema"`` sends the stricter
    ``json_schema`` format (servers that reject ``json_object``, e.g. LM Studio), ``"off"``
    relies on the prompt alone. The reply is validated locally in every mode.
    """

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        retry_after_cap: float = RETRY_AFTER_CAP,
        sleep: Sleep = time.sleep,
        client: httpx.Client | None = None,
        json_mode: JsonMode = "object",
    ) -> None:
        super().__init__(
            model=model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            retries=retries,
            retry_after_cap=retry_after_cap,
            sleep=sleep,
            client=client,
        )
        self.json_mode = json_mode

    def _request(
        self,
        messages: Sequence[Message],
        system: str | None,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        wire: list[dict[str, str]] = []
        prompt = join_system(system, json_instruction(json_schema) if json_schema else None)
        if prompt:
            wire.append({"role": "system", "content": prompt})
        wire.extend({"role": m.role, "content": m.content} for m in messages)
        body: dict[str, Any] = {"model": self.model, "messages": wire, "max_tokens": max_tokens}
        if json_schema is not None and self.json_mode == "object":
            body["response_format"] = {"type": "json_object"}
        elif json_schema is not None and self.json_mode == "schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": json_schema},
            }
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return f"{self.base_url}/chat/completions", headers, body

    def _reply(self, data: dict[str, Any]) -> tuple[str, str, dict[str, Any], str]:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("no choices")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            refusal = message.get("refusal") if isinstance(message, dict) else None
            raise self._malformed("model refused" if refusal else "no message content")
        finish = choices[0].get("finish_reason")
        hint = "the reply was cut off at max_tokens" if finish == "length" else ""
        raw = data.get("usage")
        usage: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        if "prompt_tokens" in usage:
            usage["input_tokens"] = usage["prompt_tokens"]
        if "completion_tokens" in usage:
            usage["output_tokens"] = usage["completion_tokens"]
        model = data.get("model")
        return content, model if isinstance(model, str) else self.model, usage, hint


__all__ = ["JsonMode", "OpenAIChatLLM"]
