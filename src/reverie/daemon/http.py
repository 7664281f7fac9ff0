"""The daemon's loopback door: Claude Code's HTTP hooks and the CLI's warm path.

``reverie serve`` answers, on ``127.0.0.1`` only, at the port kept in
``daemon-endpoint.json`` in the agent's state dir (mode 0600, with a bearer token made
once; both kept across restarts so an installed hook's URL and header stay valid):

- ``POST /reverie/ping``: who serves (the workspace), for the installer and the CLI;
- the routes its caller registers: ``reverie serve`` (:mod:`reverie.cli.serve`) adds
  ``/reverie/hook/<event>`` (Claude Code's HTTP hook: the body is the hook's JSON, the answer
  the bytes the one-shot ``reverie hook <event>`` prints, from the same code on a warm
  engine; always 200, an error being an empty body and a ``hooks.log`` line, so it fails
  open like the one-shot hook; Claude Code itself treats a refused connection, a
  timeout or a non-2xx answer as a non-blocking error, so a daemon that is down never
  blocks a prompt either) and ``/reverie/cli`` (``reverie search`` / ``context`` run warm);
- the stream routes its caller registers: ``/reverie/mcp`` answers ``101 Switching
  Protocols`` and the connection then carries MCP's stdio framing (one JSON-RPC message
  a line, both ways) until either side closes it: ``reverie mcp`` relays its stdio to it
  (:mod:`reverie.cli.relay`), and the daemon's warm MCP server answers.

Every request must carry ``Authorization: Bearer <token>`` (compared in constant
time; else 401), a ``Host`` that names the loopback address and our port (else 403:
DNS rebinding), and no ``Origin`` but a loopback one (else 403: a web page's request).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import secrets
import socket
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, BinaryIO

from ..storage.endpoint import HOST, Endpoint
from ..storage.workspace import Workspace

MAX_BODY = 16 * 1024 * 1024  # a hook's JSON carries one prompt; more is not a hook
log = logging.getLogger("reverie.daemon")

# route -> (body) -> (status, content type, answer)
Route = Callable[[bytes], tuple[int, str, bytes]]
# stream route -> (reader, writer): serves the upgraded connection until it closes
StreamRoute = Callable[[BinaryIO, BinaryIO], None]
STREAM_PROTOCOL = "reverie-mcp"  # the Upgrade token of a stream route


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    routes: Mapping[str, Route]
    streams: Mapping[str, StreamRoute]
    token: bytes
    hosts: frozenset[str]
    origins: frozenset[str]
    live: set[socket.socket]  # the upgraded connections being served
    live_lock: threading.Lock


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the daemon logs
        log.debug("http %s", format % args)

    def _answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, why: str) -> None:
        self.close_connection = True
        self._answer(status, json.dumps({"error": why}).encode())

    def _allowed(self) -> bool:
        host = (self.headers.get("Host") or "").lower()
        if host not in self.server.hosts:
            self._refuse(403, "this server answers on the loopback address only")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin.lower() not in self.server.origins:
            self._refuse(403, "cross-origin requests are refused")
            return False
        given = (self.headers.get("Authorization") or "").encode()
        if not hmac.compare_digest(given, self.server.token):
            self._refuse(401, "a bearer token is required")
            return False
        return True

    def do_GET(self) -> None:
        self._refuse(405, "POST only")

    def do_POST(self) -> None:
        if not self._allowed():
            return
        path = self.path.split("?", 1)[0]
        stream = self.server.streams.get(path)
        if stream is not None:
            self._stream(stream)
            return
        route = self.server.routes.get(path)
        if route is None:
            self._refuse(404, f"no route {self.path}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._refuse(413, "the body is missing its length or too large")
            return
        body = self.rfile.read(length)
        if self.headers.get("X-Reverie-Interim") == "102":  # the CLI's client: alive
            self.wfile.write(b"HTTP/1.1 102 Processing\r\n\r\n")
            self.wfile.flush()
        try:
            status, kind, answer = route(body)
        except Exception as exc:  # P5: a bug answers 500, the daemon keeps serving
            log.error("http %s failed: %s: %s", self.path, type(exc).__name__, exc)
            self._refuse(500, f"{type(exc).__name__}: {exc}")
            return
        self._answer(status, answer, kind)

    def _stream(self, stream: StreamRoute) -> None:
        """Switch protocols, then hand the connection to ``stream`` until it closes."""
        self.close_connection = True
        if (self.headers.get("Upgrade") or "").lower() != STREAM_PROTOCOL:
            self._refuse(426, f"this route needs Upgrade: {STREAM_PROTOCOL}")
            return
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", STREAM_PROTOCOL)
        self.send_header("Connection", "Upgrade")
        self.end_headers()
        self.wfile.flush()
        with self.server.live_lock:
            self.server.live.add(self.connection)
        try:
            stream(self.rfile, self.wfile)  # type: ignore[arg-type]
        except OSError as exc:  # the client went away mid-session
            log.debug("stream %s ended: %s", self.path, exc)
        except Exception as exc:  # P5: one session's failure never stops the daemon
            log.error("stream %s failed: %s: %s", self.path, type(exc).__name__, exc)
        finally:
            with self.server.live_lock:
                self.server.live.discard(self.connection)


def _bind(port: int) -> _Server:
    return _Server((HOST, port), _Handler, bind_and_activate=True)


class DaemonServer:
    """The loopback HTTP server of one daemon (started and stopped by :class:`Daemon`)."""

    def __init__(
        self,
        workspace: Workspace,
        routes: Mapping[str, Route],
        streams: Mapping[str, StreamRoute] | None = None,
        on_start: Callable[[], object] | None = None,
    ) -> None:
        self.workspace = workspace
        self._routes = dict(routes)
        self._streams = dict(streams or {})
        self._on_start = on_start  # once serving (the daemon's lock held): warm-ups
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.endpoint: Endpoint | None = None

    def _ping(self, body: bytes) -> tuple[int, str, bytes]:
        return 200, "application/json", json.dumps({"workspace": str(self.workspace.root)}).encode()

    def start(self) -> Endpoint:
        """Bind the kept port (a new one when it is taken, logged: hooks installed with
        the old one fail open until ``reverie install claude-code`` runs again)."""
        path = self.workspace.daemon_endpoint
        kept = Endpoint.load(path)
        token = kept.token if kept and kept.token else secrets.token_urlsafe(32)
        server: _Server | None = None
        if kept is not None and kept.port:
            try:
                server = _bind(kept.port)
            except OSError as exc:
                log.warning(
                    "port %d is taken (%s); serving on another one: run `reverie install "
                    "claude-code` again so the hooks use it",
                    kept.port,
                    exc,
                )
        if server is None:
            server = _bind(0)
        port = int(server.server_address[1])
        endpoint = Endpoint(port, token, str(self.workspace.root))
        server.token = f"Bearer {token}".encode()
        server.hosts = frozenset({f"{HOST}:{port}", f"localhost:{port}"})
        server.origins = frozenset({f"http://{HOST}:{port}", f"http://localhost:{port}"})
        server.routes = {"/reverie/ping": self._ping, **self._routes}
        server.streams = self._streams
        server.live, server.live_lock = set(), threading.Lock()
        if kept != endpoint:
            endpoint.save(path)
        self._server, self.endpoint = server, endpoint
        self._thread = threading.Thread(
            target=server.serve_forever, name="reverie-http", daemon=True
        )
        self._thread.start()
        log.info("answering hooks and the CLI on %s", endpoint.url("/"))
        if self._on_start is not None:
            self._on_start()
        return endpoint

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            with self._server.live_lock:  # end the relayed sessions: their engine closes
                for conn in list(self._server.live):
                    with contextlib.suppress(OSError):
                        conn.shutdown(socket.SHUT_RDWR)
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


__all__ = ["STREAM_PROTOCOL", "DaemonServer", "Route", "StreamRoute"]
