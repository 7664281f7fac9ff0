"""Write safety for MEMORY.md (R-DREAM-9): optimistic, lock-free, nothing lost.

MEMORY.md is hashed when the dream builds its input and re-checked just before
writing. Equal: atomic replace, keeping the previous version as a pre-image (the last
``preimages_kept``, in the state dir). Different: the caller drops the rewrite and takes
the append-only path on the file as it is now, so a person's edit is never
overwritten. No locks on the file: editors stay free. Every change appends a summary to
DREAMS.md.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

from ..errors import ReverieError
from ..storage.files import atomic_write
from ..storage.workspace import Workspace

PREIMAGE_GLOB = "MEMORY.*.md"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MemoryFile:
    """MEMORY.md, its pre-images and DREAMS.md, as the dream writes them."""

    def __init__(self, ws: Workspace, *, preimages_kept: int) -> None:
        self.path = ws.memory_path
        self.preimage_dir = ws.preimages_dir
        self.dreams_log = ws.dreams_log
        self.preimages_kept = max(1, preimages_kept)

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8") if self.path.exists() else ""

    def replace_if_unchanged(self, expected_sha: str, new: str) -> bool:
        """Replace the file with ``new`` if it still hashes to ``expected_sha``, keeping
        what it held as a pre-image. False (nothing written) when it changed."""
        current = self.read()
        if sha(current) != expected_sha:
            return False
        self.save_preimage(current)
        atomic_write(self.path, new)
        return True

    def save_preimage(self, text: str) -> Path:
        self.preimage_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        path = self.preimage_dir / f"MEMORY.{stamp}.md"
        atomic_write(path, text)
        for old in sorted(self.preimage_dir.glob(PREIMAGE_GLOB))[: -self.preimages_kept]:
            old.unlink(missing_ok=True)
        return path

    def preimages(self) -> list[Path]:
        if not self.preimage_dir.exists():
            return []
        return sorted(self.preimage_dir.glob(PREIMAGE_GLOB))

    def restore(self, name: str | None = None) -> Path:
        """Put a pre-image back (the newest by default); the current file becomes one."""
        images = self.preimages()
        if not images:
            raise ReverieError("no pre-image of MEMORY.md to restore")
        chosen = images[-1] if name is None else next((p for p in images if p.name == name), None)
        if chosen is None:
            raise ReverieError(f"no pre-image named {name!r}; see `reverie dream restore --list`")
        text = chosen.read_text(encoding="utf-8")
        self.save_preimage(self.read())
        atomic_write(self.path, text)
        return chosen

    def append_dreams(self, summary: str) -> None:
        """Append one change summary to DREAMS.md (an audit log for people)."""
        path = self.dreams_log
        current = path.read_text(encoding="utf-8") if path.exists() else "# Dreams\n\n"
        if not current.endswith("\n"):
            current += "\n"
        atomic_write(path, current + "\n" + summary)


__all__ = ["PREIMAGE_GLOB", "MemoryFile", "sha"]
