"""One exception tree for everything Reverie raises on purpose::

    ReverieError                   exit code 1 (general)
    ├── ConfigError                2  a setting, config file or environment variable is bad
    ├── WorkspaceError             3  no workspace, not initialised
    │   └── PathEscapeError           a path leaves the workspace
    ├── IndexUnusable              4  the SQLite index is corrupt, locked or of another schema
    ├── ProviderError              5  an explicitly configured embedder or LLM failed
    │   ├── ProviderUnavailable       unreachable, or refused us (bad URL, bad key)
    │   └── ProviderTimeout           no answer within its timeout
    ├── ParseError                 1  input could not be parsed (names the file and line)
    ├── ToolArgumentError          1  a memory tool was called with arguments it does not take
    ├── WriteError                 1  a write did not land; nothing of it is left (names the file)
    ├── SyncError                  1  reverie sync stopped (remote unreachable or rewritten,
    │                                 device not paired); the local workspace is untouched
    └── DaemonBusy                 1  another daemon already serves this state dir

Expected outcomes (a gate rejecting a candidate, a check refusing a rewrite) are not
exceptions: they are ``Accepted | Rejected`` values from :mod:`reverie.results`. A
problem with one file that must not stop the rest (a bad line, a link out of the
workspace) is a :class:`reverie.storage.document.FileWarning`, not an exception.
"""

from __future__ import annotations


class ReverieError(Exception):
    """Base class of every error Reverie raises on purpose."""

    exit_code = 1


class ConfigError(ReverieError):
    """A setting, config file or environment variable has a bad value."""

    exit_code = 2


class WorkspaceError(ReverieError):
    """The workspace is missing, not initialised, or a path escapes it."""

    exit_code = 3


class PathEscapeError(WorkspaceError):
    """A path points outside the workspace (``..``, absolute, or a symlink out)."""


class IndexUnusable(ReverieError):
    """The SQLite index is unusable (corrupt, locked, wrong schema)."""

    exit_code = 4


class ProviderError(ReverieError):
    """An explicitly configured provider (embedder or LLM) failed.

    ``provider`` names it; the message never contains secrets.
    """

    exit_code = 5

    def __init__(self, provider: str, message: str, *, transient: bool = False) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.transient = transient


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or refused us (bad URL, bad key)."""


class ProviderTimeout(ProviderError):
    """The provider did not answer within its timeout."""


class ParseError(ReverieError):
    """Input could not be parsed; names the file and line."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line


class ToolArgumentError(ReverieError):
    """A memory tool (``memory_search``, ``memory_get``, ``memory_write``) was called
    with an argument it does not take, or a value that does not fit; the message says
    which, in a sentence a model can act on (:mod:`reverie.provenance.agent_tools`)."""


class WriteError(ReverieError):
    """A write (a journal append, a transcript record) did not land: a full disk, an
    I/O error. Nothing of it is left behind; the message names the file."""


class SyncError(ReverieError):
    """``reverie sync`` could not finish (remote unreachable or rewritten, device not
    paired, git missing); the local workspace is left as it was."""


class DaemonBusy(ReverieError):
    """Another daemon already serves this state dir (``reverie serve`` runs once)."""


__all__ = [
    "ConfigError",
    "DaemonBusy",
    "IndexUnusable",
    "ParseError",
    "PathEscapeError",
    "ProviderError",
    "ProviderTimeout",
    "ProviderUnavailable",
    "ReverieError",
    "SyncError",
    "ToolArgumentError",
    "WorkspaceError",
    "WriteError",
]
