"""The CLI's warm path: ``reverie search`` and ``reverie context`` answered by a running
``reverie serve`` (see :mod:`reverie.cli.warm`), before click or the engine is imported.

It reads the same global options as the click group, finds the daemon's endpoint in
the state dir those options (and the environment, and the config file) name, and sends
the command line; the daemon runs the same click command on its warm engine and sends
back its output and exit code. Anything else runs in-process as before: no endpoint,
a daemon serving another workspace, nothing listening (a refused connection), an
answer that is not a 200, ``--help``. A daemon that is down costs one refused
connection.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .argv import GLOBAL_OPTIONS, split_globals

if TYPE_CHECKING:
    import socket

WARM_COMMANDS = ("search", "context")
HOOK_EVENTS = ("user-prompt-submit", "session-start")  # the hooks the daemon answers
CONNECT_TIMEOUT = 2.0  # seconds; loopback answers in microseconds or refuses
ANSWER_TIMEOUT = 120.0  # a search waits behind the daemon's sync, as in-process
# the daemon acknowledges a request (an interim 102) as soon as it has read it: a daemon
# that accepts connections but says nothing within this is frozen, and the command runs
# in-process instead of waiting out ANSWER_TIMEOUT
FIRST_BYTE_TIMEOUT = 5.0
INTERIM = "X-Reverie-Interim: 102\r\n"
CHUNK = 64 * 1024
MAX_HEAD = 16 * 1024


def _absolute_cwd(args: list[str]) -> list[str]:
    """``--cwd DIR`` made absolute: the daemon runs in another directory."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--cwd":
            out += [arg, os.path.abspath(next(it, ""))]
        elif arg.startswith("--cwd="):
            out.append("--cwd=" + os.path.abspath(arg[len("--cwd=") :]))
        else:
            out.append(arg)
    return out


def endpoint_for(flags: dict[str, str]) -> Any:
    """The endpoint of the daemon serving the workspace these flags open, or None."""
    from ..settings import load_settings
    from ..storage.endpoint import Endpoint
    from ..storage.workspace import daemon_endpoint_path

    settings = load_settings(flags)
    state_dir = Path(str(settings.state_dir)).expanduser().resolve()
    endpoint = Endpoint.load(daemon_endpoint_path(state_dir, str(settings.agent)))
    root = str(Path(str(settings.workspace)).expanduser().resolve())
    return endpoint if endpoint is not None and endpoint.workspace == root else None


def post(
    endpoint: Any, route: str, body: bytes, headers: str, timeout: float
) -> tuple[socket.socket, int, bytes, bytes] | None:
    """One POST on a new loopback connection (plain sockets: ``http.client`` costs
    more to import than the daemon takes to answer): the socket, the answer's status,
    its head, and the bytes read past the head; None when nothing answered."""
    import socket  # (a daemon's endpoint was found: a one-shot command never asks)

    try:
        sock = socket.create_connection(("127.0.0.1", endpoint.port), timeout=CONNECT_TIMEOUT)
    except OSError:
        return None
    try:
        sock.settimeout(min(timeout, FIRST_BYTE_TIMEOUT))
        request = (
            f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
            f"Authorization: Bearer {endpoint.token}\r\nContent-Length: {len(body)}\r\n"
            f"{INTERIM}{headers}\r\n"
        )
        sock.sendall(request.encode("latin-1") + body)
        answer = b""
        while True:
            while b"\r\n\r\n" not in answer:
                data = sock.recv(CHUNK)
                if not data or len(answer) > MAX_HEAD:
                    raise OSError("no answer")
                answer += data
                sock.settimeout(timeout)  # it is alive: now wait for the answer itself
            head, _, rest = answer.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 102"):
                break
            answer = rest  # the interim acknowledgement; the answer follows
        status = head.split(b"\r\n", 1)[0].split()
        return sock, int(status[1]), head, rest
    except (OSError, ValueError, IndexError):
        sock.close()
        return None


def ask(endpoint: Any, route: str, body: bytes, timeout: float = ANSWER_TIMEOUT) -> bytes | None:
    """The daemon's 200 answer to one request, or None (nothing listening, refused,
    an error status): the caller then runs in-process."""
    sent = post(
        endpoint, route, body, "Content-Type: application/json\r\nConnection: close\r\n", timeout
    )
    if sent is None:
        return None
    sock, status, head, data = sent
    try:
        length = -1
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while length < 0 or len(data) < length:
            more = sock.recv(CHUNK)
            if not more:
                break
            data += more
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    if status != 200 or (length >= 0 and len(data) != length):
        return None
    return data


def run_warm(argv: Sequence[str]) -> bool:
    """Answer ``argv`` from the daemon when it is a warm command and a daemon serves
    its workspace (True: printed, exit code set), else False (run it in-process)."""
    split = split_globals(argv)
    if split is None:
        return False
    flags, args = split
    if not args or args[0] not in WARM_COMMANDS or {"-h", "--help"} & set(args):
        return False
    try:
        endpoint = endpoint_for(flags)
    except Exception:  # bad settings: the full CLI says what is wrong
        return False
    if endpoint is None:
        return False
    body = json.dumps({"argv": _absolute_cwd(args)}, ensure_ascii=False).encode()
    raw = ask(endpoint, "/reverie/cli", body)
    if raw is None:
        return False
    try:
        answer = json.loads(raw)
        code, out, err = int(answer["code"]), str(answer["stdout"]), str(answer["stderr"])
    except (ValueError, KeyError, TypeError):
        return False
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    sys.stderr.flush()
    if code:
        sys.exit(code)
    return True


__all__ = [
    "GLOBAL_OPTIONS",
    "HOOK_EVENTS",
    "WARM_COMMANDS",
    "ask",
    "post",
    "run_warm",
    "split_globals",
]
