"""The bootstrap as injected (what :class:`reverie.recall.bootstrap.Bootstrapper`
returns): plain data in a module of its own, so that a turn without a bootstrap (the
per-prompt hook's: it went in at session start) does not import the reader."""

from __future__ import annotations

from typing import Any, NamedTuple


class BootstrapFile(NamedTuple):
    """One injected bootstrap file: its size on disk, what was injected, truncation."""

    path: str
    chars: int
    injected: int
    truncated: bool


class Bootstrap(NamedTuple):
    """The bootstrap files as injected at session start and every turn (R-RECALL-1)."""

    text: str
    files: tuple[BootstrapFile, ...]
    warnings: tuple[str, ...] = ()  # files not injected, and why

    @property
    def truncated(self) -> bool:
        return any(f.truncated for f in self.files)

    def as_dict(self) -> dict[str, Any]:
        return {
            "truncated": self.truncated,
            "files": [f._asdict() for f in self.files],
            "warnings": list(self.warnings),
        }


NO_BOOTSTRAP = Bootstrap("", ())  # a turn whose bootstrap is not injected again

__all__ = ["NO_BOOTSTRAP", "Bootstrap", "BootstrapFile"]
