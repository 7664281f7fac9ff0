"""Bootstrap (R-RECALL-1): AGENTS.md, MEMORY.md and USER.md injected at the start of
every turn, within their budgets. Re-read each turn, cheaply: a file whose size and
mtime are unchanged is served from memory. Over budget, only the injected copy is
cut, and the cut is visible to the model and reported to the caller."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PathEscapeError
from ..provenance.frames import strip_generated_markers, workspace_file_block
from ..provenance.paths import CURATED_FILES, classify
from ..settings import Settings
from ..storage.files import NotRegularFile, check_regular, read_regular
from ..storage.trailers import strip
from ..storage.workspace import link_class, resolve_inside

FILES = ("AGENTS.md", "MEMORY.md", "USER.md")
CURATED = CURATED_FILES


@dataclass(frozen=True)
class BootstrapFile:
    """One injected bootstrap file: its size on disk, what was injected, truncation."""

    path: str
    chars: int
    injected: int
    truncated: bool


@dataclass(frozen=True)
class Bootstrap:
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
            "files": [f.__dict__ for f in self.files],
            "warnings": list(self.warnings),
        }


def truncation_notice(path: str, shown: int, total: int) -> str:
    return (
        f"[… {path} truncated: {shown:,} of {total:,} characters shown. The file on disk "
        f'is complete; read the rest with memory_get(path="{path}").]'
    )


class Bootstrapper:
    """Reads the bootstrap files, re-reading only those that changed on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[str, tuple[int, int, str]] = {}
        self.reads = 0  # how many times a file was actually read (for tests)
        self._warnings: list[str] = []

    def _refuse(self, name: str, why: str) -> None:
        self._cache.pop(name, None)
        self._warnings.append(f"{name}: {why}; not injected")

    def _read(self, name: str) -> str | None:
        """The file's text, or None. Symlinks follow the one policy (index and
        memory_get alike): followed inside the workspace, refused when they leave it,
        and never injected when the target's path is less trusted than the file's."""
        path = self.root / name
        try:
            real = resolve_inside(self.root, path)
        except PathEscapeError:
            self._refuse(name, "symlink points outside the workspace")
            return None
        if real != path:
            target = real.relative_to(self.root).as_posix()
            if link_class(name, target) != classify(name):  # lowered by the target
                self._refuse(name, f"symlink to {target}, a less trusted path")
                return None
        try:
            st = check_regular(path)
        except FileNotFoundError:
            self._cache.pop(name, None)
            return None
        except NotRegularFile as exc:  # a FIFO would block every turn forever
            self._refuse(name, str(exc))
            return None
        cached = self._cache.get(name)
        if cached and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            return cached[2]
        try:
            raw = read_regular(path).decode("utf-8", errors="replace").replace("\r\n", "\n")
        except (FileNotFoundError, NotRegularFile) as exc:  # changed since the stat
            self._refuse(name, str(exc))
            return None
        self.reads += 1
        if name in CURATED:
            text = strip_generated_markers("\n".join(strip(line) for line in raw.splitlines()))
        else:
            text = raw
        self._cache[name] = (st.st_mtime_ns, st.st_size, text)
        return text

    def load_with(self, settings: Settings) -> Bootstrap:
        """:meth:`load` with the budgets of ``settings``."""
        return self.load(
            file_chars=settings.bootstrap_file_chars,
            total_chars=settings.bootstrap_total_chars,
            user_chars=settings.bootstrap_user_chars,
        )

    def load(self, *, file_chars: int, total_chars: int, user_chars: int) -> Bootstrap:
        parts: list[str] = []
        files: list[BootstrapFile] = []
        self._warnings = []
        texts = [(name, self._read(name)) for name in FILES]
        # USER.md (the owner's directives) is the last thing cut: its share is set aside
        # first, so a large MEMORY.md gives way before it (then AGENTS.md).
        user = dict(texts).get("USER.md") or ""
        reserved = min(len(user.strip("\n")), file_chars, user_chars, total_chars)
        left = total_chars - reserved
        for name, text in texts:
            if text is None or not text.strip():
                continue
            if name == "USER.md":
                left += reserved
            budget = min(file_chars, left, user_chars if name == "USER.md" else file_chars)
            body = text.strip("\n")
            truncated = len(body) > budget
            if truncated:
                notice = truncation_notice(name, 0, len(body))
                keep = max(0, budget - len(notice) - 8)
                cut = body[:keep]
                if "\n" in cut[keep // 2 :]:
                    cut = cut[: cut.rfind("\n")]  # end on a whole line
                body = cut + "\n" + truncation_notice(name, len(cut), len(text.strip(chr(10))))
            parts.append(workspace_file_block(name, body))
            files.append(BootstrapFile(name, len(text.strip("\n")), len(body), truncated))
            left -= len(body)
        return Bootstrap("\n\n".join(parts), tuple(files), tuple(self._warnings))


__all__ = ["Bootstrap", "BootstrapFile", "Bootstrapper", "truncation_notice"]
