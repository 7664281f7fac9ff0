"""The union merge of an append-only journal (pure).

A journal (``memory/YYYY-MM-DD.md``) only grows: every side appends lines, each line
carrying its own origin marker. Merging two sides is therefore the union of their lines
(a line is its whole text, marker and signature included, so a marker is never split
from its line or rewritten), with the lines a side removed (an owner's hand edit; a
forget is enforced separately by the tombstones) left out, and the result in time
order: the ``HH:MM`` stamp of each line, an unstamped line (a heading, a hand note)
staying after the line it followed on its own side.

Counts are merged per distinct line, so a line both sides hold (the same append seen
twice, a merge re-run after a kill) is kept once: 0 lost, 0 duplicated.
"""

from __future__ import annotations

import re
from collections import Counter

_STAMP_RE = re.compile(r"^\s*[-*+]\s+(?:<!--[^<>]*?-->\s*)*(\d{1,2}):(\d{2})\b")


def stamp(line: str) -> int | None:
    """The minute of the day a journal line was written (``HH:MM`` after its marker)."""
    m = _STAMP_RE.match(line)
    if m is None:
        return None
    hh, mm = int(m.group(1)), int(m.group(2))
    return hh * 60 + mm if hh < 24 and mm < 60 else None


def split(text: str) -> list[str]:
    """The lines of ``text`` (no trailing empty line for the final newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _wanted(base: Counter[str], ours: Counter[str], theirs: Counter[str]) -> Counter[str]:
    """How many times each line stays: a side that left a count as it was takes the
    other's; both changed it the same way (both appended it): the larger count."""
    out: Counter[str] = Counter()
    for line in ours.keys() | theirs.keys():
        b, o, t = base[line], ours[line], theirs[line]
        if o == b:
            n = t
        elif t == b:
            n = o
        elif o > b and t > b:
            n = max(o, t)  # appended on both sides (or seen twice): once
        elif o < b and t < b:
            n = min(o, t)
        else:
            n = max(o, t)  # removed on one side, added on the other: nothing is lost
        if n > 0:
            out[line] = n
    return out


def _keyed(lines: list[str], rank: int) -> list[tuple[int, int, int, str]]:
    """Each line with its sort key: the running latest stamp (so a side's own order is
    kept), the side, its position."""
    latest = -1
    out = []
    for i, line in enumerate(lines):
        s = stamp(line)
        if s is not None and s > latest:
            latest = s
        out.append((latest, rank, i, line))
    return out


def merge_journal(base: str, ours: str, theirs: str) -> str:
    """The union of ``ours`` and ``theirs`` (both descended from ``base``), in time order."""
    b, o, t = split(base), split(ours), split(theirs)
    want = _wanted(Counter(b), Counter(o), Counter(t))
    kept: list[str] = []
    left = Counter(want)
    for line in o:
        if left[line] > 0:
            kept.append(line)
            left[line] -= 1
    extra: list[str] = []
    for line in t:
        if left[line] > 0:
            extra.append(line)
            left[line] -= 1
    merged = sorted(_keyed(kept, 0) + _keyed(extra, 1))
    lines = _tidy([line for *_, line in merged])
    return "\n".join(lines) + "\n" if lines else ""


def _tidy(lines: list[str]) -> list[str]:
    """Headings first (the ``# YYYY-MM-DD`` title of each side), blank runs collapsed."""
    heads = [ln for ln in lines if ln.startswith("# ")]
    rest = [ln for ln in lines if not ln.startswith("# ")]
    out: list[str] = []
    for ln in heads + ([""] if heads and rest and rest[0].strip() else []) + rest:
        if ln.strip() or (out and out[-1].strip()):
            out.append(ln)
    return out


__all__ = ["merge_journal", "split", "stamp"]
