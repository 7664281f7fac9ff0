"""Reverie: durable, inspectable, poisoning-resistant long-term memory for LLM agents.

Memory is plain Markdown (``MEMORY.md``, ``USER.md``, ``memory/YYYY-MM-DD.md``) plus a
derived SQLite index that can be deleted and rebuilt at any time. Start with
:class:`Reverie` (the facade the CLI, the MCP server and the daemon all use) and
:meth:`Reverie.open_session` (the session API an agent loop calls). The result types
those return are exported here too, so callers can name them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .clock import Clock
    from .dreaming.report import CandidateReport, DreamReport
    from .engine import Reverie
    from .errors import (
        ConfigError,
        DaemonBusy,
        IndexUnusable,
        ParseError,
        PathEscapeError,
        ProviderError,
        ProviderTimeout,
        ProviderUnavailable,
        ReverieError,
        SyncError,
        ToolArgumentError,
        WorkspaceError,
        WriteError,
    )
    from .provenance import Author, Channel, Origin, SessionKind, Source, SourceKind
    from .recall.bootstrap import Bootstrap
    from .recall.context import TurnContext
    from .recall.search import GetResult, Hit, SearchResponse
    from .results import Accepted, Outcome, Pending, Rejected
    from .session import Recorded, Session, SessionHost
    from .settings import Settings, load_settings
    from .storage.document import FileWarning
    from .storage.index.sync import SyncStats
    from .write.flush import FlushDecision, FlushResult
    from .write.ingest import IngestResult
    from .write.journal import Appended

# Loaded on first use, so that a one-shot command (``reverie hook ...``, run on every
# prompt) imports only what it needs rather than the whole engine.
_HOME = {
    "Clock": ".clock",
    "CandidateReport": ".dreaming.report",
    "DreamReport": ".dreaming.report",
    "Reverie": ".engine",
    "ConfigError": ".errors",
    "DaemonBusy": ".errors",
    "IndexUnusable": ".errors",
    "ParseError": ".errors",
    "ToolArgumentError": ".errors",
    "PathEscapeError": ".errors",
    "ProviderError": ".errors",
    "ProviderTimeout": ".errors",
    "ProviderUnavailable": ".errors",
    "ReverieError": ".errors",
    "WorkspaceError": ".errors",
    "WriteError": ".errors",
    "SyncError": ".errors",
    "Author": ".provenance",
    "Channel": ".provenance",
    "Origin": ".provenance",
    "SessionKind": ".provenance",
    "Source": ".provenance",
    "SourceKind": ".provenance",
    "Bootstrap": ".recall.bootstrap",
    "TurnContext": ".recall.context",
    "GetResult": ".recall.search",
    "Hit": ".recall.search",
    "SearchResponse": ".recall.search",
    "Accepted": ".results",
    "Outcome": ".results",
    "Pending": ".results",
    "Rejected": ".results",
    "Recorded": ".session",
    "Session": ".session",
    "SessionHost": ".session",
    "Settings": ".settings",
    "load_settings": ".settings",
    "FileWarning": ".storage.document",
    "SyncStats": ".storage.index.sync",
    "FlushDecision": ".write.flush",
    "FlushResult": ".write.flush",
    "IngestResult": ".write.ingest",
    "Appended": ".write.journal",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({n for n in globals() if n.startswith("_")} | set(_HOME))


__version__ = "0.1.0"

__all__ = [
    "Accepted",
    "Appended",
    "Author",
    "Bootstrap",
    "CandidateReport",
    "Channel",
    "Clock",
    "ConfigError",
    "DaemonBusy",
    "DreamReport",
    "FileWarning",
    "FlushDecision",
    "FlushResult",
    "GetResult",
    "Hit",
    "IndexUnusable",
    "IngestResult",
    "Origin",
    "Outcome",
    "ParseError",
    "PathEscapeError",
    "Pending",
    "ProviderError",
    "ProviderTimeout",
    "ProviderUnavailable",
    "Recorded",
    "Rejected",
    "Reverie",
    "ReverieError",
    "SearchResponse",
    "Session",
    "SessionHost",
    "SessionKind",
    "Settings",
    "Source",
    "SourceKind",
    "SyncError",
    "SyncStats",
    "ToolArgumentError",
    "TurnContext",
    "WorkspaceError",
    "WriteError",
    "__version__",
    "load_settings",
]
