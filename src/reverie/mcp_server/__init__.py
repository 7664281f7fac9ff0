"""The MCP server: ``memory_search``, ``memory_get`` and ``memory_write``, resources for
``MEMORY.md``, ``USER.md`` and today's journal, and a ``context`` prompt, over stdio or
streamable HTTP.

A thin adapter over :class:`reverie.engine.Reverie`. Why it is shaped this way:

- The tool bodies live in :class:`MemoryTools` (:mod:`.tools`), plain synchronous
  methods that return a ``CallToolResult``; the SDK runs them on worker threads. Every
  engine call goes through one lock, and before each one a cheap stat check syncs files
  changed by hand, so a running server sees an edit within a second or two.
- Tools are registered per group (:mod:`.registry`): a new group is a module with a
  ``register(server, tools)`` function and one line in ``REGISTRARS``.
- Every tool has an output schema (:mod:`.schemas`); untrusted text is framed in
  ``structuredContent`` exactly as in the text content (a client that forwards the
  structured output to the model never hands it raw untrusted text); a hit's score
  chain (``explain``) is there only when asked.
- Nothing reaches the client as a crash: a :class:`~reverie.errors.ReverieError` and
  any other exception come back as a tool result with ``isError`` set.
- Start-up never blocks the handshake: syncing a dirty or empty index and warming the
  vectors run on a background thread; a tool call that arrives meanwhile waits.
- stdout carries the protocol and nothing else (stdio); over HTTP (:mod:`.http`) the
  default is loopback, and any other address needs a bearer token.
- Hosted (:mod:`.hosted`, ``--tenants FILE``): one process serves many tenants, the
  bearer token picking the tenant (:mod:`.tenants`), one engine per tenant.
"""

from __future__ import annotations

from .http import run_hosted, run_http
from .registry import REGISTRARS, SERVER_NAME, build_server, run_stdio, serve_connection
from .schemas import INSTRUCTIONS, MAX_RESULTS_CAP, GetOut, SearchHitOut, SearchOut, WriteOut
from .tools import MemoryTools

__all__ = [
    "INSTRUCTIONS",
    "MAX_RESULTS_CAP",
    "REGISTRARS",
    "SERVER_NAME",
    "GetOut",
    "MemoryTools",
    "SearchHitOut",
    "SearchOut",
    "WriteOut",
    "build_server",
    "run_hosted",
    "run_http",
    "run_stdio",
    "serve_connection",
]
