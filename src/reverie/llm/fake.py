"""A scripted, deterministic LLM shipped in the package for tests and demos.

Each call pops the next scripted reply, so a test states exactly what "the model" says,
in which order, and can make a reply a callable to simulate side effects mid-call (for
example editing MEMORY.md to provoke a race). JSON-schema validation is the same helper
the real providers use, so a fake that passes here would pass against a real server.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from .base import DEFAULT_TIMEOUT, Completion, Message, Sleep
from .structured import check_schema, parse_structured

SCRIPT_ENV = "REVERIE_FAKE_LLM_SCRIPT"


@dataclass(frozen=True)
class SimulatedTimeout:
    """A scripted reply that behaves like a provider that never answers in time."""


ReplyValue: TypeAlias = str | dict[str, Any]
Reply: TypeAlias = (
    str
    | dict[str, Any]
    | BaseException
    | SimulatedTimeout
    | Callable[[Sequence[Message]], ReplyValue]
)


@dataclass(frozen=True)
class Call:
    """What one ``complete`` call received (for assertions in tests)."""

    messages: tuple[Message, ...]
    system: str | None
    json_schema: dict[str, Any] | None
    timeout: float
    max_tokens: int


class ScriptedLLM:
    """Replies from a script: ``str`` -> text, ``dict`` -> JSON text, exception -> raised,
    :class:`SimulatedTimeout` -> ``ProviderTimeout``, callable -> called with the messages.

    ``sleep_before`` simulates latency through the injectable ``sleep``: when it exceeds
    the call's timeout, the fake "waits" the timeout and raises ``ProviderTimeout``.
    An exhausted script raises ``ProviderError("fake", "script exhausted")``.
    """

    name = "fake"

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        model: str = "scripted",
        timeout: float = DEFAULT_TIMEOUT,
        sleep_before: float = 0.0,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.sleep_before = sleep_before
        self.calls: list[Call] = []
        self._replies = list(replies)
        self._sleep = sleep
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedLLM(model={self.model!r}, remaining={self.remaining})"

    @property
    def remaining(self) -> int:
        """Replies not yet used."""
        return len(self._replies)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        json_schema: dict[str, Any] | None = None,
        timeout: float | None = None,
        max_tokens: int = 2048,
    ) -> Completion:
        if json_schema is not None:
            check_schema(json_schema)
        limit = self.timeout if timeout is None else timeout
        with self._lock:
            self.calls.append(Call(tuple(messages), system, json_schema, limit, max_tokens))
            if not self._replies:
                raise ProviderError(self.name, "script exhausted")
            reply = self._replies.pop(0)
        if self.sleep_before > 0:
            self._sleep(min(self.sleep_before, limit))
            if self.sleep_before > limit:
                raise self._timeout(limit)
        if isinstance(reply, SimulatedTimeout):
            raise self._timeout(limit)
        if isinstance(reply, BaseException):
            raise reply
        value = reply(messages) if callable(reply) else reply
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        data = None
        if json_schema is not None:
            data = parse_structured(self.name, text, json_schema)
        usage = {
            "input_tokens": sum(len(m.content) for m in messages) // 4,
            "output_tokens": len(text) // 4,
        }
        return Completion(text=text, data=data, model=self.model, usage=usage)

    def _timeout(self, limit: float) -> ProviderTimeout:
        return ProviderTimeout(self.name, f"no answer within {limit:g} s", transient=True)


_RAISE = {
    "timeout": lambda msg: ProviderTimeout("fake", msg or "simulated timeout", transient=True),
    "unavailable": lambda msg: ProviderUnavailable(
        "fake", msg or "simulated outage", transient=True
    ),
    "error": lambda msg: ProviderError("fake", msg or "simulated error"),
}


def _decode_reply(item: Any, where: str) -> Reply:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and "$raise" in item:
        kind = item["$raise"]
        if kind not in _RAISE:
            raise ConfigError(f"{where}: $raise must be one of {', '.join(_RAISE)}, got {kind!r}")
        return _RAISE[kind](str(item.get("message", "")))
    if isinstance(item, dict):
        return item
    raise ConfigError(f"{where}: a reply must be a string or an object, got {type(item).__name__}")


def load_script(path: str | Path) -> list[Reply]:
    """Read a JSON list of replies: strings, objects (sent as JSON text), or
    ``{"$raise": "timeout" | "unavailable" | "error", "message": "..."}`` to fail a call."""
    p = Path(path).expanduser()
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{SCRIPT_ENV}: cannot read {p}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{SCRIPT_ENV}: {p} is not valid JSON: {exc}") from None
    if not isinstance(raw, list):
        raise ConfigError(f"{SCRIPT_ENV}: {p} must hold a JSON list of replies")
    return [_decode_reply(item, f"{p}[{i}]") for i, item in enumerate(raw)]


def script_from_env(environ: Mapping[str, str] | None = None) -> list[Reply]:
    """The script named by ``REVERIE_FAKE_LLM_SCRIPT``, or an empty script."""
    env = os.environ if environ is None else environ
    path = env.get(SCRIPT_ENV, "").strip()
    return load_script(path) if path else []


__all__ = [
    "SCRIPT_ENV",
    "Call",
    "Reply",
    "ScriptedLLM",
    "SimulatedTimeout",
    "load_script",
    "script_from_env",
]
