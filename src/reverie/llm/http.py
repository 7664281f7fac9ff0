"""The HTTP transport the real providers share: one retrying JSON POST, one base class.

- 429/5xx -> bounded retries honouring ``Retry-After`` (capped), then
  ``ProviderUnavailable(transient=True)``;
- 401/403 -> ``ProviderUnavailable(transient=False)``; timeouts -> ``ProviderTimeout``.

Secrets never reach an exception message, a repr or a log line: every text that came from
the server goes through :func:`redact`, URLs through :func:`safe_url`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from ..errors import ProviderError, ProviderTimeout, ProviderUnavailable
from .base import DEFAULT_TIMEOUT, Completion, Message, Sleep
from .structured import _short, check_schema, parse_structured

log = logging.getLogger("reverie.llm")

DEFAULT_RETRIES = 2
RETRY_AFTER_CAP = 8.0


# --- secrets --------------------------------------------------------------------------------


def redact(text: str, *secrets: str) -> str:
    """Replace every occurrence of each non-empty secret with ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def safe_url(url: str) -> str:
    """The URL without user info, query or fragment: fit for messages and logs."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return "<invalid url>"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}".rstrip("/")


# --- HTTP -----------------------------------------------------------------------------------


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a Retry-After header (delta seconds or HTTP date); None if absent or unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries for 429/5xx. The backoff applies when there is no Retry-After."""

    retries: int = DEFAULT_RETRIES
    retry_after_cap: float = RETRY_AFTER_CAP
    backoff: float = 0.5

    def delay(self, attempt: int, retry_after: float | None) -> float:
        wanted = retry_after if retry_after is not None else self.backoff * (2**attempt)
        return min(wanted, self.retry_after_cap)


def _server_error_text(response: httpx.Response) -> str:
    """The error message a server put in its body (OpenAI/Anthropic shape), else raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return response.text


def post_json(
    client: httpx.Client,
    provider: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    timeout: float,
    policy: RetryPolicy,
    sleep: Sleep,
    secrets: Sequence[str] = (),
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """POST ``body`` as JSON and return the decoded JSON object of a 2xx reply.

    ``timeout`` bounds the whole call, retries included: a retry whose wait would pass
    the deadline is not attempted (memory work must never hold a reply hostage).
    """
    where = safe_url(url)
    deadline = clock() + timeout
    attempts = policy.retries + 1
    for attempt in range(attempts):
        remaining = max(deadline - clock(), 0.05)
        try:
            response = client.post(url, json=dict(body), headers=dict(headers), timeout=remaining)
        except httpx.TimeoutException:
            raise ProviderTimeout(
                provider, f"no answer from {where} within {timeout:g} s", transient=True
            ) from None
        except httpx.HTTPError as exc:
            detail = redact(_short(str(exc) or type(exc).__name__), *secrets)
            raise ProviderUnavailable(
                provider, f"cannot reach {where}: {detail}", transient=True
            ) from None
        status = response.status_code
        if 200 <= status < 300:
            try:
                data = response.json()
            except ValueError:
                data = None
            if not isinstance(data, dict):
                raise ProviderError(
                    provider, f"malformed JSON body from {where} (HTTP {status})", transient=False
                )
            return data
        if status in (401, 403):
            raise ProviderUnavailable(
                provider,
                f"HTTP {status} from {where}: authentication refused (check the API key)",
                transient=False,
            )
        if status == 429 or status >= 500:
            if attempt + 1 < attempts:
                wait = policy.delay(
                    attempt, retry_after_seconds(response.headers.get("retry-after"))
                )
                if clock() + wait < deadline:
                    log.info(
                        "%s: HTTP %d from %s, retry %d/%d in %.1f s",
                        provider,
                        status,
                        where,
                        attempt + 1,
                        policy.retries,
                        wait,
                    )
                    sleep(wait)
                    continue
            raise ProviderUnavailable(
                provider,
                f"HTTP {status} from {where} after {attempt + 1} attempt(s)",
                transient=True,
            )
        detail = redact(_short(_server_error_text(response)), *secrets)
        raise ProviderError(provider, f"HTTP {status} from {where}: {detail}", transient=False)
    raise AssertionError("unreachable")  # pragma: no cover


class HttpLLM:
    """What the HTTP providers share: client, key, timeout, retries and the JSON mode.

    Subclasses build the wire request (:meth:`_request`) and read the wire reply
    (:meth:`_reply`); everything else, including the secret hygiene, lives here once.
    """

    name = "http"
    default_base_url = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "",
        api_key: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        retry_after_cap: float = RETRY_AFTER_CAP,
        sleep: Sleep = time.sleep,
        client: httpx.Client | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.timeout = timeout
        self.policy = RetryPolicy(retries=retries, retry_after_cap=retry_after_cap)
        self._api_key = api_key
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (
            f"{type(self).__name__}(model={self.model!r}, "
            f"base_url={safe_url(self.base_url)!r}, api_key={key})"
        )

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        """The HTTP client, created on first use: building one loads TLS certificates,
        which is wasted work for an engine that never calls the LLM."""
        if self._client is None:
            self._client = httpx.Client()
        return self._client

    def __enter__(self) -> HttpLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        url, headers, body = self._request(messages, system, json_schema, max_tokens)
        data = post_json(
            self._http(),
            self.name,
            url,
            headers=headers,
            body=body,
            timeout=self.timeout if timeout is None else timeout,
            policy=self.policy,
            sleep=self._sleep,
            secrets=(self._api_key,),
        )
        text, model, usage, hint = self._reply(data)
        parsed = None
        if json_schema is not None:
            parsed = parse_structured(self.name, text, json_schema, hint=hint)
        return Completion(text=text, data=parsed, model=model or self.model, usage=usage)

    def _request(
        self,
        messages: Sequence[Message],
        system: str | None,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """URL, headers and JSON body of one call."""
        raise NotImplementedError

    def _reply(self, data: dict[str, Any]) -> tuple[str, str, dict[str, Any], str]:
        """Text, model, usage and a hint explaining a bad structured reply (e.g. cut off)."""
        raise NotImplementedError

    def _malformed(self, what: str) -> ProviderError:
        return ProviderError(self.name, f"malformed reply: {what}", transient=False)


__all__ = [
    "DEFAULT_RETRIES",
    "RETRY_AFTER_CAP",
    "HttpLLM",
    "RetryPolicy",
    "post_json",
    "redact",
    "retry_after_seconds",
    "safe_url",
]
