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
is kept. Nothing here imports the SDK, click or the engine.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

# the first request of a session: ``initialize``, or ``server/discover`` from a client
# of the 2026 protocol (the SDK's own ``mcp.Client`` asks it first)
HANDSHAKES = ("initialize", "server/discover")
MAX_KEPT = 8  # answers kept (one per protocol version a client asked for, and versions)
MAX_LINE = 16 * 1024 * 1024  # one JSON-RPC message (reverie.mcp_server.registry's bound)


@dataclass
class Primed:
    """The first line the client sent, and whether it was answered already."""

    first: bytes
    path: Path | None = None
    key: str = ""
    request_id: Any = None
    answered: bool = False
    kept: dict[str, Any] = field(default_factory=dict)

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
        if self.kept.get(self.key) != result:
            self._keep(result)
        return not self.answered

    def _keep(self, result: Any) -> None:
        if self.path is None:
            return
        kept = {k: v for k, v in self.kept.items() if k != self.key}
        kept = dict(list(kept.items())[-(MAX_KEPT - 1) :]) | {self.key: result}
        try:
            from ..storage.files import atomic_write

            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(kept, ensure_ascii=False))
        except OSError:  # a state folder we cannot write: the next start asks the SDK
            pass


def _versions() -> str:
    from importlib import metadata

    from ..about import version

    try:
        sdk = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        sdk = "none"
    return f"reverie {version()}; mcp {sdk}"


def prime(path: Path | None, stdin: BinaryIO, stdout: BinaryIO) -> Primed:
    """Read the client's first line; when it is a handshake (:data:`HANDSHAKES`) whose
    answer is kept at ``path``, write that answer to ``stdout`` now."""
    primed = Primed(stdin.readline(MAX_LINE + 1), path)
    try:
        request = json.loads(primed.first)
    except ValueError:
        return primed
    if not isinstance(request, dict) or request.get("method") not in HANDSHAKES:
        return primed
    if "id" not in request or path is None:
        return primed
    params: dict[str, Any] = request.get("params") or {}
    meta: dict[str, Any] = params.get("_meta") or {} if isinstance(params, dict) else {}
    if not isinstance(params, dict) or not isinstance(meta, dict):
        return primed
    asked = params.get("protocolVersion") or meta.get("io.modelcontextprotocol/protocolVersion")
    primed.key = f"{_versions()}; {request['method']}; protocol {asked}"
    primed.request_id = request["id"]
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        primed.kept = kept if isinstance(kept, dict) else {}
    except (OSError, ValueError):
        primed.kept = {}
    result = primed.kept.get(primed.key)
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


__all__ = ["Primed", "claim_stdio", "kept_path", "prime"]
