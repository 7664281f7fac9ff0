"""Specific phrases of a note (pure): trigger phrases and REM themes.

A trigger fires on every message that contains it, and a REM theme is read by a
person: a single common word (``runs``, ``staging``, ``post``) does neither job. A
phrase here is two or three adjacent content words (no stop word, no generic verb,
3+ letters or a token with digits/hyphens), and it is *specific* when few documents
of the corpus (the candidate pool and MEMORY.md's entries) contain it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..recall.evidence import concept_tags
from ..stopwords import TRIGGER_PHRASE
from ..tokens import is_cjk

_TOKEN = re.compile(r"[^\W_]+(?:[-.'][^\W_]+)*")
STOP_WORDS = TRIGGER_PHRASE  # (reverie.stopwords)
MAX_SHARE = 0.2  # a phrase in more than this share of the corpus is generic


def _content(token: str) -> bool:
    if token in STOP_WORDS or re.fullmatch(r"[\d.'-]+", token):
        return False
    return len(token) >= 3 or any(c.isdigit() for c in token)


# a phrase never runs over sentence or clause punctuation, brackets or quotes
_CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"“”‘’«»…—–/|。，；：！？、（）]+|\s[-']\s|\s-|-\s")
_SPEAKER = re.compile(r"^\s*[^\W\d_][\w'.-]*(?:\s[^\W\d_][\w'.-]*){0,2}\s*[:：]\s")


def phrases(text: str, max_words: int = 3) -> list[str]:
    """Two- to ``max_words``-word runs of adjacent content words within one clause, in
    text order; a leading speaker prefix ("Deborah: ...") is not part of any phrase."""
    out: list[str] = []
    for clause in _CLAUSE.split(_SPEAKER.sub(" ", text, count=1)):
        run: list[str] = []
        for token in [*_TOKEN.findall(clause.lower()), ""]:
            if token and _content(token) and not is_cjk(token[0]):
                run.append(token)
                continue
            for n in range(2, max_words + 1):
                out += [" ".join(run[i : i + n]) for i in range(len(run) - n + 1)]
            run = []
    return list(dict.fromkeys(out))


def _has(doc: str, phrase: str) -> bool:
    return f" {phrase} " in f" {' '.join(_TOKEN.findall(doc.lower()))} "


def doc_frequency(phrase: str, corpus: Iterable[str]) -> int:
    return sum(1 for doc in corpus if _has(doc, phrase))


def specific(phrase: str, corpus: Sequence[str]) -> bool:
    """At most ``MAX_SHARE`` of the corpus (and never more than one other document
    in a small one) contains ``phrase``."""
    df = doc_frequency(phrase, corpus)
    return df <= max(1, int(MAX_SHARE * len(corpus)))


def _words(text: str) -> list[str]:
    """The content words of ``text`` (the speaker prefix left out), in order, once."""
    body = _SPEAKER.sub(" ", text, count=1)
    return list(dict.fromkeys(t for t in _TOKEN.findall(body.lower()) if _content(t)))


def subject_phrases(text: str, corpus: Sequence[str], limit: int = 3) -> tuple[str, ...]:
    """For an entry that names its subject ("Caroline: I adopted a puppy ..."): the
    subject and one specific word of what is said of them ("caroline puppy"), the
    rarest first. A message fires it only when it names the subject *and* the topic
    (both words, anywhere), so a message about someone else never does."""
    m = _SPEAKER.match(text)
    if not m:
        return ()
    who = " ".join(_TOKEN.findall(m.group(0).lower()))
    names = set(who.split())
    words = [w for w in _words(text) if w not in names and len(w) >= 4]
    docs = [*corpus, text] if text not in corpus else list(corpus)
    ranked = sorted((w for w in words if specific(w, docs)), key=lambda w: doc_frequency(w, docs))
    return tuple(f"{who} {w}" for w in ranked[:limit] if len(who) + len(w) < 64)


def trigger_phrases(text: str, corpus: Sequence[str], limit: int = 3) -> tuple[str, ...]:
    """Up to ``limit`` specific multi-word trigger phrases of ``text`` (rarest first;
    a phrase adds at least one word the chosen ones lack). CJK text: its concept
    bigrams, when specific. None when nothing in it is specific."""
    docs = [*corpus, text] if text not in corpus else list(corpus)
    if not any(is_cjk(c) for c in text) and (named := subject_phrases(text, docs, limit)):
        return named
    if any(is_cjk(c) for c in text):
        found = [t for t in concept_tags(text) if is_cjk(t[0]) and len(t) >= 2]
    else:
        found = phrases(text)
    ranked = sorted((p for p in found if specific(p, docs)), key=lambda p: doc_frequency(p, docs))
    chosen: list[str] = []
    for p in ranked:
        if len(chosen) >= limit:
            break
        covered = {w for c in chosen for w in c.split()}
        if not set(p.split()) <= covered and len(p) <= 64:
            chosen.append(p)
    return tuple(chosen)


__all__ = [
    "MAX_SHARE",
    "STOP_WORDS",
    "doc_frequency",
    "phrases",
    "specific",
    "trigger_phrases",
]
