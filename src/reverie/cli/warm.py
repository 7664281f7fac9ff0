"""What ``reverie serve`` answers on its loopback server (:mod:`reverie.daemon.http`).

- ``/reverie/hook/<event>``: Claude Code's HTTP hook. The one-shot hook's own code
  (:func:`reverie.integrations.hooks.run`) on a warm engine opened once from the same
  options, so the answer is byte for byte what ``reverie hook <event>`` prints.
- ``/reverie/cli``: ``reverie search`` and ``reverie context`` (:data:`WARM_COMMANDS`) sent by
  :mod:`reverie.cli.client`: the same click command runs here, on the daemon's engine,
  its output captured and sent back with its exit code, so the output is the same as
  the in-process command's. One at a time (the capture swaps ``sys.stdout``).
- ``/reverie/mcp`` (a stream route, setting ``mcp_relay``): ``reverie mcp`` over stdio
  relays its bytes here (:mod:`reverie.cli.relay`) and the daemon's MCP server answers:
  the same :func:`reverie.mcp_server.build_server` (same tools, same provenance: the
  connected agent's writes are computed by the same code) on the CLI's engine.
  ``warm`` (the default): that engine is opened and warmed (vectors and BM25 in memory)
  and the SDK imported on a background thread at the daemon's start, so a client's
  first search finds them ready.
- While the daemon's file watcher runs and saw no change since its last sync
  (:meth:`reverie.daemon.Daemon.watched_current`), a search here skips the walk over
  the files that checks the index is current (one ``stat`` per file: 5,000 files cost
  more than the search).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click

from ..daemon.http import Route, StreamRoute
from ..engine import Reverie
from ..integrations.hooks import run, stdout_bytes
from . import recall
from .client import HOOK_EVENTS, WARM_COMMANDS
from .common import Ctx

MCP_ROUTE = "/reverie/mcp"
log = logging.getLogger("reverie.daemon")

COMMANDS: dict[str, click.Command] = {"search": recall.search, "context": recall.context}
assert set(COMMANDS) == set(WARM_COMMANDS)


@dataclass
class Warm:
    """The routes and the engines they answer with (closed by :meth:`close`)."""

    obj: Ctx
    routes: dict[str, Route] = field(default_factory=dict)
    streams: dict[str, StreamRoute] = field(default_factory=dict)
    current: Callable[[], bool] | None = None  # Daemon.watched_current, once it exists
    _hook_engine: Reverie | None = None
    _cli: Ctx | None = None
    _mcp: Any = None  # the MCP server (reverie.mcp_server.build_server)
    _opening: threading.Lock = field(default_factory=threading.Lock)
    _mcp_opening: threading.Lock = field(default_factory=threading.Lock)
    _capture: threading.Lock = field(default_factory=threading.Lock)

    def hook_engine(self) -> Reverie:
        """The hooks' own engine: a hook limits lane 2 to its deadline, which must not
        leak into ``reverie context``."""
        with self._opening:
            if self._hook_engine is None:
                engine = Reverie.open(**self._flags())
                try:  # the trigger index in memory (not the vectors: a hook never needs
                    engine.warm(lanes=False)  # them warm): no snapshot look-ups per prompt
                except Exception as exc:  # P5: the hook answers from the snapshot
                    log.warning("warming the hooks' triggers failed: %s", exc)
                self._hook_engine = engine
            return self._hook_engine

    def cli_ctx(self) -> Ctx:
        """The CLI's own engine, on its own connection, sharing the daemon's embedder:
        a search never waits behind the daemon's sync (it sees the sync lock busy, as
        another process would, and searches the index as it stands)."""
        with self._opening:
            if self._cli is None:
                ctx = Ctx(self.obj.flags)
                embedder = self.obj.engine.embedder
                ctx._engine = Reverie.open(**self._flags(), use_embedder=embedder)
                ctx.current = self.current
                self._cli = ctx
            return self._cli

    def mcp_server(self) -> Any:
        """The relayed sessions' MCP server, built once on the CLI's engine (one warm
        copy of the vectors; one lock around both doors' engine calls); its sync and
        warm-up run on a background thread, as in a ``reverie mcp`` process."""
        with self._mcp_opening:
            if self._mcp is None:
                from ..mcp_server import MemoryTools, build_server

                engine = self.cli_ctx().engine
                tools = MemoryTools(engine, lock=self._capture, current=self.current)
                tools.start_background()
                self._mcp = build_server(engine, tools=tools)
            return self._mcp

    def mcp_stream(self, reader: Any, writer: Any) -> None:
        from ..mcp_server import serve_connection

        serve_connection(self.mcp_server(), reader, writer)

    def prepare(self) -> threading.Thread:
        """``mcp_relay = warm``: in the background, open and warm the engine of the CLI
        and MCP doors (vectors and BM25 in memory) and load the MCP server."""

        def prepare() -> None:
            try:
                if self.streams:
                    self.mcp_server()  # its start-up warms the engine
                else:
                    engine = self.cli_ctx().engine
                    with self._capture:
                        engine.warm()
            except Exception as exc:  # P5: cold answers; `reverie mcp` falls back
                log.error("warming the daemon's engine failed: %s: %s", type(exc).__name__, exc)

        thread = threading.Thread(target=prepare, name="reverie-warm", daemon=True)
        thread.start()
        return thread

    def _flags(self) -> dict[str, Any]:
        return {k: v for k, v in self.obj.flags.items() if v is not None}

    def hook(self, event: str) -> Route:
        def answer(body: bytes) -> tuple[int, str, bytes]:
            engine = self.hook_engine()
            return (
                200,
                "application/json",
                stdout_bytes(run(event, body, self._flags(), warm=engine)),
            )

        return answer

    def cli(self, body: bytes) -> tuple[int, str, bytes]:
        request = json.loads(body)
        argv = [str(a) for a in request["argv"]]
        command = COMMANDS.get(argv[0]) if argv else None
        if command is None:
            return 404, "application/json", b'{"error": "not a warm command"}'
        out, err = io.StringIO(), io.StringIO()
        with self._capture, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _invoke(command, argv, self.cli_ctx())
        if code is None:  # a usage error: the client runs it in-process, for click's words
            return 422, "application/json", b'{"error": "usage"}'
        answer = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
        return 200, "application/json", json.dumps(answer, ensure_ascii=False).encode()

    def close(self) -> None:
        opened = [self._hook_engine, self._cli._engine if self._cli else None]
        for engine in [e for e in opened if e is not None]:
            with contextlib.suppress(Exception):
                engine.close()


def _invoke(command: click.Command, argv: list[str], obj: Ctx) -> int | None:
    """The command's exit code; None for a usage error (or ``--help``)."""
    try:
        command.main(argv[1:], prog_name=f"reverie {argv[0]}", standalone_mode=False, obj=obj)
    except click.ClickException:
        return None
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:  # handles_errors: the documented exit code
        return int(exc.code) if isinstance(exc.code, int) else 1
    return 0


def routes(obj: Ctx) -> Warm:
    """The loopback routes of ``reverie serve`` for the agent ``obj`` opens."""
    warm = Warm(obj)
    warm.routes = {f"/reverie/hook/{event}": warm.hook(event) for event in HOOK_EVENTS}
    warm.routes["/reverie/cli"] = warm.cli
    relay = str(obj.engine.settings.mcp_relay)
    if relay != "off" and importlib.util.find_spec("mcp") is not None:
        warm.streams[MCP_ROUTE] = warm.mcp_stream  # without the SDK: `reverie mcp` says so
    return warm


__all__ = ["COMMANDS", "MCP_ROUTE", "Warm", "routes"]
