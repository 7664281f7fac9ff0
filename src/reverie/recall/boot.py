"""The bootstrap as injected (what :class:`reverie.recall.bootstrap.Bootstrapper`
returns): plain data in a module of its own, so that a turn without a bootstrap (the
per-prompt hook's: it went in at session start) does not import the reader."""

from __future__ import annotations

from typing import Any

from ..records import Record


class BootstrapFile(Record):
    """One injected bootstrap file: its size on disk, what was injected, truncation."""

    __slots__ = ("chars", "injected", "path", "truncated")

    def __init__(self, path: str, chars: int, injected: int, truncated: bool) -> None:
        self.path, self.chars, self.injected, self.truncated = path, chars, injected, truncated

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("path", "chars", "injected", "truncated")}


class Bootstrap(Record):
    """The bootstrap files as injected at session start and every turn (R-RECALL-1);
    ``warnings``: the files not injected, and why."""

    __slots__ = ("files", "text", "warnings")

    def __init__(
        self, text: str, files: tuple[BootstrapFile, ...], warnings: tuple[str, ...] = ()
    ) -> None:
        self.text, self.files, self.warnings = text, files, warnings

    @property
    def truncated(self) -> bool:
        return any(f.truncated for f in self.files)

    def as_dict(self) -> dict[str, Any]:
        return {
            "truncated": self.truncated,
            "files": [f.as_dict() for f in self.files],
            "warnings": list(self.warnings),
        }


NO_BOOTSTRAP = Bootstrap("", ())  # a turn whose bootstrap is not injected again

__all__ = ["NO_BOOTSTRAP", "Bootstrap", "BootstrapFile"]
