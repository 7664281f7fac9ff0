"""``reverie serve``: the background daemon (file watcher, backstop sync, nightly dream).

Run it under a service manager (systemd, launchd) or in a terminal; stop it with
SIGTERM or Ctrl-C, which lets the current step finish and exits 0 (a second signal
ends it at once). Without a service manager, ``reverie serve --once`` from cron (say
every 15 minutes) does one sync and runs the dream if its slot has passed.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from dataclasses import asdict
from types import FrameType
from typing import Any

import click

from ..daemon import Daemon
from ..daemon.http import DaemonServer
from ..daemon.remote import RemoteSync
from .common import Ctx, handles_errors, json_option
from .warm import routes


def _install_stop_handlers(stop: threading.Event) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        logging.getLogger("reverie.daemon").info(
            "%s received; finishing the current step", signal.Signals(signum).name
        )
        # Setting an Event inside a signal handler can deadlock if the main thread
        # holds the Event's internal lock at that instant, so hand it to a thread.
        threading.Thread(target=stop.set, daemon=True).start()
        signal.signal(signum, signal.SIG_DFL)  # a second signal ends the process at once

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


@click.command()
@click.option("--no-watch", is_flag=True, help="No file watcher; rely on the periodic sync.")
@click.option("--no-schedule", is_flag=True, help="Never dream; only keep the index fresh.")
@click.option("--once", is_flag=True, help="One sync and one due-dream check, then exit.")
@click.option(
    "--no-http",
    is_flag=True,
    help="No loopback server: Claude Code's hooks and the CLI run one-shot.",
)
@click.option(
    "--sync-every",
    type=click.FloatRange(min=0, min_open=True),
    metavar="MINUTES",
    help="Also run `reverie sync` (git) every MINUTES, first at start (sync set up first).",
)
@json_option
@click.pass_obj
@handles_errors
def serve(
    obj: Ctx,
    no_watch: bool,
    no_schedule: bool,
    once: bool,
    no_http: bool,
    sync_every: float | None,
    as_json: bool,
) -> None:
    """Keep the index fresh as files change and dream on schedule (default 03:00), and
    answer Claude Code's per-prompt hook and `reverie search` / `context` warm, on
    127.0.0.1 (the port and token are kept in daemon-endpoint.json in the state dir)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            format="%(asctime)s reverie[%(process)d] %(levelname)s %(message)s",
        )
    engine = obj.engine
    engine.workspace.require()
    warm = None if once or no_http else routes(obj)
    server = None
    if warm is not None:
        prepare = warm.prepare if engine.settings.mcp_relay == "warm" else None
        server = DaemonServer(engine.workspace, warm.routes, warm.streams, on_start=prepare)
    remote = None if sync_every is None else RemoteSync(lambda: engine.sync.run(), sync_every)
    daemon = Daemon(
        engine, watch=not no_watch, schedule=not no_schedule, server=server, remote=remote
    )
    if warm is not None:
        warm.current = daemon.watched_current  # before the server starts, with the run
    stop = threading.Event()
    if not once:
        _install_stop_handlers(stop)
    try:
        summary = daemon.run(stop, once=once)
    finally:
        if warm is not None:
            warm.close()
    data: dict[str, Any] = asdict(summary)
    try:
        status = engine.status()
        data["index"] = {k: status[k] for k in ("files", "chunks", "dirty", "last_sync")}
    except Exception as exc:  # the summary matters more than the status
        data["index"] = {"error": f"{type(exc).__name__}: {exc}"}
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
    else:
        click.echo(
            f"{summary.syncs} syncs ({summary.sync_errors} failed), {summary.dreams} dreams "
            f"({summary.dream_errors} failed); next dream {summary.next_dream or '-'}"
        )
    if once and summary.failed:
        sys.exit(1)  # a cron job should see that a step failed
