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
it syncs a stale index and warms the vectors in the background at start, and logs to
stderr only (stdout carries the protocol).
"""

from __future__ import annotations

import click

from ..errors import ConfigError
from .common import Ctx, handles_errors


@click.command()
@click.pass_obj
@handles_errors
def mcp(obj: Ctx) -> None:
    """Serve memory_search, memory_get and memory_write over MCP (stdio) until the client disconnects."""
    try:
        from ..mcp_server import run_stdio  # the MCP SDK loads only for this command
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"`reverie mcp` needs the MCP SDK ({exc.name} is missing): pip install 'mcp>=2.0'"
        ) from None
    run_stdio(obj.engine)
