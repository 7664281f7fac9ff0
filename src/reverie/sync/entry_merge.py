"""The three-way merge of ``MEMORY.md`` and ``USER.md`` by entry (pure).

An *entry* is a top-level list item with its indented continuation lines; every other
line (a heading, a paragraph, a blank) is a block of its own. The merge is diff3 over
these blocks: a region only one side changed takes that side; a region both sides
changed the same way is taken once; a region both sides changed differently is a
**conflict**: both versions are kept, between plain note lines a person (and a model
reading the bootstrap) understands, never git's ``<<<<<<<`` markers::

    > Sync conflict 3f9a0c: one entry was edited on two devices. Version 1 (this device):
    - Deploys go out on Tuesdays.
    > Version 2 of sync conflict 3f9a0c (the other device):
    - Deploys go out on Thursdays.
    > End of sync conflict 3f9a0c: pick one with `reverie sync --pick 3f9a0c=1`.

The entries between the notes are kept byte for byte (trailers, markers and all); the
conflict stays until the owner picks (:func:`pick`) or edits the notes away.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from .journal_merge import split

_ITEM_RE = re.compile(r"^[-*+]\s|^\d{1,9}[.)]\s")
_OPEN_RE = re.compile(r"^> Sync conflict ([0-9a-f]{6,16}): ")
_SECOND_RE = re.compile(r"^> Version 2 of sync conflict ([0-9a-f]{6,16})")
_CLOSE_RE = re.compile(r"^> End of sync conflict ([0-9a-f]{6,16})")


def blocks(text: str) -> list[str]:
    """``text`` cut into entries (a list item and its continuation) and single lines."""
    out: list[str] = []
    for line in split(text):
        cont = line[:1] in (" ", "\t") and line.strip()
        if cont and out and _ITEM_RE.match(out[-1]):
            out[-1] += "\n" + line
        else:
            out.append(line)
    return out


def _sync_points(base: list[str], side: list[str]) -> dict[int, int]:
    m: dict[int, int] = {}
    for a, b, n in SequenceMatcher(None, base, side, autojunk=False).get_matching_blocks():
        for k in range(n):
            m[a + k] = b + k
    return m


def common_ends(a: Sequence[Any], b: Sequence[Any]) -> tuple[int, int]:
    """How long the start and the end ``a`` and ``b`` share are (never overlapping)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _both(
    cb: list[str], co: list[str], ct: list[str], labels: tuple[str, str], made: list[str]
) -> list[str]:
    """A region both sides changed: an append on one side after (or before) the base
    region is no conflict with an edit on the other; what both kept alike stays once."""
    n = len(cb)
    if set(ct) - set(cb) <= set(co):  # ours already holds theirs (a merge re-run)
        return co
    if set(co) - set(cb) <= set(ct):
        return ct
    if cb and co[:n] == cb:
        return ct + co[n:]
    if cb and ct[:n] == cb:
        return co + ct[n:]
    if cb and co[-n:] == cb:
        return co[:-n] + ct
    if cb and ct[-n:] == cb:
        return ct[:-n] + co
    head, tail = common_ends(co, ct)
    mo, mt = co[head : len(co) - tail], ct[head : len(ct) - tail]
    made.append(conflict_id(mo, mt))
    return co[:head] + _conflict(mo, mt, labels) + co[len(co) - tail :]


@dataclass(frozen=True)
class Merged:
    """A merged file and the conflicts the merge made."""

    text: str
    conflicts: tuple[str, ...]  # the ids of the conflicts this merge made


def conflict_id(ours: list[str], theirs: list[str]) -> str:
    return hashlib.sha256("\x00".join([*ours, "\x01", *theirs]).encode()).hexdigest()[:6]


def _conflict(ours: list[str], theirs: list[str], labels: tuple[str, str]) -> list[str]:
    cid = conflict_id(ours, theirs)
    return [
        f"> Sync conflict {cid}: one entry was edited on two devices. Version 1 ({labels[0]}):",
        *ours,
        f"> Version 2 of sync conflict {cid} ({labels[1]}):",
        *theirs,
        f"> End of sync conflict {cid}: pick one with `reverie sync --pick {cid}=1`.",
    ]


def merge_entries(
    base: str, ours: str, theirs: str, labels: tuple[str, str] = ("this device", "the other")
) -> Merged:
    """diff3 of ``ours`` and ``theirs`` against ``base`` by entry (see the module doc)."""
    b, o, t = blocks(base), blocks(ours), blocks(theirs)
    mo, mt = _sync_points(b, o), _sync_points(b, t)
    out: list[str] = []
    made: list[str] = []
    i = j = k = 0
    stable = [x for x in range(len(b)) if x in mo and x in mt] + [len(b)]
    for s in stable:
        if s < i or (s < len(b) and (mo[s] < j or mt[s] < k)):
            continue
        jo = mo[s] if s < len(b) else len(o)
        kt = mt[s] if s < len(b) else len(t)
        cb, co, ct = b[i:s], o[j:jo], t[k:kt]
        if co == cb:
            out += ct
        elif ct == cb or co == ct:
            out += co
        else:
            out += _both(cb, co, ct, labels, made)
        if s < len(b):
            out.append(b[s])
        i, j, k = s + 1, jo + 1, kt + 1
    text = "\n".join(out)
    return Merged(text + "\n" if out else "", tuple(made))


@dataclass(frozen=True)
class Conflict:
    """An open sync conflict: its id and its two versions (lines)."""

    id: str
    versions: tuple[tuple[str, ...], tuple[str, ...]]


def conflicts(text: str) -> list[Conflict]:
    """The conflicts still open in ``text`` (notes a person removed by hand are gone)."""
    found: list[Conflict] = []
    lines = split(text)
    i = 0
    while i < len(lines):
        m = _OPEN_RE.match(lines[i])
        span = _span(lines, i, m.group(1)) if m else None
        if m is None or span is None:
            i += 1
            continue
        second, end = span
        found.append(
            Conflict(m.group(1), (tuple(lines[i + 1 : second]), tuple(lines[second + 1 : end])))
        )
        i = end + 1
    return found


def _span(lines: list[str], start: int, cid: str) -> tuple[int, int] | None:
    second = None
    for n in range(start + 1, len(lines)):
        m2, m3 = _SECOND_RE.match(lines[n]), _CLOSE_RE.match(lines[n])
        if m2 and m2.group(1) == cid and second is None:
            second = n
        elif m3 and m3.group(1) == cid:
            return (second, n) if second is not None else None
    return None


def pick(text: str, cid: str, version: int) -> str:
    """``text`` with conflict ``cid`` replaced by its version 1 or 2; ValueError when
    there is no such open conflict."""
    if version not in (1, 2):
        raise ValueError("a conflict has versions 1 and 2")
    lines = split(text)
    for i, line in enumerate(lines):
        m = _OPEN_RE.match(line)
        span = _span(lines, i, cid) if m and m.group(1) == cid else None
        if span is not None:
            second, end = span
            chosen = lines[i + 1 : second] if version == 1 else lines[second + 1 : end]
            return "\n".join([*lines[:i], *chosen, *lines[end + 1 :]]) + "\n"
    raise ValueError(f"no open sync conflict {cid!r}")


__all__ = [
    "Conflict",
    "Merged",
    "blocks",
    "common_ends",
    "conflict_id",
    "conflicts",
    "merge_entries",
    "pick",
]
