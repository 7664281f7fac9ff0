"""What every command shares: the context object, output helpers and error handling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from ..backends.sqlite.db import DatabaseError
from ..engine import Reverie
from ..errors import ReverieError


class Ctx:
    """The click context object: the global flags, and the engine opened on first use."""

    def __init__(self, flags: dict[str, Any]) -> None:
        self.flags = flags
        self._engine: Reverie | None = None
        # ``reverie serve``'s file watcher vouching that the index matches the files
        self.current: Callable[[], bool] | None = None
        # ``reverie mcp``'s stdio when claimed before the command ran (cli.mcp_primed)
        self.mcp_stdio: dict[str, Any] = {}
        self.mcp_primed: Any = None  # its first line and the kept answers (Primed)

    def refresh(self) -> str | None:
        """Sync the files changed since the last sync (hand edits included) before a
        search; the note when that failed. A daemon whose watcher saw no change since
        its last sync skips the walk over the files (not a dirty flag, though)."""
        if self.current is not None and self.current() and not self.engine.is_dirty():
            return None
        return self.engine.refresh().note

    @property
    def engine(self) -> Reverie:
        if self._engine is None:
            self._engine = Reverie.open(**self.flags)
        return self._engine


def emit(data: Any, as_json: bool, render: Callable[[Any], str] | None = None) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(render(data) if render else str(data))


def _fail(as_json: bool, kind: str, message: str, code: int) -> None:
    """An error on stderr (stdout stays for results): JSON with ``--json``."""
    if as_json:
        error = {"error": kind, "message": message, "exit_code": code}
        click.echo(json.dumps(error, ensure_ascii=False), err=True)
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(code)


def handles_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Errors become a message on stderr (and JSON with ``--json``) and the documented
    exit code, never a traceback: ours by their class, a file-system error (disk full,
    permission, a name too long) as 3, an SQLite error as 4."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            return fn(*args, **kwargs)
        except ReverieError as exc:
            _fail(as_json, type(exc).__name__, str(exc), exc.exit_code)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            what = exc.strerror or str(exc)
            _fail(as_json, "FileSystemError", f"{where}{what}; nothing was half-written", 3)
        except DatabaseError as exc:
            _fail(as_json, "IndexUnusable", f"the index: {exc}", 4)

    return wrapper


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


__all__ = ["Ctx", "emit", "handles_errors", "json_option"]
