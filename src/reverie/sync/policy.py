"""How each synced file merges, and how an unsealed side is gated (pure).

- append-only files (journals, the session corpus, ``DREAMS.md``, the archive):
  :func:`reverie.sync.journal_merge.merge_journal`, the union of lines;
- every other Markdown file (``MEMORY.md``, ``USER.md``, ``AGENTS.md``, notes): the
  three-way merge by entry, a conflict kept visibly (:mod:`reverie.sync.entry_merge`);
- anything else: the side that changed it; both changed: this device's, the other
  side's kept in history.

``gate`` is the file as the newest *sealed* commit on the other side held it (see
:mod:`reverie.sync.seal`), or None when the other side is sealed throughout. What an
unsealed commit added is lowered (marker files) or set aside as lowered journal lines
(every other file); what it deleted is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..provenance.paths import SESSION_CORPUS
from ..storage.skeleton import SKELETON
from .entry_merge import blocks, merge_entries
from .journal_merge import merge_journal, split
from .seal import lower

_JOURNAL_RE = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
APPEND_ONLY = ("DREAMS.md", "memory/archive.md")
SET_ASIDE_DIR = "memory/imports/sync/"  # sync's set-aside lines: a union, like a journal
ABSENT = object()


def malformed_path(path: str) -> bool:
    """A tree path no checkout may hold: absolute, with an empty, ``.``, ``..`` or
    ``.git`` component, or a backslash (a separator on Windows)."""
    if not path or path.startswith("/") or "\\" in path:
        return True
    return any(part in ("", ".", "..") or part.lower() == ".git" for part in path.split("/"))


def append_only(path: str) -> bool:
    return (
        bool(_JOURNAL_RE.match(path))
        or path.startswith((SESSION_CORPUS, SET_ASIDE_DIR))
        or path in APPEND_ONLY
    )


def marker_file(path: str) -> bool:
    """Per-line origin markers are honoured here (so a line can be lowered in place)."""
    return bool(_JOURNAL_RE.match(path)) or path.startswith(SESSION_CORPUS)


@dataclass
class FileMerge:
    """One merged file, its conflicts and the lowered lines set aside for the journal."""

    text: str | None  # None: the file is gone
    conflicts: tuple[str, ...] = ()
    set_aside: list[str] = field(default_factory=list)  # lowered lines for the journal


def _gated_lines(gate: str, theirs: str) -> str:
    """``theirs`` with every line ``gate`` lacks lowered, and every line of ``gate``
    it dropped kept."""
    have = Counter(split(gate))
    out = []
    for line in split(theirs):
        if have[line] > 0:
            have[line] -= 1
            out.append(line)
        else:
            out.append(lower(line))
    return merge_journal("", gate, "\n".join(out) + "\n" if out else "")


def _set_aside(path: str, gate: str, theirs: str) -> list[str]:
    """The entries of ``theirs`` that ``gate`` lacks, as lowered lines naming the file."""
    known = set(blocks(gate))
    lines = []
    for block in blocks(theirs):
        text = " ".join(block.split())
        if block not in known and text and not block.startswith("#"):
            lines.append(lower(f"- [sync: an unsealed change to {path}] {text.lstrip('-*+ ')}"))
    return lines


def base_of(path: str, base: str | None, unrelated: bool) -> str:
    """The merge base of ``path``; for two histories that never met, a file a new
    workspace starts with counts as its skeleton (so a fresh device takes the other's)."""
    if base is not None:
        return base
    return SKELETON.get(path, "") if unrelated else ""


def merge_file(
    path: str,
    base: str | None,
    ours: str | None,
    theirs: str | None,
    gate: str | object | None = ABSENT,
    *,
    unrelated: bool = False,
    labels: tuple[str, str] = ("this device", "the other device"),
) -> FileMerge:
    """Merge one file (None: absent on that side). ``gate``: see the module doc."""
    set_aside: list[str] = []
    if gate is not ABSENT:
        g = gate if isinstance(gate, str) else (base or "")
        if theirs is None:
            theirs = g if g else None  # an unsealed delete deletes nothing
        elif append_only(path) or marker_file(path):
            theirs = _gated_lines(g, theirs) if marker_file(path) else theirs
        else:
            set_aside = _set_aside(path, g, theirs)
            theirs = g if g or base is not None else None
    if ours == theirs:
        return FileMerge(ours, (), set_aside)
    b = base_of(path, base, unrelated)
    if theirs is None or ours is None:
        kept = ours if theirs is None else theirs
        changed = (ours if theirs is None else theirs) != b
        if base is None or changed:
            return FileMerge(kept, (), set_aside)  # an edit beats a delete: nothing lost
        return FileMerge(None, (), set_aside)
    if ours == b:
        return FileMerge(theirs, (), set_aside)
    if theirs == b:
        return FileMerge(ours, (), set_aside)
    if append_only(path):
        return FileMerge(merge_journal(b, ours, theirs), (), set_aside)
    if path.endswith(".md"):
        m = merge_entries(b, ours, theirs, labels)
        return FileMerge(m.text, m.conflicts, set_aside)
    return FileMerge(ours, (), set_aside)


__all__ = [
    "ABSENT",
    "FileMerge",
    "append_only",
    "base_of",
    "malformed_path",
    "marker_file",
    "merge_file",
]
