"""Structured model replies: ask for JSON, find it in a reply, validate it. Pure code.

Replies that do not parse or validate -> ``ProviderError(transient=False)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from ..errors import ProviderError

_DETAIL_CHARS = 300


def json_instruction(schema: Mapping[str, Any]) -> str:
    """System-prompt text asking for a bare JSON object (also satisfies OpenAI's rule that
    JSON mode prompts must mention JSON)."""
    return (
        "Reply with a single JSON object and nothing else: no prose, no Markdown fences. "
        "It must validate against this JSON Schema:\n"
        + json.dumps(schema, ensure_ascii=False, sort_keys=True)
    )


def join_system(*parts: str | None) -> str:
    """Join non-empty system-prompt parts with blank lines."""
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_SCAN = 64


def extract_json(text: str) -> Any:
    """The JSON value in a model reply: the whole text, a ```json fence, or the first
    decodable ``{...}`` object inside surrounding prose. Raises ValueError if none."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for match in _FENCE.finditer(text):
        try:
            return json.loads(match.group(1).strip())
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(_MAX_SCAN):
        if start < 0:
            break
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value
    raise ValueError("no JSON object found")


def _short(text: str, limit: int = _DETAIL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_schema(schema: Mapping[str, Any]) -> None:
    """Reject a malformed schema up front: that is a caller bug, not a provider failure."""
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"invalid json_schema: {_short(exc.message)}") from None


def parse_structured(provider: str, text: str, schema: Mapping[str, Any], *, hint: str = "") -> Any:
    """Parse ``text`` as JSON and validate it against ``schema``.

    Raises ``ProviderError(transient=False)`` saying what failed; ``hint`` (e.g. "the
    reply was cut off at max_tokens") is appended because it usually explains why.
    """
    suffix = f" ({hint})" if hint else ""
    try:
        data = extract_json(text)
    except ValueError:
        raise ProviderError(
            provider, f"reply is not valid JSON ({len(text)} chars){suffix}", transient=False
        ) from None
    cls = jsonschema.validators.validator_for(schema)
    error = jsonschema.exceptions.best_match(cls(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ProviderError(
            provider,
            f"reply does not match the schema at {where}: {_short(error.message)}{suffix}",
            transient=False,
        )
    return data


__all__ = ["check_schema", "extract_json", "join_system", "json_instruction", "parse_structured"]
