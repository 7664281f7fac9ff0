"""MEMORY.md's budget without a model (R-DREAM-Q2). Pure.

New promoted entries go into the generated section only while the file stays within
``memory_max_chars``. When it is full a new entry must beat the weakest generated entry:
a superseded one first, then the least needed now, its need weighed by the learned
classifier's probability that it is worth keeping (chatter an earlier night's rules let
in leaves before a fact needed alike; of equal strength the older leaves, so what is
needed now replaces what was needed long ago); an entry promoted this month stays. The
weaker one leaves MEMORY.md for the archive (a searchable Markdown file, never deleted).
A new entry that says what an entry already says (token Jaccard >= ``MERGE_SIMILARITY``)
is merged into it: the old entry gains the new source anchor, nothing else changes. The
person's own entries (outside the generated section) are never moved or changed. A new
owner entry that says an older generated entry changed marks it superseded in place
(:mod:`.current`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..recall.evidence import RecallStats
from ..recall.triggers import superseded
from ..storage.trailers import parse_line, strip
from ..tokens import jaccard, token_set
from . import current
from .consolidate import Promotion
from .current import Superseded
from .memory_file import ANCHOR_RE, lines, replace_generated, undated
from .signals import compute_signals

MERGE_SIMILARITY = 0.6
ARCHIVE_HEADER = (
    "# Archived from MEMORY.md\n\n"
    "Entries dreaming moved out of MEMORY.md to keep it within its budget. They are\n"
    "still searched; edit or delete them as you like.\n"
)


@dataclass
class Fitted:
    """What fitting the promotions into the budget gives."""

    text: str
    added: list[str] = field(default_factory=list)  # rendered lines now in MEMORY.md
    archived: list[str] = field(default_factory=list)  # lines moved out (as they were)
    merged: int = 0
    refused: list[str] = field(default_factory=list)  # keys that did not (stay) in: not promoted
    superseded: list[Superseded] = field(default_factory=list)  # marked in place, and why


@dataclass
class _Slot:
    raw: str
    strength: float
    tokens: frozenset[str]
    new: bool


def _slot(
    raw: str,
    new: bool,
    need: Mapping[str, float],
    score: float | None = None,
    keep: Callable[[str], float] | None = None,
) -> _Slot:
    imp = parse_line(raw).trailers.importance
    body = ANCHOR_RE.sub(" ", undated(strip(raw)))
    if score is None:
        known = [need[a] for a in ANCHOR_RE.findall(raw) if a in need]
        score = max(known) if known else (imp if imp is not None else 5) / 10
        if superseded(strip(raw)):  # a superseded entry is the first to leave
            score = 0.0
        elif score < 1.0 and keep is not None:  # (a month's stay is 1.0: it stays)
            score *= keep(body)  # needed, times how likely it is worth keeping
    return _Slot(raw, score, frozenset(token_set(body)), new)


def _with_anchor(raw: str, anchor: str) -> str:
    ends = [m.end() for m in ANCHOR_RE.finditer(raw)]
    if not ends or anchor in raw:
        return raw
    return raw[: ends[-1]] + f" Source: {anchor}" + raw[ends[-1] :]


def _render(slots: list[_Slot], memory: str) -> str:
    return replace_generated(memory, [s.raw for s in slots])


def fit(
    memory: str,
    promotions: Sequence[Promotion],
    budget: int,
    need: Mapping[str, float] | None = None,
    replaces: Mapping[str, frozenset[str]] | None = None,
    keep: Callable[[str], float] | None = None,
) -> Fitted:
    """The new MEMORY.md text with as many of ``promotions`` (strongest first) as beat
    what they would displace, and what moved out or merged. ``need``: source anchor ->
    how much it is needed now (a score in [0, 1]); ``replaces``: a promotion's anchor ->
    the anchors its source line links to as the lines it replaces (:mod:`.current`);
    ``keep``: how likely an entry's text is worth keeping (the learned classifier's
    probability): outside its first month an entry's strength is its need times it."""
    need, replaces = need or {}, replaces or {}
    slots = [
        _slot(ln.raw, False, need, keep=keep)
        for ln in lines(memory)
        if ln.kind == "entry" and ln.generated
    ]
    out = Fitted(memory)
    ordered = sorted(promotions, key=lambda p: -p.score)
    present = set(ANCHOR_RE.findall(memory))  # (a superseded note names an anchor too)
    for p in ordered:
        if p.anchor in present:
            continue
        target = _superseded_by(p, slots, replaces)
        toks = frozenset(token_set(ANCHOR_RE.sub(" ", undated(p.text))))
        twin = next((s for s in slots if jaccard(toks, s.tokens) >= MERGE_SIMILARITY), None)
        if target is None and twin is not None:
            twin.raw = _with_anchor(twin.raw, p.anchor)
            out.merged += 1
            continue
        kept = target[0].strength if target else 0.0
        if target:  # what it replaces is the first to make room
            target[0].strength = 0.0
        cand = _slot(p.rendered, True, need, p.score)
        trial = [*slots, cand]
        evicted: list[_Slot] = []
        while len(_render(trial, memory)) > budget:
            # weakest: least needed, then the oldest (first in the section); the new
            # entry counts as weaker on a tie, so it must beat what it displaces
            weakest = min(trial, key=lambda s: (s.strength, not s.new, trial.index(s)))
            if weakest is cand:
                break
            trial.remove(weakest)
            evicted.append(weakest)
        if len(_render(trial, memory)) > budget:
            out.refused.append(p.key)
            if target:
                target[0].strength = kept
            continue
        if target:
            old, why = target
            day = current.day_of(p.anchor)
            out.superseded.append(Superseded(strip(old.raw).strip(), p.text, p.anchor, day, why))
            old.raw = current.mark(old.raw, day, p.anchor)  # (archived with its note)
        slots = trial
        out.added.append(p.rendered)
        out.archived += [s.raw for s in evicted if not s.new]
        # an entry of this night displaced by a stronger one never landed: refused
        gone = {s.raw for s in evicted if s.new}
        out.refused += [q.key for q in ordered if q.rendered in gone]
        out.added = [a for a in out.added if a not in gone]
    changed = out.added or out.merged or out.superseded
    out.text = _render(slots, memory) if changed else memory
    return out


def _superseded_by(
    p: Promotion, slots: list[_Slot], replaces: Mapping[str, frozenset[str]]
) -> tuple[_Slot, str] | None:
    """The generated entry ``p`` supersedes (:mod:`.current`), and why."""
    for s in slots:
        why = current.why_supersedes(p.anchor, s.raw, replaces)
        if why is not None:
            return s, why
    return None


def need_now(stats: Sequence[RecallStats], now: datetime) -> dict[str, float]:
    """Source anchor -> its score now: how much each line is needed (``fit``'s need)."""
    return {f"{g.path}#L{g.start_line}-L{g.end_line}": compute_signals(g, now).score for g in stats}


def archive_lines(archived: Sequence[str], day: str) -> list[str]:
    """Archived entries as archive lines: the text and its source anchors, no trigger
    or importance trailer (an archived entry never fires), and the day it moved."""
    out = []
    for raw in archived:
        text = strip(raw).strip()
        text = re.sub(r"^\s*[-*+]\s+", "", text)
        out.append(f"- {text} (archived {day})")
    return out


def add_to_archive(archive: str, archived: Sequence[str], day: str) -> str:
    """The archive file with ``archived`` appended (each anchor once)."""
    present = set(ANCHOR_RE.findall(archive))
    new = [ln for ln in archive_lines(archived, day) if not set(ANCHOR_RE.findall(ln)) <= present]
    if not new:
        return archive
    if not archive.strip():
        return ARCHIVE_HEADER + "\n" + "\n".join(new) + "\n"
    return archive.rstrip("\n") + "\n" + "\n".join(new) + "\n"


__all__ = [
    "ARCHIVE_HEADER",
    "MERGE_SIMILARITY",
    "Fitted",
    "add_to_archive",
    "archive_lines",
    "fit",
    "need_now",
]
