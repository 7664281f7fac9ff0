"""A problem with one file that does not stop the rest (pure).

Its own module so that what only names it (the workspace walk) does not import the
chunker: a one-shot hook opens a workspace but never chunks a file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileWarning:
    """A problem with one file (or one line of it) that does not stop the rest."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


__all__ = ["FileWarning"]
