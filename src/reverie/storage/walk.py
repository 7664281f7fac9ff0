"""The workspace walk: every indexable Markdown file, sorted, and a warning for each
link that leaves the workspace, FIFO or other non-regular file (never read)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
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
    every one-shot search, :func:`differs`, visits the same files)."""
    yield from _walk_dir(ws, ws.root, "")


def _listing(
    ws: Tree, here: Path, prefix: str, *, ordered: bool = True
) -> tuple[list[FileWarning], list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    """One folder: the warnings for its links that leave, its files and the subfolders
    walked, each in name order when ``ordered`` (a link to a folder is not walked, nor
    a hidden folder but :data:`HIDDEN_INDEXED`)."""
    try:
        with os.scandir(here) as listing:
            entries = sorted(listing, key=_name) if ordered else list(listing)
    except OSError:  # unreadable or gone: skipped, as os.walk does
        return [], [], []
    warnings: list[FileWarning] = []
    files: list[os.DirEntry[str]] = []
    keep: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()  # a link to a folder counts as one (not followed)
        except OSError:
            is_dir = False
        if not is_dir:
            files.append(entry)
            continue
        rel = prefix + entry.name
        if entry.is_symlink():
            warnings += _link_warning(ws, Path(entry.path), rel)
        elif not entry.name.startswith(".") or rel in HIDDEN_INDEXED:
            keep.append(entry)
    return warnings, files, keep


def _walk_dir(ws: Tree, here: Path, prefix: str) -> Iterator[FileEntry | FileWarning]:
    warnings, files, keep = _listing(ws, here, prefix)
    yield from warnings
    for f in files:
        rel = prefix + f.name
        if not f.name.endswith(".md") or not _indexed_class(rel):
            continue
        if (item := _entry(ws, f, rel)) is not None:
            yield item
    for d in keep:
        yield from _walk_dir(ws, Path(d.path), prefix + d.name + "/")


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _entry(ws: Tree, f: os.DirEntry[str], rel: str) -> FileEntry | FileWarning | None:
    """The walk's entry for file ``f`` at ``rel`` (an indexable name): None when it is
    gone, a warning for a link that leaves, a broken link or a FIFO."""
    real: str | None = None
    if f.is_symlink():
        p = Path(f.path)
        try:
            real = ws.relpath(ws.check_inside(p))
        except PathEscapeError:
            return next(_link_warning(ws, p, rel), None)
    try:
        st = f.stat()
    except FileNotFoundError:
        if real is None:
            return None
        return FileWarning(rel, None, f"broken symlink to {real}; skipped")
    kind = file_kind(st.st_mode)
    if kind is not None:  # a FIFO would block the reader forever
        return FileWarning(rel, None, f"not a regular file ({kind}); skipped")
    return FileEntry(rel, f.path, st.st_size, st.st_mtime_ns, real)


def differs(ws: Tree, known: Mapping[str, tuple[int, int]]) -> bool:
    """Whether :func:`walk` would find other files than ``known`` (path -> (size,
    mtime_ns), as the registry holds them, a link's at its real path): a file added,
    changed (an edit in place moves its ``mtime_ns``) or removed. The same folders,
    rules and one ``stat`` per file as the walk, without its order or its entries: a
    known path that is no link is not classified again (the sync registers the walk's
    paths only, so it was indexable), the one cost beside the ``stat`` the check before
    every one-shot search paid per file. Stops at the first difference."""
    seen, folders = 0, [(ws.root, "")]
    while folders:
        here, prefix = folders.pop()
        _, files, keep = _listing(ws, here, prefix, ordered=False)
        folders += [(Path(d.path), prefix + d.name + "/") for d in keep]
        for f in files:
            name = f.name
            if not name.endswith(".md"):
                continue
            rel = prefix + name
            was = known.get(rel)
            if was is not None and not f.is_symlink():
                try:
                    st = f.stat()
                except FileNotFoundError:
                    continue
                if not S_ISREG(st.st_mode):
                    continue  # the walk warns and skips it
                if (st.st_size, st.st_mtime_ns) != was:
                    return True
            elif not _indexed_class(rel):
                continue
            else:
                item = _entry(ws, f, rel)
                if not isinstance(item, FileEntry):
                    continue
                if known.get(item.real or item.relpath) != (item.size, item.mtime_ns):
                    return True
            seen += 1
    return seen < len(known)  # a file was removed


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


__all__ = ["HIDDEN_INDEXED", "FileEntry", "Tree", "differs", "indexable", "walk"]
