"""``reverie trust PATH`` / ``reverie untrust PATH``: the owner declares a folder of
hand-written notes (an Obsidian-style ``notes/``) owner-written.

Only the owner at the CLI (and the review page, which is the owner's) reaches this;
the list lives in the state dir. A trusted folder only changes files that would
otherwise be unrecognised notes: journals, imports, the session corpus, MEMORY.md and
anything under ``memory/`` or a hidden folder keep their fixed classes.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ReverieError
from ..storage.trusted import save_trusted
from ..storage.workspace import Workspace


class TrustedFolders:
    """The owner's trusted folders: list, trust, untrust (state dir only)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.path = ws.trusted_path

    def folders(self) -> list[str]:
        return sorted(self.ws.trusted)

    def _folder(self, path: str) -> str:
        given = Path(path).expanduser()
        # relative: from where you stand when that is inside the workspace, else a path
        # of the workspace itself ("notes" works from any folder)
        tries = [given] if given.is_absolute() else [Path.cwd() / given, self.ws.root / given]
        for full in tries:
            try:
                real = self.ws.check_inside(full.resolve())
                break
            except ReverieError:
                continue
        else:
            raise ReverieError(f"{path}: not inside the workspace {self.ws.root}")
        rel = self.ws.relpath(real) if real != self.ws.root else ""
        if not rel:
            raise ReverieError(
                f"{path}: the workspace root itself cannot be trusted; name a folder"
            )
        if real.exists() and not real.is_dir():
            raise ReverieError(f"{rel}: not a folder")
        if rel.split("/")[0] == "memory" or any(p.startswith(".") for p in rel.split("/")):
            raise ReverieError(
                f"{rel}: memory/ and hidden folders have fixed classes (journals, imports, "
                "the session corpus, machine state); trust a folder of your own notes"
            )
        return rel

    def trust(self, path: str) -> list[str]:
        folders = set(self.ws.trusted) | {self._folder(path)}
        save_trusted(self.path, frozenset(folders))
        return sorted(folders)

    def untrust(self, path: str) -> list[str]:
        folders = set(self.ws.trusted)
        rel = path.strip("/")
        if rel not in folders:
            rel = self._folder(path)
        if rel not in folders:
            raise ReverieError(
                f"{rel}: not a trusted folder (trusted: {sorted(folders) or 'none'})"
            )
        save_trusted(self.path, frozenset(folders - {rel}))
        return sorted(folders - {rel})


__all__ = ["TrustedFolders"]
