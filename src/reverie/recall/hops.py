"""Questions that need more than one look (issue 21 point 6). Pure code, no I/O.

- **Question parts**: "What do Jon and Gina both like?" is two questions, one per
  person; searched whole, the keyword lane's best hits are the lines that name both (or
  the more frequent name), and the other person's lines rank low. :func:`parts` splits
  such a question at the "and" / "和" joining two names (or at "both X and Y"); each
  part is scored on its own and a candidate keeps its best score.
- **The named speaker**: a journal line ``- Caroline: ...`` (or ``- 14:02 Caroline:
  ...``) is spoken by Caroline; a question that names Caroline is most often about what
  she said, so :func:`speaker_boosts` lifts the lines she speaks.
- **A second round**: the line that answers a question often names what the question
  does not ("the book Caroline suggested" / "I finally read Becoming Nicole"): the
  entities and the terms of the first round's best hits that the other candidates do
  not share (:func:`seed_terms`) are searched once more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..tokens import CJK_CLASS, terms

SPEAKER_RE = re.compile(r"^\s*[-*+]\s+(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?([A-Z][\w'.-]*):\s")
_NAME = r"[A-Z][\w'-]*"
_NAMES_AND = re.compile(rf"\b({_NAME})\s+and\s+({_NAME})\b")
_BOTH_AND = re.compile(r"\bboth\s+(.+?)\s+and\s+(.+?)(?=[?.!,]|$)", re.IGNORECASE)
_CJK_AND = re.compile(rf"([{CJK_CLASS}]{{2}})和([{CJK_CLASS}]{{2}})(?=.*(?:都|一起|共同|两))")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][a-z][\w'-]*|[A-Z]{2,}[\w-]*)")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,60})[\"”]")
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_BOTH_WORD = re.compile(r"\s*\bboth\b", re.IGNORECASE)


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


def _without(query: str, start: int, end: int, keep: str) -> str:
    text = query[:start] + keep + query[end:]
    return " ".join(_BOTH_WORD.sub("", text).split())


def parts(query: str) -> list[str]:
    """The questions a joined question asks, or [] when it is one question: "What do
    Jon and Gina both like?" -> ["What do Jon like?", "What do Gina like?"]. Only a
    conjunction between two names, "both X and Y", or "A和B都..." splits (an "and"
    inside a description, "salt and pepper", does not)."""
    m = _NAMES_AND.search(query) or _BOTH_AND.search(query)
    if m is None:
        m = _CJK_AND.search(query)
        if m is None:
            return []
        return [query[: m.start()] + m.group(g) + query[m.end() :] for g in (1, 2)]
    if m.re is _NAMES_AND and not (names(f"x {m.group(1)}") and names(f"x {m.group(2)}")):
        return []
    found = [_without(query, m.start(), m.end(), m.group(g)) for g in (1, 2)]
    return [p for p in found if p and p != query]


def speaker_boosts(
    query: str, lines: Iterable[tuple[int, str]], factor: float
) -> dict[int, tuple[float, str]]:
    """Chunk id -> (multiplier, speaker) for lines spoken by a person the question
    names. Nothing when the question names no speaker, or when every candidate line
    is spoken by a named person (then it tells nothing apart)."""
    asked = names(query)
    if not asked or factor == 1.0:
        return {}
    spoken = [(cid, speaker(text)) for cid, text in lines]
    named = {cid: who for cid, who in spoken if who is not None and who in asked}
    if not named or len(named) == sum(1 for _, who in spoken if who is not None):
        return {}
    return {cid: (factor, who) for cid, who in named.items()}


def seed_terms(
    query: str, seeds: Sequence[str], others: Sequence[str], *, most: int = 8, rare: bool = True
) -> list[str]:
    """What a second round searches for: the entities (names, quoted titles) and rare
    terms of the best hits ``seeds`` that the question does not hold. A term is rare
    when no other candidate (``others``) holds it; speakers' names are left out (every
    line of a chat holds one)."""
    asked = set(terms(query)) | {n.lower() for n in names(query)}
    speakers = {s.lower() for s in (speaker(t) for t in (*seeds, *others)) if s}
    common: set[str] = set()
    for text in others:
        common.update(terms(text))
    out: list[str] = []

    def add(term: str) -> None:
        if term and term not in asked and term not in speakers and term not in out:
            out.append(term)

    for text in seeds:
        body = SPEAKER_RE.sub("", text, count=1)
        for q in _QUOTED.findall(body):
            for t in terms(q):
                add(t)
        for n in names(body):
            for t in terms(n):
                add(t)
        for t in terms(body) if rare else []:
            if t not in common and len(t) > 3 and not t.isdigit():
                add(t)
    return out[:most]


__all__ = ["names", "parts", "seed_terms", "speaker", "speaker_boosts"]
