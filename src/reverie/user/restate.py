"""Directives restated beside the message (R-USER-1, seed section 9.2). Pure code.

A preference merely present in context stops being followed after a few turns;
restated next to the question it is followed. So each turn, the active directives of
USER.md that bear on the message are put in a block of their own, last, right beside
the user's message: every directive marked ``always: on``, plus those the message
matches lexically (a content word of the directive or of its key, or a word sharing a
stem of 5+ letters: "indent" matches "indentation") or semantically (the embedder's
cosine at least ``semantic_min``, when an embedder is loaded). Bounded: at most
``max_directives`` directives and ``max_chars`` characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..provenance.frames import DIRECTIVE_BLOCK_CLOSE, DIRECTIVE_BLOCK_OPEN
from ..records import Record
from ..stopwords import CJK_DIRECTIVE_LEADS, CJK_GRAMMAR, DIRECTIVE_FILLER
from ..tokens import is_cjk, token_set
from .directives import Directive

BLOCK_INTRO = "The user's standing directives that bear on this message (USER.md); follow them:"
MIN_STEM = 5
Similarity = Callable[[str, Sequence[str]], Sequence[float]]


class Restated(Record):
    """A directive chosen for this message, and why (always, lexical or semantic)."""

    __slots__ = ("directive", "score", "why")

    def __init__(self, directive: Directive, why: str, score: float) -> None:
        self.directive, self.why, self.score = directive, why, score

    def as_dict(self) -> dict[str, object]:
        return {**self.directive.as_dict(), "why": self.why, "score": round(self.score, 4)}


def _key_words(key: str | None) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[._/\-]+", key or "") if len(w) >= 3)


# Chinese matches on content bigrams: a single character, a bigram holding a grammar
# character, or an imperative lead (总是, 永远, 优先 ...) says nothing about the subject
_CJK_GRAMMAR = CJK_GRAMMAR | frozenset("请要")
_CJK_LEADS = CJK_DIRECTIVE_LEADS


def content(text: str) -> frozenset[str]:
    """The words (and CJK uni- and bigrams) a directive's meaning rests on."""
    return frozenset(t for t in token_set(text) if t not in DIRECTIVE_FILLER)


def terms_of(text: str) -> frozenset[str]:
    """What a message and a directive are matched on."""
    return frozenset(
        t
        for t in content(text)
        if not is_cjk(t[0]) or (len(t) == 2 and t not in _CJK_LEADS and not set(t) & _CJK_GRAMMAR)
    )


def lexical(d: Directive, message: str) -> float:
    """The share of the message's content words that the directive (or its key) names."""
    mine = terms_of(d.text) | _key_words(d.key)
    theirs = terms_of(message)
    if not mine or not theirs:
        return 0.0
    hits = 0
    for w in theirs:
        if w in mine or (
            not is_cjk(w[0])
            and len(w) >= MIN_STEM - 1
            and any(_stem_match(w, m) for m in mine if not is_cjk(m[0]))
        ):
            hits += 1
    return hits / len(theirs)


def _stem_match(a: str, b: str) -> bool:
    short, long_ = sorted((a, b), key=len)
    return len(short) >= MIN_STEM - 1 and long_.startswith(short[: max(MIN_STEM, len(short) - 1)])


def select(
    directives: Sequence[Directive],
    message: str,
    *,
    similarity: Similarity | None = None,
    semantic_min: float = 0.3,
    max_directives: int = 5,
) -> tuple[list[Restated], list[str]]:
    """The directives to restate (always-on first, then by match), and notes."""
    active = [d for d in directives if d.active]
    notes: list[str] = []
    chosen: dict[int, Restated] = {}
    for d in active:
        if d.always:
            chosen[d.line] = Restated(d, "always", 1.0)
    for d in active:
        s = lexical(d, message)
        if d.line not in chosen and s > 0:
            chosen[d.line] = Restated(d, "lexical", s)
    rest = [d for d in active if d.line not in chosen]
    if similarity is not None and rest and token_set(message):
        try:
            sims = list(similarity(message, [d.text for d in rest]))
        except Exception as exc:  # P5: the lexical lane still answers
            notes.append(f"semantic match skipped: {type(exc).__name__}: {exc}")
            sims = []
        for d, sim in zip(rest, sims, strict=False):
            if sim >= semantic_min:
                chosen[d.line] = Restated(d, "semantic", float(sim))
    order = {"always": 0, "lexical": 1, "semantic": 1}
    ranked = sorted(chosen.values(), key=lambda r: (order[r.why], -r.score, r.directive.line))
    return ranked[: max(0, max_directives)], notes


def render_block(items: Sequence[Restated], max_chars: int = 600) -> tuple[str, list[Restated]]:
    """One block of at most ``max_chars`` characters, and the directives it holds."""
    if not items:
        return "", []
    frame = len(DIRECTIVE_BLOCK_OPEN) + len(BLOCK_INTRO) + len(DIRECTIVE_BLOCK_CLOSE) + 3
    lines: list[str] = []
    kept: list[Restated] = []
    used = frame
    for r in items:
        line = f"- {r.directive.text}"
        if used + len(line) + 1 > max_chars:
            room = max_chars - used - 1
            if room < 24:
                break
            line = line[: room - 1] + "…"
        lines.append(line)
        kept.append(r)
        used += len(line) + 1
    if not lines:
        return "", []
    return "\n".join([DIRECTIVE_BLOCK_OPEN, BLOCK_INTRO, *lines, DIRECTIVE_BLOCK_CLOSE]), kept


__all__ = ["BLOCK_INTRO", "Restated", "Similarity", "lexical", "render_block", "select"]
