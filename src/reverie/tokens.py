"""Token counting and keyword segmentation (pure).

Latin text counts about 4 characters per token; every CJK or full-width character
counts as one token (SPEC section 8). For FTS5, CJK text is split into single
characters at index and query time, and multi-character terms become phrase queries,
so 1-, 2- and 4-character Chinese words are all found (``unicode61`` alone would
treat a whole run of Han characters as one token).

The keyword lane matches word stems: the indexed text and the query's terms both go
through :func:`keyword_tokens` (FTS5's own ``unicode61 remove_diacritics 2`` tokens, then
the Snowball English stemmer on ASCII words), so "camped", "camping" and "camps" meet.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from functools import cache, lru_cache
from typing import Any

from .stopwords import QUERY, SIMILARITY

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
# a "word": letters/digits that are not CJK
_WORD = rf"[^\W{_CJK_CLASS}_]+"
_FULLWIDTH = "[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]"
# FTS5's unicode61 tokens: a run of letters/digits (with combining marks) outside CJK,
# or one CJK letter/digit; for ASCII text (most of it) a faster translate + split
_TOKEN = rf"(?:[^\W_{_CJK_CLASS}]|[\u0300-\u036f])+|[^\W_]"
_ASCII_WORDS = str.maketrans({i: chr(i).lower() if chr(i).isalnum() else " " for i in range(128)})


# The patterns are compiled on first use, and ASCII text (no CJK, no diacritic, no
# full-width or surrogate character) never asks for them: compiling the Unicode classes
# costs a one-shot process (the per-prompt hook) several milliseconds.
@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(
        {
            "cjk": f"[{_CJK_CLASS}]",
            "cjk_run": f"[{_CJK_CLASS}]+",
            "term": f"{_WORD}|[{_CJK_CLASS}]+",
            "fullwidth": _FULLWIDTH,
            "token": _TOKEN,
            "latin_marked": "[\u00c0-\u024f\u1e00-\u1eff\u0300-\u036f]",
            "surrogate": "[\ud800-\udfff]",
        }[name]
    )


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` starts with a CJK (or full-width) character."""
    return not ch[:1].isascii() and bool(_pattern("cjk").match(ch))


def count_tokens(text: str) -> int:
    """Approximate tokens: 1 per CJK/full-width char, 1 per 4 other chars (spaces too)."""
    cjk = 0 if text.isascii() else len(_pattern("cjk").findall(text))
    other = len(text) - cjk
    return cjk + math.ceil(other / 4)


def segment(text: str) -> str:
    """Text for the FTS5 ``unicode61`` tokenizer: every CJK char stands alone."""
    if text.isascii():
        return text
    return _pattern("cjk_run").sub(lambda m: " " + " ".join(m.group(0)) + " ", text)


def _fold(token: str) -> str:
    """Diacritics off Latin letters (FTS5's remove_diacritics 2; other scripts keep them)."""
    if token.isascii() or not _pattern("latin_marked").search(token):
        return token
    out = []
    for ch in token:
        if "\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff":
            base = unicodedata.normalize("NFD", ch)
            out.append("".join(c for c in base if not unicodedata.combining(c)) or ch)
        elif not ("\u0300" <= ch <= "\u036f"):
            out.append(ch)
    return "".join(out)


def fts_tokens(text: str) -> list[str]:
    """The tokens FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes of
    ``segment(text)``: lower-cased words, every CJK letter on its own, punctuation
    dropped, Latin diacritics removed."""
    if text.isascii():
        return text.translate(_ASCII_WORDS).split()
    return [_fold(t) for t in _pattern("token").findall(text.lower())]


_STEMMER: list[Any] = []
_STEM_LOCK = threading.Lock()  # a PyStemmer object is not thread-safe


@lru_cache(maxsize=1 << 17)
def stem(token: str) -> str:
    """The Snowball English stem of a lower-case ASCII word (Porter2, by PyStemmer);
    any other token (digits, CJK, other scripts, words under 3 letters) unchanged."""
    if len(token) < 3 or not (token.isascii() and token.isalpha()):
        return token
    with _STEM_LOCK:
        if not _STEMMER:
            import Stemmer  # PyStemmer: the Snowball stemmers in C

            _STEMMER.append(Stemmer.Stemmer("english"))
        return str(_STEMMER[0].stemWord(token))


def keyword_tokens(text: str) -> list[str]:
    """What the keyword lane matches of ``text``: its FTS5 tokens, stemmed."""
    return [stem(t) for t in fts_tokens(text)]


def keyword_body(text: str) -> str:
    """The text the keyword index (FTS5) stores for ``text``: its keyword tokens joined
    by spaces, which FTS5 tokenizes back into exactly those tokens."""
    return " ".join(keyword_tokens(text))


def terms(text: str) -> list[str]:
    """Query terms: Latin words (lower-cased) and CJK runs, in order, no duplicates."""
    if text.isascii():  # the same words: runs of [A-Za-z0-9], lower-cased
        return list(dict.fromkeys(text.translate(_ASCII_WORDS).split()))
    out: list[str] = []
    seen: set[str] = set()
    fullwidth = _pattern("fullwidth")
    for m in _pattern("term").finditer(text):
        term = m.group(0)
        if fullwidth.fullmatch(term):
            continue
        term = fullwidth.sub("", term).lower()
        if term and term not in seen:
            seen.add(term)
            out.append(term)
    return out


CJK_WORD_MAX = 4  # Chinese words are 1-4 characters; a longer run is a phrase of words


def keyword_phrases(text: str, drop: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """The phrases the keyword lane ORs for a query, each as its keyword tokens, no
    duplicates: a Latin word is one stemmed token; a CJK run of up to four characters
    (a word: 猫, 咖啡, 人工智能) is a phrase of its characters; a longer run is several
    words (Chinese writes a question without spaces: 我家的猫叫什么名字) and becomes its
    overlapping character pairs, so a line that shares a word of it matches (the whole
    run as one phrase would match only itself)."""
    out: list[tuple[str, ...]] = []
    for term in query_terms(text, drop):
        tokens = keyword_tokens(term)
        if len(tokens) > CJK_WORD_MAX and is_cjk(term):
            found = [tuple(tokens[i : i + 2]) for i in range(len(tokens) - 1)]
        else:
            found = [tuple(tokens)] if tokens else []
        out += [p for p in found if p not in out]
    return out


def query_terms(text: str, drop: frozenset[str] = frozenset()) -> list[str]:
    """:func:`terms` without those in ``drop`` (stop words), unless that leaves none."""
    found = terms(text)
    return [t for t in found if t not in drop] or found


def fts_query(text: str, *, mode: str = "OR", drop: frozenset[str] = frozenset()) -> str | None:
    """A safe FTS5 MATCH expression for free text, or None when it has no terms
    (``drop``: terms left out, unless no other term is left).

    Every term is quoted, so FTS5 syntax in the input (quotes, ``*``, ``:``, ``-``,
    ``NEAR``, parentheses) is matched as text and never raises. Terms are stemmed as
    the indexed text is (:func:`keyword_body`).
    """
    parts = ['"' + " ".join(p) + '"' for p in keyword_phrases(text, drop)]
    if not parts:
        return None
    return f" {mode} ".join(parts)


# the stop-word lists live in one module (:mod:`reverie.stopwords`)
_STOP = SIMILARITY
QUERY_STOP_WORDS = QUERY


@lru_cache(maxsize=65536)
def token_set(text: str) -> frozenset[str]:
    """ASCII words plus CJK unigrams and bigrams: for Jaccard similarity (MMR, dedup)."""
    tokens: set[str] = set()
    for term in terms(text):
        if is_cjk(term):
            tokens.update(term)
            tokens.update(term[i : i + 2] for i in range(len(term) - 1))
        elif term not in _STOP:
            tokens.add(term)
    return frozenset(tokens)


@lru_cache(maxsize=65536)
def stem_set(text: str) -> frozenset[str]:
    """:func:`token_set` with its words stemmed: which line of a hit matches a query best
    ("camped" meets "camping", as in the keyword lane)."""
    return frozenset(stem(t) for t in token_set(text))


@lru_cache(maxsize=65536)
def scripts(text: str) -> frozenset[str]:
    """The scripts the words of ``text`` are written in: ``cjk`` and/or ``latin`` (any
    other letters count as latin: what matters is whether two texts can share a word)."""
    out = set()
    for term in terms(text):
        out.add("cjk" if is_cjk(term) else "latin")
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    common = len(a & b)  # the union's size without building it
    union = len(a) + len(b) - common
    return common / union if union else 0.0


def mend_surrogates(text: str) -> str:
    """``text`` with every lone surrogate as U+FFFD: a JSON ``\\ud800`` escape decodes
    to one, and no UTF-8 file or reply can hold it."""
    return text if text.isascii() else _pattern("surrogate").sub("\ufffd", text)


__all__ = [
    "CJK_CLASS",
    "QUERY_STOP_WORDS",
    "count_tokens",
    "fts_query",
    "fts_tokens",
    "is_cjk",
    "jaccard",
    "keyword_body",
    "keyword_phrases",
    "keyword_tokens",
    "mend_surrogates",
    "query_terms",
    "scripts",
    "segment",
    "stem",
    "stem_set",
    "terms",
    "token_set",
]
