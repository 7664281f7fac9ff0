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
``reverie mcp --http 127.0.0.1:8765`` serves the same over streamable HTTP at ``/mcp``.
"""

from __future__ import annotations

import click

from ..errors import ConfigError
from .common import Ctx, handles_errors


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
@click.option("--json", "as_json", is_flag=True, help="Errors as JSON (the protocol is JSON).")
@click.pass_obj
@handles_errors
def mcp(obj: Ctx, address: str | None, token: str | None, as_json: bool) -> None:
    """Serve the memory tools, resources and the context prompt over MCP: stdio until the
    client disconnects, or streamable HTTP with --http."""
    try:
        from ..mcp_server import run_http, run_stdio  # the MCP SDK loads only for this command
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"`reverie mcp` needs the MCP SDK ({exc.name} is missing): pip install 'mcp>=2.0'"
        ) from None
    if address:
        run_http(obj.engine, address, token=token)
    else:
        run_stdio(obj.engine)
