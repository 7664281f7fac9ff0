"""Reverie: durable, inspectable, poisoning-resistant long-term memory for LLM agents.

Memory is plain Markdown (``MEMORY.md``, ``USER.md``, ``memory/YYYY-MM-DD.md``) plus a
derived SQLite index that can be deleted and rebuilt at any time. Start with
:class:`Reverie` (the facade the CLI, the MCP server and the daemon all use).
"""

from .clock import Clock
from .engine import Reverie
from .errors import (
    ConfigError,
    IndexUnusable,
    ParseError,
    PathEscapeError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    ReverieError,
    WorkspaceError,
)
from .provenance.origin import Origin, SessionKind
from .results import Accepted, Rejected
from .settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "Accepted",
    "Clock",
    "ConfigError",
    "IndexUnusable",
    "Origin",
    "ParseError",
    "PathEscapeError",
    "ProviderError",
    "ProviderTimeout",
    "ProviderUnavailable",
    "Rejected",
    "Reverie",
    "ReverieError",
    "SessionKind",
    "Settings",
    "WorkspaceError",
    "__version__",
    "load_settings",
]
