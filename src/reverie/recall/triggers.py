"""Trigger injection (R-TRIG-1..6): pure scoring and selection, no I/O.

Runs on every inbound message, so it is cheap, local and deterministic:
eligibility (trusted curated entries only, never a superseded one; project-tagged ones only when all their
keys are active), per-phrase lexical score (one-word trigger hit 0.85, a whole
multi-word phrase as a contiguous hit 1.0, otherwise 0.85 x coverage),
``combined = 0.8 x trigger + 0.2 x retrieval relevance``, threshold 0.65, top 3, one
hidden block of at most 1,800 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..provenance.frames import TRIGGER_BLOCK_CLOSE, TRIGGER_BLOCK_OPEN
from ..provenance.origin import Origin
from ..records import Record
from ..storage.index.trigger_rows import TriggerRow
from ..storage.projects import INVALID_PROJECT
from ..tokens import is_cjk, stem, terms

SINGLE_WORD = 0.85
WHOLE_PHRASE = 1.0
TRIGGER_WEIGHT = 0.8
RELEVANCE_WEIGHT = 0.2
TRUSTED = frozenset({Origin.OWNER, Origin.AGENT})


def bm25_normalise(rank: float) -> float:
    """An FTS5 bm25 rank (negative; more negative is better) as a relevance in 0..1:
    a trigger's lexical relevance, and the keyword lane's score in search ranking
    (:mod:`reverie.recall.ranking`)."""
    r = abs(rank)
    return r / (1.0 + r)


TriggerEntry = TriggerRow
"""A trigger-carrying curated entry as trigger injection sees it: the index's trigger
row, read alike on every backend."""


class TriggerHit(Record):
    """An entry whose trigger fired: the phrase, the trigger score and relevance."""

    __slots__ = ("combined", "entry", "phrase", "relevance", "trigger_score")

    def __init__(
        self,
        entry: TriggerEntry,
        phrase: str,
        trigger_score: float,
        relevance: float,
        combined: float,
    ) -> None:
        self.entry, self.phrase, self.trigger_score = entry, phrase, trigger_score
        self.relevance, self.combined = relevance, combined


class Message(Record):
    """A message prepared once for scoring against many phrases; ``stems``: its words'
    stems ("painted" meets "painting")."""

    __slots__ = ("lower", "stems", "words")

    def __init__(
        self, lower: str, words: frozenset[str], stems: frozenset[str] = frozenset()
    ) -> None:
        self.lower, self.words, self.stems = lower, words, stems

    @classmethod
    def of(cls, text: str) -> Message:
        words = frozenset(terms(text))
        bare = (w.removesuffix("'s").removesuffix("’s") for w in words)  # "John's" names John
        return cls(text.lower(), words, frozenset(stem(w) for w in bare))


# the note dreaming writes on a curated entry a newer one replaced (issue 21, point 4:
# reverie.dreaming.current), or a person writes by hand: "(superseded on <day> by <anchor>)"
SUPERSEDED_NOTE = re.compile(r"\(superseded\b[^()]*\)", re.IGNORECASE)


def superseded(text: str) -> bool:
    """The curated entry says it was superseded: it is kept, found by search, but never
    fires a trigger and is not bootstrapped as current."""
    return SUPERSEDED_NOTE.search(text) is not None


def eligible(entry: TriggerEntry, active_projects: frozenset[str]) -> bool:
    """Trusted-origin curated entries only; journals, transcripts and untrusted never;
    a superseded entry never."""
    if entry.kind != "curated" or entry.origin not in TRUSTED or not entry.phrases:
        return False
    if superseded(entry.text):
        return False
    if entry.projects:
        return INVALID_PROJECT not in entry.projects and all(
            p in active_projects for p in entry.projects
        )
    return True


@lru_cache(maxsize=65536)
def phrase_parts(phrase: str) -> tuple[str, ...]:
    """The words of a trigger phrase."""
    return tuple(terms(phrase))


@lru_cache(maxsize=65536)
def phrase_pattern(phrase: str) -> re.Pattern[str] | None:
    """A multi-word phrase's words in a row (None: one word), compiled only for a
    message that holds one of them: most candidates' phrases never need it."""
    parts = phrase_parts(phrase)
    if len(parts) < 2:
        return None
    pieces = []
    for t in parts:
        esc = re.escape(t)
        pieces.append(esc if is_cjk(t[0]) else rf"(?<![^\W_]){esc}(?![^\W_])")
    return re.compile(r"[\W_]*".join(pieces))


def _term_hit(term: str, msg: Message, forms: bool = False) -> bool:
    """``term`` is a word of the message; ``forms``: or another form of one (a word of a
    multi-word phrase: "caroline painting" meets "What did Caroline paint?"). A one-word
    trigger is never a form away ("deploy" stays out of "deployment")."""
    if is_cjk(term[0]):
        return term in msg.lower
    return term in msg.words or (forms and stem(term) in msg.stems)


def phrase_score(phrase: str, msg: Message) -> float:
    parts = phrase_parts(phrase)
    if not parts:
        return 0.0
    hits = sum(1 for t in parts if _term_hit(t, msg, forms=len(parts) > 1))
    if hits == 0:
        return 0.0
    if len(parts) == 1:
        return SINGLE_WORD
    pattern = phrase_pattern(phrase)
    if pattern is not None and pattern.search(msg.lower):
        return WHOLE_PHRASE
    return SINGLE_WORD * hits / len(parts)


def entry_score(entry: TriggerEntry, msg: Message) -> tuple[float, str]:
    best, best_phrase = 0.0, ""
    for phrase in entry.phrases:
        s = phrase_score(phrase, msg)
        if s > best:
            best, best_phrase = s, phrase
    return best, best_phrase


def select(
    candidates: Iterable[tuple[TriggerEntry, float]],
    message: str,
    *,
    active_projects: frozenset[str] = frozenset(),
    threshold: float = 0.65,
    top: int = 3,
) -> list[TriggerHit]:
    """Score (entry, retrieval relevance) candidates; the hits above the threshold."""
    msg = Message.of(message)
    hits = []
    for entry, relevance in candidates:
        if not eligible(entry, active_projects):
            continue
        score, phrase = entry_score(entry, msg)
        if score <= 0:
            continue
        combined = TRIGGER_WEIGHT * score + RELEVANCE_WEIGHT * max(0.0, min(1.0, relevance))
        if combined >= threshold:
            hits.append(TriggerHit(entry, phrase, score, relevance, combined))
    hits.sort(key=lambda h: (-h.combined, h.entry.path, h.entry.start_line))
    return hits[:top]


BLOCK_OPEN = TRIGGER_BLOCK_OPEN
BLOCK_CLOSE = TRIGGER_BLOCK_CLOSE
BLOCK_INTRO = "Curated memory whose triggers match this message:"


def render_block(hits: Sequence[TriggerHit], max_chars: int = 1800) -> str:
    """One hidden block of at most ``max_chars`` characters ('' when no hits)."""
    if not hits:
        return ""
    frame = len(BLOCK_OPEN) + len(BLOCK_INTRO) + len(BLOCK_CLOSE) + 3
    budget = max_chars - frame
    lines: list[str] = []
    for h in hits:
        e = h.entry
        text = " ".join(e.text.split())
        if text.startswith(("- ", "* ")):
            text = text[2:]
        line = f"- {text} ({e.path}#L{e.start_line}-L{e.end_line})"
        room = budget - sum(len(x) + 1 for x in lines) - 1
        if room <= 20:
            break
        if len(line) > room:
            line = line[: room - 1] + "…"
        lines.append(line)
    return "\n".join([BLOCK_OPEN, BLOCK_INTRO, *lines, BLOCK_CLOSE])


__all__ = [
    "Message",
    "TriggerEntry",
    "TriggerHit",
    "bm25_normalise",
    "eligible",
    "entry_score",
    "phrase_parts",
    "phrase_pattern",
    "phrase_score",
    "render_block",
    "select",
    "superseded",
]
