"""``reverie mcp --http HOST:PORT``: the same server over streamable HTTP, so several
clients share one warm process.

Loopback (``127.0.0.1``, ``localhost``, ``::1``) is the default and needs no token (the
SDK's DNS-rebinding protection is on for it). Any other address is refused unless a
bearer token is set (``--token`` or ``REVERIE_MCP_TOKEN``): then every request must
carry ``Authorization: Bearer <token>``, compared in constant time; others get 401.
"""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any

from ..engine import Reverie
from ..errors import ConfigError
from .registry import build_server

if TYPE_CHECKING:
    from .hosted import BackgroundFor

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
PATH = "/mcp"

Scope = dict[str, Any]
ASGIApp = Any


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6, or a bare ``PORT`` for loopback)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ConfigError(f"--http {value!r}: give HOST:PORT, e.g. 127.0.0.1:8765") from None
    if not 0 < number < 65536:
        raise ConfigError(f"--http {value!r}: the port must be 1..65535")
    return host, number


class BearerAuth:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "a bearer token is required"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(engine: Reverie, *, host: str, token: str | None) -> ASGIApp:
    if host not in LOOPBACK and not token:
        raise ConfigError(
            f"serving MCP on {host} (not loopback) needs a bearer token: pass --token or set "
            "REVERIE_MCP_TOKEN"
        )
    app = build_server(engine).streamable_http_app(streamable_http_path=PATH, host=host)
    return BearerAuth(app, token) if token else app


def run_http(engine: Reverie, address: str, *, token: str | None = None) -> None:
    """Serve ``engine`` over streamable HTTP at ``address`` until interrupted."""
    import uvicorn

    host, port = parse_address(address)
    app = http_app(engine, host=host, token=token)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def run_hosted(
    tenants_file: str,
    address: str,
    *,
    flags: dict[str, Any],
    max_open: int = 64,
    background: BackgroundFor | None = None,
) -> None:
    """Serve every tenant of ``tenants_file`` at ``address`` (:mod:`.hosted`), with
    ``background(tenants, opener)`` (the tenants' daemon jobs) running meanwhile."""
    import uvicorn

    from .hosted import HostedApp, tenant_opener
    from .tenants import load_tenants

    tenants = load_tenants(tenants_file)
    host, port = parse_address(address)
    opener = tenant_opener(flags)
    jobs = None if background is None else background(tenants, opener)
    app = HostedApp(tenants, opener, host=host, path=PATH, max_open=max_open, background=jobs)
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")


__all__ = ["BearerAuth", "http_app", "parse_address", "run_hosted", "run_http"]
