"""Dreaming keeps MEMORY.md current (issue 21, point 4; R-CURRENT-3). Pure.

When a new promoted entry says that something about the same subject changed, the
older generated entry it replaces is marked superseded *in place* (never deleted, never
rewritten): ``- <old text> Source: <anchor> (superseded on <day> by <new anchor>)``,
its trailers kept. A superseded entry no longer fires triggers and is not bootstrapped
as current (:func:`reverie.recall.triggers.superseded`); it is the first to leave for
the archive when MEMORY.md is full, and search still finds it.

The same subject, decided by code and explained in DREAMS.md:

- the same speaker (``Caroline: ...``), or neither names one;
- the new entry is from a later day than every source of the old one (the journal
  days of their anchors) and states the change ("moved to", "now", "no longer",
  "switched", "instead of", "换成", "不再", ...:
  ``_CHANGE``, without the words too common to decide alone: "new", "started");
- they share at least :data:`MIN_SHARED` content stems besides the speaker's name, and
  at least :data:`OVERLAP` of them (Jaccard).

Only what dreaming promotes can supersede, and it promotes owner and agent lines only
(the provenance gate): an untrusted or system line never marks anything superseded. The
person's own entries (outside the generated section) are never marked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..recall.triggers import superseded
from ..storage.trailers import TRAILER_RE, strip
from ..tokens import jaccard, stem_set
from .content import split_speaker
from .memory_file import ANCHOR_RE, undated

# the words that say a value changed, English and Chinese: the last word list deciding
# a claim, until MEMORY.md's entries are superseded by version links in the files
# (issue 38, point 1); "new", "started" are too common to decide alone
_CHANGE = re.compile(
    r"\b(?:moved|moving|move to|now|switched|switching|switch(?:ed)? to|no longer|"
    r"not any ?more|any ?more|replaced|replacing|instead|changed|changing|"
    r"rescheduled|migrated|took over|taking over|from now on|these days|since then|"
    r"cancelled|gave up|stopped|rotated|renamed|upgraded|sold)\b"
    "|改到|改成|改为|改放|改学|已经|不再|换成|换了|换到|搬到|迁到|现在|"
    "推迟到|提前到|交给|接手|新家|新号|从今天起|目前",
    re.I,
)
OVERLAP = 0.2  # Jaccard of the two entries' content stems (the speaker's name left out)
MIN_SHARED = 2  # ... and at least this many stems in common
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


@lru_cache(maxsize=8192)  # fit() asks it of every entry for every new one
def _subject(text: str) -> tuple[str | None, frozenset[str]]:
    body = ANCHOR_RE.sub(" ", undated(strip(re.sub(r"^\s*[-*+]\s+", "", text))))
    speaker, said = split_speaker(body.strip())
    names = stem_set(speaker) if speaker else frozenset()
    return (speaker.lower() if speaker else None), stem_set(said) - names


def why_supersedes(new_text: str, new_anchor: str, old_raw: str) -> str | None:
    """Why the new entry supersedes the old one (``None``: it does not)."""
    if superseded(strip(old_raw)):
        return None
    new_days, old_days = _days(new_anchor), _days(old_raw)
    if not new_days or not old_days or new_days[0] <= max(old_days):
        return None
    changed = [m.group(0) for m in _CHANGE.finditer(new_text)]
    if not changed:
        return None
    who_new, new = _subject(new_text)
    who_old, old = _subject(old_raw)
    if who_new != who_old:
        return None
    shared = new & old
    if len(shared) < MIN_SHARED or jaccard(new, old) < OVERLAP:
        return None
    who = f"{who_new.title()}, " if who_new else ""
    return (
        f"the same subject ({who}shared {', '.join(sorted(shared)[:5])}), newer "
        f"({new_days[0]} after {max(old_days)}), and it says it changed (“{changed[0]}”)"
    )


def mark(old_raw: str, day: str, anchor: str) -> str:
    """The old entry's line, marked superseded in place (its text and trailers kept)."""
    note = f" (superseded on {day} by {anchor})"
    first_trailer = TRAILER_RE.search(old_raw)
    cut = first_trailer.start() if first_trailer else len(old_raw.rstrip())
    return old_raw[:cut].rstrip() + note + old_raw[cut:]


def day_of(anchor: str) -> str:
    days = _days(anchor)
    return days[0] if days else ""


__all__ = ["MIN_SHARED", "OVERLAP", "Superseded", "day_of", "mark", "why_supersedes"]
