"""Bootstrap (R-RECALL-1): AGENTS.md, MEMORY.md and USER.md injected at the start of
every turn, within their budgets. Re-read each turn, cheaply: a file whose size and
mtime are unchanged is served from memory. Over budget, only the injected copy is
cut, and the cut is visible to the model and reported to the caller."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import PathEscapeError
from ..provenance.frames import (
    GENERATED_BEGIN,
    GENERATED_END,
    strip_generated_markers,
    workspace_file_block,
)
from ..provenance.paths import CURATED_FILES, classify
from ..settings import Settings
from ..storage.files import NotRegularFile, check_regular, open_regular
from ..storage.links import link_class, resolve_inside
from ..storage.trailers import parse_line, strip
from .boot import Bootstrap, BootstrapFile
from .triggers import superseded

FILES = ("AGENTS.md", "MEMORY.md", "USER.md")
CURATED = CURATED_FILES
READ_BYTES = 512 * 1024  # read of one file, at most (26 times the default file budget)


def truncation_notice(path: str, shown: int, total: int) -> str:
    return (
        f"[… {path} truncated: {shown:,} of {total:,} characters shown. The file on disk "
        f'is complete; read the rest with memory_get(path="{path}").]'
    )


def unread_notice(path: str, head: int, tail: int, size: int) -> str:
    return (
        f"[… {path}: only its first {head:,} and last {tail:,} of {size:,} bytes were read "
        f'(bounded); the rest is on disk: memory_get(path="{path}").]'
    )


_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
# an entry without an importance trailer (the person's own) ranks with the strong
# promoted ones (importance is clamp(round(score * 10), 3, 10), gates pass at 0.75)
DEFAULT_IMPORTANCE = 8


def _is_marker(line: str) -> bool:
    return line.strip() in (GENERATED_BEGIN, GENERATED_END)


def superseded_notice(n: int) -> str:
    return (
        f"[{n:,} superseded entr{'y' if n == 1 else 'ies'} of MEMORY.md not shown: each "
        "names the newer entry that replaced it; search still finds them.]"
    )


def _current(lines: list[str]) -> list[str]:
    """MEMORY.md's lines without its superseded entries (issue 21, point 4): those are
    kept on disk and found by search, but never bootstrapped as current."""
    kept = [ln for ln in lines if not (_ITEM.match(ln) and superseded(strip(ln)))]
    gone = len(lines) - len(kept)
    return [*kept, "", superseded_notice(gone)] if gone else kept


def selection_notice(path: str, left_out: list[str], total: int) -> str:
    sample = "; ".join(f"“{t[:60]}”" for t in left_out[:3])
    return (
        f"[… {path} truncated: {len(left_out):,} of {total:,} entries left out to fit the "
        f"budget (the least important and oldest), e.g. {sample}. The file on disk is "
        f'complete; read it with memory_get(path="{path}").]'
    )


def select_entries(path: str, body: str, ranks: list[int | None], budget: int) -> str:
    """An over-budget curated file as injected (issue 26): every heading and line of
    structure, then its entries by importance (trailer) and, of equal importance, the
    newest (lowest in the file) first, shown in file order, and a notice that names
    what was left out. ``ranks``: the importance of each line of ``body``."""
    rows = body.split("\n")
    items = [i for i, r in enumerate(rows) if _ITEM.match(r)]
    item_set = set(items)
    rank: dict[int, int] = {}
    for i in items:
        given = ranks[i] if i < len(ranks) else None
        rank[i] = DEFAULT_IMPORTANCE if given is None else given
    order = sorted(items, key=lambda i: (-rank[i], -i))
    frame = [i for i in range(len(rows)) if i not in item_set]
    worst = selection_notice(path, [rows[i] for i in items], len(items))
    used = sum(len(rows[i]) + 1 for i in frame) + len(worst) + 2
    chosen: set[int] = set()
    for i in order:
        if used + len(rows[i]) + 1 <= budget:
            chosen.add(i)
            used += len(rows[i]) + 1
    if used > budget:  # the structure alone does not fit: the old cut, visibly
        keep = max(0, budget - len(worst) - 8)
        cut = body[:keep].rsplit("\n", 1)[0]
        return cut + "\n" + truncation_notice(path, len(cut), len(body))
    left = [rows[i].strip().lstrip("-*+ ").strip() for i in items if i not in chosen]
    if not left:
        return body
    shown = "\n".join(r for i, r in enumerate(rows) if i not in item_set or i in chosen)
    return shown.rstrip("\n") + "\n" + selection_notice(path, left, len(items))


class Bootstrapper:
    """Reads the bootstrap files, re-reading only those that changed on disk."""

    def __init__(self, root: Path, *, read_bytes: int = READ_BYTES) -> None:
        self.root = root.resolve()
        self.read_bytes = read_bytes
        self._partial: dict[str, tuple[int, int, int]] = {}  # name -> (head, tail, size)
        self._cache: dict[str, tuple[int, int, str]] = {}
        self.reads = 0  # how many times a file was actually read (for tests)
        self._warnings: list[str] = []
        self._ranks: dict[str, list[int | None]] = {}  # curated file -> importance per line
        self._selected: dict[str, tuple[tuple[str, list[int | None], int], str]] = {}

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
            with open_regular(path) as fh:  # bounded (issue 22.12): the budget is far less
                data = fh.read(self.read_bytes + 1)
                self._partial.pop(name, None)
                if len(data) > self.read_bytes:  # the head and the newest entries (the
                    head = data[: data.rfind(b"\n", 0, self.read_bytes // 4) + 1]  # tail)
                    fh.seek(max(0, os.fstat(fh.fileno()).st_size - self.read_bytes * 3 // 4))
                    tail = fh.read(self.read_bytes)
                    tail = tail[tail.find(b"\n") + 1 :]
                    self._partial[name] = (len(head), len(tail), fh.tell())
                    data = head + tail
        except (FileNotFoundError, NotRegularFile) as exc:  # changed since the stat
            self._refuse(name, str(exc))
            return None
        raw = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        self.reads += 1
        if name in CURATED:
            kept = [ln for ln in raw.splitlines() if not _is_marker(ln)]
            if name == "MEMORY.md":
                kept = _current(kept)
            self._ranks[name] = [parse_line(ln).trailers.importance for ln in kept]
            text = strip_generated_markers("\n".join(strip(line) for line in kept))
        else:
            text = raw
        self._cache[name] = (st.st_mtime_ns, st.st_size, text)
        return text

    def _select(self, name: str, body: str, ranks: list[int | None], budget: int) -> str:
        """:func:`select_entries`, remembered while the file and the budget stay the
        same (a warm daemon answers every prompt with the same selection)."""
        key = (body, ranks, budget)
        kept = self._selected.get(name)
        if kept is not None and kept[0] == key:
            return kept[1]
        chosen = select_entries(name, body, ranks, budget)
        self._selected[name] = (key, chosen)
        return chosen

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
            unread = ""
            if name in self._partial:
                unread = unread_notice(name, *self._partial[name])
                budget = max(0, budget - len(unread) - 1)
            truncated = len(body) > budget or bool(unread)
            if truncated and name in CURATED and name in self._ranks:
                lead = len(text) - len(text.lstrip("\n"))  # blank lines body lost
                body = self._select(name, body, self._ranks[name][lead:], budget)
            elif truncated:
                notice = truncation_notice(name, 0, len(body))
                keep = max(0, budget - len(notice) - 8)
                cut = body[:keep]
                if "\n" in cut[keep // 2 :]:
                    cut = cut[: cut.rfind("\n")]  # end on a whole line
                body = cut + "\n" + truncation_notice(name, len(cut), len(text.strip(chr(10))))
            if unread:
                body = f"{body}\n{unread}"
            parts.append(workspace_file_block(name, body))
            files.append(BootstrapFile(name, len(text.strip("\n")), len(body), truncated))
            left -= len(body)
        return Bootstrap("\n\n".join(parts), tuple(files), tuple(self._warnings))


__all__ = ["Bootstrap", "BootstrapFile", "Bootstrapper", "select_entries", "truncation_notice"]
