"""Dreaming keeps MEMORY.md current by the version links in the files (issue 38;
R-CURRENT-3). Pure.

When a new promoted entry's source line replaces (a signed ``replaces:`` link,
:mod:`reverie.provenance.links`, written by ``reverie link`` or a model's checked
link) a source line of an older generated entry, the older entry is marked superseded
*in place* (never deleted, never rewritten): ``- <old text> Source: <anchor>
(superseded on <day> by <new anchor>)``, its trailers kept. A superseded entry no
longer fires triggers and is not bootstrapped as current
(:func:`reverie.recall.triggers.superseded`); it is the first to leave for the archive
when MEMORY.md is full, and search still finds it.

Without a link, no entry is marked: a mark is a claim, and words that sound like a
change ("moved to", "换成") are no evidence of which entry changed (on wordings written
elsewhere a third of such marks were wrong). The link's own rules hold: owner and agent
lines only, an agent line never replaces the owner's, the newer of a later day. The
person's own entries (outside the generated section) are never marked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..recall.triggers import superseded
from ..storage.trailers import TRAILER_RE, strip
from .consolidate import Promotion
from .memory_file import ANCHOR_RE, lines

_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})\.md#L")


@dataclass(frozen=True)
class Superseded:
    """One old entry marked superseded by a new one, and why (for DREAMS.md)."""

    old: str  # the old entry's text (no trailers)
    new: str  # the new entry's text
    anchor: str  # the new entry's source anchor
    day: str  # the new entry's source day
    why: str

    def summary(self) -> str:
        return (
            f"superseded “{_short(self.old)}” by “{_short(self.new)}” ({self.anchor}): {self.why}"
        )


def _short(text: str, n: int = 90) -> str:
    body = ANCHOR_RE.sub("", re.sub(r"^\s*[-*+]\s+", "", text)).strip()
    return body if len(body) <= n else body[: n - 1] + "…"


def _days(raw: str) -> list[str]:
    """The journal days of an entry's source anchors (of ``raw`` itself if it is one)."""
    found = ANCHOR_RE.findall(raw) or [raw]
    return [m.group(1) for a in found for m in [_DAY.search(a)] if m]


def why_supersedes(
    new_anchor: str, old_raw: str, replaces: Mapping[str, frozenset[str]]
) -> str | None:
    """Why the entry of ``new_anchor`` supersedes the entry ``old_raw``: its source
    line links to one of the old entry's (``replaces``: a new anchor -> the anchors
    whose lines its line replaces, read from the files); ``None``: it does not."""
    if superseded(strip(old_raw)):
        return None
    linked = replaces.get(new_anchor, frozenset()) & set(ANCHOR_RE.findall(old_raw))
    if not linked:
        return None
    new_days, old_days = _days(new_anchor), _days(old_raw)
    if not new_days or not old_days or new_days[0] <= max(old_days):
        return None
    return f"its line replaces {min(linked)} (a version link in {new_anchor.split('#')[0]})"


def mark(old_raw: str, day: str, anchor: str) -> str:
    """The old entry's line, marked superseded in place (its text and trailers kept)."""
    note = f" (superseded on {day} by {anchor})"
    first_trailer = TRAILER_RE.search(old_raw)
    cut = first_trailer.start() if first_trailer else len(old_raw.rstrip())
    return old_raw[:cut].rstrip() + note + old_raw[cut:]


def day_of(anchor: str) -> str:
    days = _days(anchor)
    return days[0] if days else ""


def premark(
    memory: str, promotions: Sequence[Promotion], replaces: Mapping[str, frozenset[str]]
) -> tuple[str, list[Superseded]]:
    """``memory`` with each generated entry a promotion's line replaces marked superseded
    in place, and the marks: what the consolidation model is given, so that a rewrite
    it makes keeps the fact's history as written (a kept entry may not change)."""
    out = memory.split("\n")
    found: list[Superseded] = []
    for ln in lines(memory):
        if ln.kind != "entry" or not ln.generated:
            continue
        for p in promotions:
            why = why_supersedes(p.anchor, ln.raw, replaces)
            if why is not None:
                day = day_of(p.anchor)
                found.append(Superseded(strip(ln.raw).strip(), p.text, p.anchor, day, why))
                out[ln.number - 1] = mark(ln.raw, day, p.anchor)
                break
    return "\n".join(out), found


__all__ = ["Superseded", "day_of", "mark", "premark", "why_supersedes"]
