"""The LLM protocol, plus what every provider shares (in the modules beside it).

The write flow (flush, REM, consolidation) only needs "send these messages, maybe get a
JSON object back that matches this schema". Keeping that surface tiny lets one scripted
fake stand in for every real provider in tests, and lets the real providers share one
JSON-extraction/validation helper and one retrying HTTP call, so they fail the same way:

- structured replies that do not parse or validate -> ``ProviderError(transient=False)``;
- 429/5xx -> bounded retries honouring ``Retry-After`` (capped), then
  ``ProviderUnavailable(transient=True)``;
- 401/403 -> ``ProviderUnavailable(transient=False)``; timeouts -> ``ProviderTimeout``.

Secrets never reach an exception message, a repr or a log line: every text that came from
the server goes through :func:`redact`, URLs through :func:`safe_url`.

Here: the protocol and its message types. Structured-output helpers (pure) are in
:mod:`.structured`, the shared HTTP transport in :mod:`.http`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]
Sleep = Callable[[float], None]

DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Message:
    """One message of a conversation with a model."""

    role: Role
    content: str


@dataclass(frozen=True)
class Completion:
    """One model reply. ``data`` is the parsed, schema-valid object in JSON mode, else None.

    ``usage`` is the provider's usage block plus normalised ``input_tokens`` /
    ``output_tokens`` keys when the provider reported them.
    """

    text: str
    data: Any | None
    model: str
    usage: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class LLM(Protocol):
    """A model that completes a conversation, optionally as schema-valid JSON."""

    name: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        json_schema: dict[str, Any] | None = None,
        timeout: float | None = None,
        max_tokens: int = 2048,
    ) -> Completion: ...


__all__ = ["DEFAULT_TIMEOUT", "LLM", "Completion", "Message", "Role", "Sleep"]
