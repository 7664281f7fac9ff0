"""Token counting and keyword segmentation (pure).

Latin text counts about 4 characters per token; every CJK or full-width character
counts as one token (SPEC section 8). For FTS5, CJK text is split into single
characters at index and query time, and multi-character terms become phrase queries,
so 1-, 2- and 4-character Chinese words are all found (``unicode61`` alone would
treat a whole run of Han characters as one token).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

_CJK_RANGES = (
    (0x3000, 0x303F),  # CJK symbols and punctuation (、。「」)
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half-width and full-width forms
    (0x20000, 0x2FA1F),  # extensions B..F, compatibility supplement
)
_CJK_CLASS = (
    "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in _CJK_RANGES if b < 0x10000)
    + "\U00020000-\U0002fa1f"
)
CJK_CLASS = _CJK_CLASS  # for a regex character class: every CJK character
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_CJK_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
# a "word": letters/digits that are not CJK
_WORD_RE = re.compile(rf"[^\W{_CJK_CLASS}_]+", re.UNICODE)
_FULLWIDTH_PUNCT = re.compile("[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def is_cjk(ch: str) -> bool:
    return bool(_CJK_RE.match(ch))


def count_tokens(text: str) -> int:
    """Approximate tokens: 1 per CJK/full-width char, 1 per 4 other chars (spaces too)."""
    cjk = len(_CJK_RE.findall(text))
    other = len(text) - cjk
    return cjk + math.ceil(other / 4)


def segment(text: str) -> str:
    """Text for the FTS5 ``unicode61`` tokenizer: every CJK char stands alone."""
    return _CJK_RUN_RE.sub(lambda m: " " + " ".join(m.group(0)) + " ", text)


def terms(text: str) -> list[str]:
    """Query terms: Latin words (lower-cased) and CJK runs, in order, no duplicates."""
    out: list[str] = []
    seen: set[str] = set()
    for m in re.finditer(f"{_WORD_RE.pattern}|[{_CJK_CLASS}]+", text):
        term = m.group(0)
        if _FULLWIDTH_PUNCT.fullmatch(term):
            continue
        term = _FULLWIDTH_PUNCT.sub("", term).lower()
        if term and term not in seen:
            seen.add(term)
            out.append(term)
    return out


def _phrase(term: str) -> str:
    if _CJK_RE.match(term):
        term = " ".join(term)
    return '"' + term.replace('"', '""') + '"'


def query_terms(text: str, drop: frozenset[str] = frozenset()) -> list[str]:
    """:func:`terms` without those in ``drop`` (stop words), unless that leaves none."""
    found = terms(text)
    return [t for t in found if t not in drop] or found


def fts_query(text: str, *, mode: str = "OR", drop: frozenset[str] = frozenset()) -> str | None:
    """A safe FTS5 MATCH expression for free text, or None when it has no terms
    (``drop``: terms left out, unless no other term is left).

    Every term is quoted, so FTS5 syntax in the input (quotes, ``*``, ``:``, ``-``,
    ``NEAR``, parentheses) is matched as text and never raises.
    """
    parts = [_phrase(t) for t in query_terms(text, drop)]
    if not parts:
        return None
    return f" {mode} ".join(parts)


_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "you",
        "your",
    ]
)


# words that say what kind of question it is, not what it is about: left out of the
# keyword lane's query (NLTK's English stop-word list, lower case, apostrophes dropped
# the way ``terms`` splits them)
QUERY_STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn
    hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn""".split()  # noqa: SIM905
)


@lru_cache(maxsize=65536)
def token_set(text: str) -> frozenset[str]:
    """ASCII words plus CJK unigrams and bigrams: for Jaccard similarity (MMR, dedup)."""
    tokens: set[str] = set()
    for term in terms(text):
        if _CJK_RE.match(term):
            tokens.update(term)
            tokens.update(term[i : i + 2] for i in range(len(term) - 1))
        elif term not in _STOP:
            tokens.add(term)
    return frozenset(tokens)


@lru_cache(maxsize=65536)
def scripts(text: str) -> frozenset[str]:
    """The scripts the words of ``text`` are written in: ``cjk`` and/or ``latin`` (any
    other letters count as latin: what matters is whether two texts can share a word)."""
    out = set()
    for term in terms(text):
        out.add("cjk" if _CJK_RE.match(term) else "latin")
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    union = len(a | b)
    return len(a & b) / union if union else 0.0


__all__ = [
    "CJK_CLASS",
    "QUERY_STOP_WORDS",
    "count_tokens",
    "fts_query",
    "is_cjk",
    "jaccard",
    "query_terms",
    "scripts",
    "segment",
    "terms",
    "token_set",
]
