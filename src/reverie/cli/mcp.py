"""``reverie mcp``: serve the memory tools to an MCP client over stdio.

Configure a client (Claude Desktop's ``claude_desktop_config.json``, or any client that
reads an ``mcpServers`` map) to start it::

    {
      "mcpServers": {
        "reverie": {
          "command": "reverie",
          "args": ["--workspace", "/home/me/.reverie/workspace", "mcp"]
        }
      }
    }

Add ``"--state-dir", "..."`` or ``"--embedder", "..."`` before ``"mcp"`` to override
them, or set ``REVERIE_*`` variables in the entry's ``"env"`` map. If ``reverie`` is not
on the client's ``PATH``, give the full path of the script (for example
``/path/to/venv/bin/reverie``). The server offers ``memory_search``, ``memory_get`` and ``memory_write``;
it syncs a stale index and warms the vectors in the background at start, syncs files
changed by hand before each call, and logs to stderr only (stdout carries the protocol).
``reverie mcp --http 127.0.0.1:8765`` serves the same over streamable HTTP at ``/mcp``;
add ``--tenants FILE`` to serve many tenants, each bearer token opening its own; the
hosted server also runs every tenant's daemon jobs (sync, nightly dream, git sync where
set up), ``tenant_jobs`` of them at once (:mod:`reverie.daemon.tenants`).
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import ConfigError
from .common import Ctx, handles_errors


def tenant_jobs(flags: dict[str, Any]) -> Any:
    """The hosted server's background: every tenant's daemon jobs (reverie.daemon.tenants),
    ``tenant_jobs`` at once, with the server's settings."""
    from ..daemon.tenants import JobSettings, TenantJobs
    from ..settings import load_settings

    settings = JobSettings.of(load_settings({k: v for k, v in flags.items() if v is not None}))

    def build(tenants: Any, open_engine: Any) -> TenantJobs:
        folders = {t: (tenants.get(t).workspace, tenants.get(t).state_dir) for t in tenants.ids()}
        return TenantJobs(folders, lambda t: open_engine(tenants.get(t)), settings)

    return build


def _log_to_stderr() -> None:
    """Reverie's own log lines (not the SDK's per-request ones) on stderr, at INFO."""
    import logging
    import sys

    log = logging.getLogger("reverie")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            logging.Formatter("%(asctime)s reverie[%(process)d] %(levelname)s %(message)s")
        )
        log.addHandler(handler)
        log.setLevel(logging.INFO)


@click.command()
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at HOST:PORT (path /mcp) instead of stdio, so several "
    "clients share one process. Loopback unless you name another address, which then "
    "needs --token.",
)
@click.option(
    "--token",
    envvar="REVERIE_MCP_TOKEN",
    help="Bearer token every HTTP request must carry (required off loopback) [REVERIE_MCP_TOKEN].",
)
@click.option(
    "--tenants",
    "tenants_file",
    metavar="FILE",
    envvar="REVERIE_MCP_TENANTS",
    help="Hosted mode (with --http): serve every tenant of this TOML file, each bearer "
    "token opening its own tenant's workspace, and run every tenant's sync and nightly "
    "dream, tenant_jobs at once [REVERIE_MCP_TENANTS].",
)
@click.option(
    "--max-open",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Hosted mode: tenants kept open at once (the least recently used idle one closes).",
)
@click.option("--json", "as_json", is_flag=True, help="Errors as JSON (the protocol is JSON).")
@click.pass_obj
@handles_errors
def mcp(
    obj: Ctx,
    address: str | None,
    token: str | None,
    tenants_file: str | None,
    max_open: int,
    as_json: bool,
) -> None:
    """Serve the memory tools, resources and the context prompt over MCP: stdio until the
    client disconnects, or streamable HTTP with --http (many tenants with --tenants)."""
    try:  # the MCP SDK loads only for this command
        from ..mcp_server import run_hosted, run_http, run_stdio
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"`reverie mcp` needs the MCP SDK ({exc.name} is missing): pip install 'mcp>=2.0'"
        ) from None
    if tenants_file:
        if not address:
            raise ConfigError("--tenants serves over HTTP: add --http HOST:PORT")
        if token or obj.flags.get("workspace") or obj.flags.get("state_dir"):
            raise ConfigError(
                "--tenants gives every tenant its token and folders: drop --token, "
                "--workspace and --state-dir"
            )
        _log_to_stderr()  # the tenants' jobs say what they ran and what failed
        jobs = tenant_jobs(obj.flags)
        run_hosted(tenants_file, address, flags=obj.flags, max_open=max_open, background=jobs)
    elif address:
        run_http(obj.engine, address, token=token)
    else:
        keeping = _keep_later(obj.engine, obj.mcp_primed)
        run_stdio(obj.engine, **obj.mcp_stdio)
        if keeping is not None and obj.mcp_primed.handshaken.is_set():
            keeping.join(timeout=KEEP_WAIT_S)  # a few milliseconds: not cut off at exit


KEEP_WAIT_S = 10.0  # the longest the end of a session waits for the answers being kept


def keep_handshakes(engine: Any, primed: Any) -> int:
    """Keep the SDK's answers to every handshake it supports (each protocol version) in
    ``primed``'s file, when one is not kept yet or the SDK's answer differed from the
    kept one: the next ``reverie mcp`` gives any of them at once, before the SDK loads
    (:mod:`reverie.cli.mcp_primed`). How many answers were new or changed. Needs the SDK
    (loaded here)."""
    from ..mcp_server import build_server
    from ..mcp_server.handshakes import handshake_answers, handshake_requests

    requests = handshake_requests()
    if primed.path is None or not (primed.stale or primed.missing(requests)):
        return 0
    answers = handshake_answers(build_server(engine, start=False), requests)
    return int(primed.keep_all(answers))


def _keep_later(engine: Any, primed: Any) -> Any:
    """A thread that keeps the handshakes' answers (:func:`keep_handshakes`) once the
    client's own handshake is answered, so a session after an upgrade keeps them for
    every protocol version; None when there is nothing to keep them in."""
    import threading

    if primed is None or primed.path is None:
        return None

    def keep() -> None:
        primed.handshaken.wait()  # the SDK answered it; never: waits until the exit
        try:
            keep_handshakes(engine, primed)
        except Exception as exc:  # never the session's failure: the next one tries again
            import logging

            logging.getLogger("reverie.mcp").warning("keeping the handshakes failed: %s", exc)

    thread = threading.Thread(target=keep, name="reverie-mcp-handshakes", daemon=True)
    thread.start()
    return thread
