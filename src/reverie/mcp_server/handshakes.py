"""The SDK's own answers to every handshake a client may open a session with, for
``reverie mcp`` to keep (:mod:`reverie.cli.mcp_primed`) and to give at once, before the
SDK loads, to a later client that asks the same.

A handshake is ``initialize`` at a protocol version the SDK negotiates that way
(``HANDSHAKE_PROTOCOL_VERSIONS``), or ``server/discover`` at a per-request version
(``MODERN_PROTOCOL_VERSIONS``). Each is answered by one session of the server, the same
code as the stdio server's (:func:`.registry.serve_lines`), with a client that sends the
request and hangs up once it is answered: the answers are the SDK's by construction, no
copy of its rules. A few milliseconds each once the SDK is loaded.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from .registry import serve_lines

CLIENT = {"name": "reverie-handshakes", "version": "1"}
WAIT_S = 60.0  # an answer the server never gives ends the session after this


def handshake_requests() -> list[dict[str, Any]]:
    """One request per handshake the installed SDK answers: ``initialize`` at each of
    its handshake protocol versions, ``server/discover`` at each per-request one."""
    init = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": v, "capabilities": {}, "clientInfo": CLIENT}}
        for v in HANDSHAKE_PROTOCOL_VERSIONS
    ]  # fmt: skip
    discover = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
         "params": {"_meta": {PROTOCOL_VERSION_META_KEY: v, CLIENT_INFO_META_KEY: CLIENT,
                              CLIENT_CAPABILITIES_META_KEY: {}}}}
        for v in MODERN_PROTOCOL_VERSIONS
    ]  # fmt: skip
    return init + discover


class _Asker:
    """A client that sends one request and hangs up once the server answered it."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request, self.result = request, None
        self._line, self._part = json.dumps(request) + "\n", ""
        self._answered = threading.Event()

    def readline(self) -> str:
        line, self._line = self._line, ""
        if not line:  # the request went: the end of input once it is answered
            self._answered.wait(WAIT_S)
        return line

    def write(self, text: str) -> int:
        self._part += text
        while "\n" in self._part:
            line, self._part = self._part.split("\n", 1)
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == self.request["id"]:
                self.result = message.get("result")  # None: an error
                self._answered.set()
        return len(text)

    def flush(self) -> None:
        pass


def handshake_answers(
    server: MCPServer, requests: list[dict[str, Any]] | None = None
) -> list[tuple[dict[str, Any], Any]]:
    """Each request (default :func:`handshake_requests`) with the result ``server``
    answers it with, one session each; a request answered with an error is left out.
    Build ``server`` with ``start=False``: these sessions need no sync."""
    answers: list[tuple[dict[str, Any], Any]] = []
    for request in requests if requests is not None else handshake_requests():
        asker = _Asker(request)
        anyio.run(serve_lines, server, asker, asker)
        if asker.result is not None:
            answers.append((request, asker.result))
    return answers


__all__ = ["handshake_answers", "handshake_requests"]
