"""Any OpenAI-compatible ``/embeddings`` server (OpenAI, vLLM, Ollama, LM Studio, ...).

Wire format: ``POST {base_url}/embeddings`` with ``{"model": m, "input": [texts]}``;
the answer's ``data`` items carry ``embedding`` and ``index`` and may come back in
any order, so they are sorted by ``index``.

Dimensions: pass ``dims`` when you know them. Otherwise they are discovered lazily:
the first successful request records them, and reading :attr:`identity` before any
request has been made sends one real request (a short probe text) to find them out,
because the identity keys the embedding cache and must be exact.

Errors follow R-RECALL-4 (as issue 22 sharpened it). A server that refuses *us* (bad
key, unknown model or endpoint, an invalid URL, a TLS certificate we refuse) raises
:class:`ProviderUnavailable` with ``transient=False``: that is a configuration problem
to report, not to paper over. A server that is down or overloaded (connection refused,
unknown host, 429, 5xx, timeouts, dropped connections, garbage bodies) is
``transient=True``: the pipeline retries, halves, and finally degrades to keyword-only
indexing, and a search answers from the keyword lane and says so. 400, 413 and 422 are also
transient: servers use them for input-specific problems (a text too long, a batch
too big), which halving a batch can isolate.

Messages name the provider and base URL (credentials in the URL are masked) and never
the API key; anything echoed by the server is scrubbed of the key too.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import httpx

from ...errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from .base import EmbedderIdentity, normalise

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use

PROVIDER = "openai"
PROBE_TEXT = "dimension probe"
_SNIPPET = 200


def provider_key(base_url: str) -> str:
    """First 12 hex digits of sha256(base URL): tells servers apart, reveals nothing."""
    return hashlib.sha256(base_url.rstrip("/").encode("utf-8")).hexdigest()[:12]


def display_url(base_url: str) -> str:
    """The base URL with any ``user:password@`` part masked, for messages."""
    try:
        url = httpx.URL(base_url)
    except Exception:
        return "<invalid URL>"
    if url.userinfo:
        return str(url.copy_with(username="***", password=None))
    return str(url)


class OpenAIEmbedder:
    """Synchronous client for one OpenAI-compatible embeddings endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        dims: int | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ConfigError("embedder openai needs embed_base_url (REVERIE_EMBED_BASE_URL)")
        if not model:
            raise ConfigError("embedder openai needs embed_model (REVERIE_EMBED_MODEL)")
        if dims is not None and dims < 1:
            raise ConfigError(f"embedding dims must be positive, got {dims}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self._api_key = api_key
        self._dims = dims
        self._key = provider_key(self.base_url)
        self._where = display_url(self.base_url)
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIEmbedder(base_url={self._where!r}, model={self.model!r}, dims={self._dims})"

    # ---- identity ---------------------------------------------------------------------

    @property
    def dims(self) -> int | None:
        """Known dimensions, or None before the first request when not configured."""
        return self._dims

    @property
    def identity(self) -> EmbedderIdentity:
        """Provider, model, dims and a hash of the base URL (may send one probe request)."""
        if self._dims is None:
            self._request([PROBE_TEXT])
        assert self._dims is not None
        return EmbedderIdentity(PROVIDER, self.model, self._dims, self._key)

    @identity.setter
    def identity(self, value: EmbedderIdentity) -> None:
        raise AttributeError("OpenAIEmbedder.identity is derived from its settings")

    # ---- embedding --------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        return self._request(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([text])[0]

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ---- HTTP -------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout, transport=self._transport)
            return self._client

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _fail(self, cls: type[ProviderError], what: str, *, transient: bool) -> NoReturn:
        raise cls(PROVIDER, self._scrub(f"{what} ({self._where})"), transient=transient)

    def _request(self, texts: list[str]) -> np.ndarray:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = {"model": self.model, "input": texts}
        try:
            response = self._http().post(f"{self.base_url}/embeddings", json=body, headers=headers)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            self._fail(ProviderUnavailable, f"invalid base URL: {exc}", transient=False)
        except httpx.TimeoutException:
            self._fail(ProviderTimeout, f"no answer within {self.timeout:g}s", transient=True)
        except httpx.ConnectError as exc:  # refused, unknown host, TLS failure
            # a server that is down (refused, no route, DNS) comes back by itself; a
            # certificate it presents that we refuse does not
            tls = _is_tls_error(exc)
            self._fail(ProviderUnavailable, f"cannot connect: {exc}", transient=not tls)
        except httpx.TransportError as exc:  # reset, protocol error mid-response
            self._fail(ProviderError, f"connection failed: {type(exc).__name__}", transient=True)
        return self._parse(response, len(texts))

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        if status in (401, 403):
            self._fail(
                ProviderUnavailable, f"HTTP {status}: the API key was refused", transient=False
            )
        detail = self._scrub(response.text[:_SNIPPET].strip())
        suffix = f": {detail}" if detail else ""
        if status == 404:
            self._fail(
                ProviderUnavailable,
                f"HTTP 404: no /embeddings endpoint or unknown model {self.model!r}{suffix}",
                transient=False,
            )
        if status == 408:
            self._fail(ProviderTimeout, f"HTTP 408{suffix}", transient=True)
        if status in (400, 409, 413, 422, 425, 429) or status >= 500:
            self._fail(ProviderError, f"HTTP {status}{suffix}", transient=True)
        self._fail(ProviderUnavailable, f"HTTP {status}{suffix}", transient=False)

    def _parse(self, response: httpx.Response, n: int) -> np.ndarray:
        self._check_status(response)
        try:
            payload: Any = response.json()
            items = sorted(payload["data"], key=lambda item: int(item["index"]))
            matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError):
            self._fail(ProviderError, "malformed response (not an embeddings list)", transient=True)
        if matrix.ndim != 2 or matrix.shape[0] != n or matrix.shape[1] == 0:
            self._fail(
                ProviderError,
                f"malformed response: {n} texts sent, got vectors of shape {matrix.shape}",
                transient=True,
            )
        dims = int(matrix.shape[1])
        if self._dims is None:
            self._dims = dims
        elif dims != self._dims:
            self._fail(
                ProviderUnavailable,
                f"model {self.model!r} returned {dims}-dim vectors, expected {self._dims}",
                transient=False,
            )
        return normalise(matrix)


def _is_tls_error(exc: BaseException) -> bool:
    """Whether a connect error was a TLS failure (a configuration problem)."""
    import ssl

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


__all__ = ["OpenAIEmbedder", "display_url", "provider_key"]
