"""``reverie mcp`` in-process answers ``initialize`` at once (issue 43, point 5).

An MCP client starts the server and waits for its answer to ``initialize``; served
in-process, that answer needs the MCP SDK (its protocol types are built at import),
the engine and the server's tools: a second or more of CPU on a busy machine, and a
client with a short start-up timeout gives up. The answer depends only on Reverie's
and the SDK's versions and on the protocol version the client asks for, so the SDK's
answer is kept in the state folder (:attr:`Workspace.mcp_initialize_path`, no memory
text in it) and given at once to the next client that asks the same, before the SDK is
imported. The SDK then reads that same ``initialize`` (its session needs it); its own
answer is not sent a second time, and is kept anew when it differs (an upgrade the
versions did not tell). With no kept answer the SDK answers, as before, and its answer
is kept.

So that the first start is fast too (of a state folder, after an upgrade of Reverie or
of the SDK), the SDK's answers to every handshake it supports, each protocol version,
are kept where the SDK is loaded anyway: ``reverie install claude-code`` keeps them, and
so does every in-process session whose kept answers miss one (or differ from the SDK's),
in the background once the SDK answered its client's handshake
(:func:`reverie.cli.mcp.keep_handshakes`; the answers come from the server itself,
:mod:`reverie.mcp_server.handshakes`). Nothing here imports the SDK, click or the engine.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

# the first request of a session: ``initialize``, or ``server/discover`` from a client
# of the 2026 protocol (the SDK's own ``mcp.Client`` asks it first)
HANDSHAKES = ("initialize", "server/discover")
MAX_KEPT = 16  # answers kept: one per handshake and protocol version, and versions
MAX_LINE = 16 * 1024 * 1024  # one JSON-RPC message (reverie.mcp_server.registry's bound)


@dataclass
class Primed:
    """The first line the client sent, whether it was answered already, and the
    answers kept at ``path``."""

    first: bytes
    path: Path | None = None
    key: str = ""
    request_id: Any = None
    answered: bool = False
    kept: dict[str, Any] = field(default_factory=dict)
    # set once the SDK answered the client's handshake (sent or, answered here, not)
    handshaken: threading.Event = field(default_factory=threading.Event)
    stale: bool = False  # the SDK's answer differs from the one kept: keep them all anew
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self) -> Primed:
        """The answers kept at ``path`` read (none when it cannot be read)."""
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8")) if self.path else {}
        except (OSError, ValueError):
            kept = {}
        with self._lock:
            self.kept = kept if isinstance(kept, dict) else {}
        return self

    def seen(self, line: str) -> bool:
        """Whether the SDK's output ``line`` goes to the client: not when it is the
        SDK's answer to the ``initialize`` already answered (it is kept anew if it
        differs); the SDK's first answer to it is kept."""
        if self.request_id is None or not self.key:
            return True
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or message.get("id") != self.request_id:
            return True
        if "result" not in message:
            return True
        result, self.request_id = message["result"], None  # only the first answer
        self.stale = bool(self._store({self.key: result})) and self.answered
        self.handshaken.set()
        return not self.answered

    def missing(self, requests: Iterable[Any]) -> bool:
        """Whether the answer to one of these handshake requests is not kept."""
        with self._lock:
            return any(handshake_key(r) not in self.kept for r in requests)

    def keep_all(self, answers: Iterable[tuple[Any, Any]]) -> int:
        """Keep each (handshake request, the SDK's result) pair; how many were new or
        changed (0: nothing written)."""
        updates = {}
        for request, result in answers:
            key = handshake_key(request)
            if key is not None:
                updates[key] = result
        return self._store(updates)

    def _store(self, updates: dict[str, Any]) -> int:
        with self._lock:
            changed = {k: v for k, v in updates.items() if self.kept.get(k) != v}
            if not changed or self.path is None:
                return 0
            older = [(k, v) for k, v in self.kept.items() if k not in updates]
            room = max(MAX_KEPT - len(updates), 0)
            self.kept = dict(older[-room:] if room else []) | updates
            try:
                from ..storage.files import atomic_write

                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(self.path, json.dumps(self.kept, ensure_ascii=False))
            except OSError:  # a state folder we cannot write: the next start asks the SDK
                return 0
            return len(changed)


@cache
def _versions() -> str:
    from importlib import metadata

    from ..about import version

    try:
        sdk = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        sdk = "none"
    return f"reverie {version()}; mcp {sdk}"


def handshake_key(request: Any) -> str | None:
    """The key a handshake request's answer is kept under: the versions of Reverie and
    of the SDK, the method and the protocol version asked (None: not a handshake)."""
    if not isinstance(request, dict) or request.get("method") not in HANDSHAKES:
        return None
    params = request.get("params") or {}
    meta = params.get("_meta") or {} if isinstance(params, dict) else {}
    if "id" not in request or not isinstance(params, dict) or not isinstance(meta, dict):
        return None
    asked = params.get("protocolVersion") or meta.get("io.modelcontextprotocol/protocolVersion")
    return f"{_versions()}; {request['method']}; protocol {asked}"


def prime(path: Path | None, stdin: BinaryIO, stdout: BinaryIO) -> Primed:
    """Read the client's first line; when it is a handshake (:data:`HANDSHAKES`) whose
    answer is kept at ``path``, write that answer to ``stdout`` now."""
    primed = Primed(stdin.readline(MAX_LINE + 1), path)
    try:
        request = json.loads(primed.first)
    except ValueError:
        return primed
    key = handshake_key(request)
    if key is None or path is None:
        return primed
    primed.key, primed.request_id = key, request["id"]
    result = primed.load().kept.get(key)
    if result is not None:
        answer = {"jsonrpc": "2.0", "id": primed.request_id, "result": result}
        stdout.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
        stdout.flush()
        primed.answered = True
    return primed


def kept_path(flags: dict[str, Any]) -> Path | None:
    """Where this workspace's answers are kept (None: the settings cannot be read, and
    the full command says why)."""
    try:
        from ..settings import load_settings
        from ..storage.workspace import Workspace

        s = load_settings({k: v for k, v in flags.items() if v is not None})
        return Workspace(Path(s.workspace), Path(s.state_dir), s.agent).mcp_initialize_path
    except Exception:
        return None


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; file descriptors 0 and 1 then
    point at the null device and at stderr, so nothing else the process runs reads the
    client's input or writes into the protocol (as the SDK's own stdio transport does)."""
    sys.stdout.flush()
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return proto_in, proto_out


__all__ = ["Primed", "claim_stdio", "handshake_key", "kept_path", "prime"]
