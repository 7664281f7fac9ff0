"""``reverie mcp`` (stdio) relayed to a running ``reverie serve``: the first answer in
milliseconds instead of seconds.

An MCP client starts ``reverie mcp`` and waits for its answers; in its own process the
server would pay for importing the MCP SDK (seconds of CPU: it builds pydantic models
for every protocol type), the engine and the vectors' warm-up. When a daemon serves the
workspace (its endpoint in the state dir, as for :mod:`.client`), this process instead
opens one loopback connection to it (``POST /reverie/mcp`` with ``Upgrade:
reverie-mcp`` and the bearer token; the daemon answers ``101``) and copies bytes: stdin
to the socket, the socket to stdout. The daemon's MCP server, the same code as the
in-process one, answers on a warm engine. Nothing here imports the SDK, click or the
engine.

Anything else runs the server in-process exactly as before: no endpoint, a daemon
serving another workspace or down (a refused connection), a daemon that does not
relay (``mcp_relay = off``, no SDK) or answers anything but ``101``. The choice is made
before a byte of stdin is read, so the client never notices which one answered. Once
relayed, a daemon that stops ends the session (the client sees its server exit, as
when a server process dies).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .client import CHUNK, CONNECT_TIMEOUT, endpoint_for, post, split_globals

if TYPE_CHECKING:  # (loaded by the client once a daemon answers)
    import socket

ROUTE = "/reverie/mcp"  # reverie.cli.warm.MCP_ROUTE (not imported: it imports click)
PROTOCOL = "reverie-mcp"  # reverie.daemon.http.STREAM_PROTOCOL


def connect(endpoint: Any) -> tuple[socket.socket, bytes] | None:
    """The upgraded connection and any stream bytes read past the answer's head, or
    None when the daemon does not relay (the caller serves in-process)."""
    upgrade = f"Connection: Upgrade\r\nUpgrade: {PROTOCOL}\r\n"
    sent = post(endpoint, ROUTE, b"", upgrade, CONNECT_TIMEOUT)
    if sent is None:
        return None
    sock, status, _, rest = sent
    if status != 101:
        sock.close()
        return None
    sock.settimeout(None)
    return sock, rest


def pump(sock: socket.socket, rest: bytes, stdin: int = 0, stdout: int = 1) -> None:
    """Copy ``stdin`` to the socket and the socket to ``stdout`` until the daemon
    closes the session (it does once the client closed stdin, or when it stops)."""
    import socket  # (imported already: the client connected)

    def upstream() -> None:
        try:
            while data := os.read(stdin, CHUNK):
                sock.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)  # the client is done: the daemon ends the session

    threading.Thread(target=upstream, name="reverie-relay", daemon=True).start()
    try:
        data = rest
        while data:
            _write_all(stdout, data)
            data = sock.recv(CHUNK)
        while data := sock.recv(CHUNK):
            _write_all(stdout, data)
    except OSError:
        pass  # the daemon or the client went away: the session is over
    finally:
        sock.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run_mcp_relay(argv: Sequence[str]) -> bool:
    """Relay ``reverie [GLOBAL OPTIONS] mcp [--json]`` to the workspace's daemon (True:
    the session ran and ended), else False (serve in-process)."""
    split = split_globals(argv)
    if split is None or not split[1] or split[1][0] != "mcp":
        return False
    if any(a != "--json" for a in split[1][1:]):
        return False  # --http, --help...: the full CLI
    try:
        endpoint = endpoint_for(split[0])
    except Exception:  # bad settings: the in-process server says what is wrong
        return False
    connected = None if endpoint is None else connect(endpoint)
    if connected is None:
        return False
    sys.stdout.flush()
    pump(*connected)
    return True


__all__ = ["connect", "pump", "run_mcp_relay"]
