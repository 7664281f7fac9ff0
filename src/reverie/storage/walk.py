"""The workspace walk: every indexable Markdown file, sorted, and a warning for each
link that leaves the workspace, FIFO or other non-regular file (never read)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import PathEscapeError
from ..provenance.paths import SESSION_CORPUS, classify, in_group_corpus
from .file_warning import FileWarning
from .files import file_kind

# hidden folders that are walked all the same (the session corpus and its parent)
HIDDEN_INDEXED = ("memory/.dreams", SESSION_CORPUS.rstrip("/"))


@dataclass(frozen=True)
class FileEntry:
    """An indexable file found by the workspace walk (``real``: where a symlink at
    ``relpath`` points, inside the workspace)."""

    relpath: str
    fspath: str  # its path on disk (``path`` as a Path, made when asked: walks are hot)
    size: int
    mtime_ns: int
    real: str | None = None

    @property
    def path(self) -> Path:
        return Path(self.fspath)


@functools.lru_cache(maxsize=1 << 16)
def _indexed_class(rel: str) -> bool:
    """``classify(rel).indexed``, remembered: the same paths come back on every walk."""
    return classify(rel).indexed


class Tree(Protocol):
    """What the walk needs of the workspace."""

    @property
    def root(self) -> Path: ...

    def relpath(self, path: Path) -> str: ...

    def check_inside(self, path: Path | str) -> Path: ...


def walk(ws: Tree) -> Iterator[FileEntry | FileWarning]:
    """Every indexable Markdown file, sorted; warnings for links that leave.

    Top-down as ``os.walk`` (a folder's link warnings, then its files, then its
    subfolders in name order), on ``os.scandir``: the entry's type comes with the
    listing and one ``stat`` per Markdown file is the only system call (the check before
    every search walks the whole workspace)."""
    yield from _walk_dir(ws, ws.root, "")


def _walk_dir(ws: Tree, here: Path, prefix: str) -> Iterator[FileEntry | FileWarning]:
    try:
        with os.scandir(here) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:  # unreadable or gone: skipped, as os.walk does
        return
    dirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()  # a link to a folder counts as one (not followed)
        except OSError:
            is_dir = False
        (dirs if is_dir else files).append(entry)
    keep = []
    for d in dirs:
        rel = prefix + d.name
        if d.is_symlink():
            yield from _link_warning(ws, Path(d.path), rel)
            continue
        if d.name.startswith(".") and rel not in HIDDEN_INDEXED:
            continue
        keep.append(d)
    for f in files:
        rel = prefix + f.name
        if not f.name.endswith(".md") or not _indexed_class(rel):
            continue
        real: str | None = None
        if f.is_symlink():
            p = Path(f.path)
            try:
                real = ws.relpath(ws.check_inside(p))
            except PathEscapeError:
                yield from _link_warning(ws, p, rel)
                continue
        try:
            st = f.stat()
        except FileNotFoundError:
            if real is not None:
                yield FileWarning(rel, None, f"broken symlink to {real}; skipped")
            continue
        kind = file_kind(st.st_mode)
        if kind is not None:  # a FIFO would block the reader forever
            yield FileWarning(rel, None, f"not a regular file ({kind}); skipped")
            continue
        yield FileEntry(rel, f.path, st.st_size, st.st_mtime_ns, real)
    for d in keep:
        yield from _walk_dir(ws, Path(d.path), prefix + d.name + "/")


def indexable(rel: str) -> bool:
    """Whether the walk indexes a file at workspace path ``rel``: a Markdown file of an
    indexed path class, under no hidden folder but the session corpus, and not a group
    conversation's corpus (search never shows it, R-LANE2-2). What ``memory_get``
    reads: the memory files a person owns, nothing else."""
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        if part.startswith(".") and "/".join(parts[: i + 1]) not in HIDDEN_INDEXED:
            return False
    return rel.endswith(".md") and classify(rel).indexed and not in_group_corpus(rel)


def _link_warning(ws: Tree, p: Path, rel: str) -> Iterator[FileWarning]:
    """A folder link is not walked: inside the workspace its files are indexed at
    their real paths; one that leaves is refused, with a warning."""
    target = p.resolve()
    if target != ws.root and ws.root not in target.parents:
        yield FileWarning(rel, None, f"symlink to {target} points outside the workspace; skipped")


__all__ = ["HIDDEN_INDEXED", "FileEntry", "Tree", "indexable", "walk"]
