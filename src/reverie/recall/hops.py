"""Questions that need more than one look (issue 21 point 6). Pure code, no I/O.

- **The named speaker**: a journal line ``- Caroline: ...`` (or ``- 14:02 Caroline:
  ...``) is spoken by Caroline. A question that names Caroline is most often about what
  she said or did, yet the lines that *name* her are the other person's ("Wow,
  Caroline!"), which the keyword lane matches as well as hers. :func:`lift_speakers`
  multiplies the score of the lines spoken by a person the question names; in a budget,
  a neighbouring entry is lifted by its own speaker, not by its parent's
  (:func:`context_speaker`).
- **A session kept together**: in a budget, the hits of a session (one journal or
  transcript file) that holds several direct hits are lifted together
  (:func:`sessions_together`): a session that keeps to the question's topic is read
  before stray lines of other days.

Measured on the LoCoMo development split (bench/README.md, "Issue 21 point 6"): the
agent's view 0.854 -> 0.880 (multi-hop 0.644 -> 0.691, open-domain 0.545 -> 0.587).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

from .ranking import Scored

SPEAKER_RE = re.compile(r"^\s*[-*+]\s+(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?([A-Z][\w'.-]*):\s")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][a-z][\w'-]*|[A-Z]{2,}[\w-]*)")
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
SPOKEN = "spoken by "


def speaker(text: str) -> str | None:
    """Who speaks a journal line (``- Name: text``), or None."""
    m = SPEAKER_RE.match(text)
    return m.group(1) if m else None


def names(text: str) -> frozenset[str]:
    """The capitalised words of ``text`` that are names, not a sentence's first word
    ("What", "When"): possessives folded ("Caroline's" -> "Caroline")."""
    out: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in '.!?:"“(':
            continue  # a sentence's first word is capitalised anyway
        out.add(_POSSESSIVE.sub("", m.group(1)))
    return frozenset(out)


def _note(s: Scored, note: str) -> Scored:
    return replace(s, notes=(*s.notes, note))


def lift_speakers(scored: list[Scored], asked: frozenset[str], factor: float) -> list[Scored]:
    """``scored`` with the content lines spoken by a person the question names
    multiplied by ``factor`` in their order (the final score), not in their relevance:
    the min score lets in the same hits, so a search returns no more lines, and the
    recall that dreaming counts is not inflated. Unchanged when the question names
    no speaker, or when every line with a speaker is spoken by a named person ("What
    do Jon and Gina both like?" names both: nothing to tell apart). ``asked``: the
    names the question holds (:func:`names`)."""
    if not asked or factor == 1.0:
        return scored
    who = [speaker(s.candidate.text) if s.tier == 0 else None for s in scored]
    named = [w is not None and w in asked for w in who]
    if not any(named) or sum(named) == sum(w is not None for w in who):
        return scored
    return [
        _note(replace(s, final=s.final * factor), SPOKEN + str(w)) if up else s
        for s, w, up in zip(scored, who, named, strict=True)
    ]


def lift_window(scored: list[Scored], first: date, last: date, factor: float) -> list[Scored]:
    """``scored`` with the dated lines of the days a question names (``first`` to
    ``last``: "10 days ago", "on 25 May, 2022") multiplied by ``factor`` in their order,
    as :func:`lift_speakers` lifts a named speaker's."""
    if factor == 1.0:
        return scored
    return [
        _note(replace(s, final=s.final * factor), f"said in {first}..{last}")
        if s.tier == 0 and s.candidate.day is not None and first <= s.candidate.day <= last
        else s
        for s in scored
    ]


def context_speaker(
    asked: frozenset[str], ranked: Sequence[Scored], factor: float
) -> tuple[list[float], Callable[[str], float]]:
    """For the neighbours of a budget: each ranked hit's score without its speaker
    lift, and the lift a neighbour's own line earns (the named person's reply beside
    the other's message is lifted, the other's line beside the named one's is not)."""
    lifted = [any(n.startswith(SPOKEN) for n in s.notes) for s in ranked]
    if not any(lifted):
        return [s.final for s in ranked], lambda _text: 1.0

    def lift(text: str) -> float:
        return factor if speaker(text) in asked else 1.0

    own = [s.final / factor if up else s.final for s, up in zip(ranked, lifted, strict=True)]
    return own, lift


def sessions_together(ranked: list[Scored], bonus: float, *, floor: float) -> list[Scored]:
    """A budget's hits with the lines of a session (one journal or transcript file)
    that holds several direct hits lifted together: x (1 + ``bonus`` x its other
    direct hits of relevance >= ``floor``, up to three, / 3)."""
    if bonus <= 0:
        return ranked
    count: dict[str, int] = {}
    for s in ranked:
        c = s.candidate
        if s.tier == 0 and c.kind in ("journal", "transcript") and s.relevance >= floor:
            count[c.path] = count.get(c.path, 0) + 1
    out = []
    for s in ranked:
        others = min(3, count.get(s.candidate.path, 0) - 1)
        if s.tier or others <= 0:
            out.append(s)
            continue
        f = 1.0 + bonus * others / 3
        out.append(_note(replace(s, final=s.final * f), f"session of {others + 1} hits"))
    return out


__all__ = [
    "context_speaker",
    "lift_speakers",
    "lift_window",
    "names",
    "sessions_together",
    "speaker",
]
