"""Which way a day name leans in its sentence: "on Thursday" and "the 3rd" name a day
before the day said or after it, and only the tense of their clause tells which ("we
sold out on Saturday", "I'll renew it on Monday"). English only: a Chinese clause's
tense is not read here (周四 keeps jionlp's reading, this week's).

A clause is in the past when one of its verbs is in a past form by ``lemminflect``'s
inflection tables ("was", "sold", "rang"; not a form that is also its own present,
"read", "put") and none of :data:`reverie.timewords.words.FUTURE`'s words puts it in
the future; any other clause leans to the future ("I'm on call through Sunday", "the
review is booked for Wednesday" reads as past: a participle is a past form).
A vague time word ahead of the day said ("in a few weeks", "soon") is read as ahead
only in a clause that surely tells of a time ahead (:func:`tells_ahead`).
``lemminflect`` is imported on first use: dreaming reads this module, a search never
does.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, timedelta
from functools import lru_cache

from . import Said, find
from .words import BESIDE, FUTURE, NOT_AHEAD

_CLAUSE = re.compile(r"[.;!?\n]+")
_WORD = re.compile(r"[A-Za-z]+")
_FUTURE = re.compile(FUTURE["en"], re.IGNORECASE)
_NOT_AHEAD = re.compile(NOT_AHEAD["en"], re.IGNORECASE)
_BEFORE, _AFTER = (re.compile(p, re.IGNORECASE) for p in BESIDE["en"])


@lru_cache(maxsize=4096)
def _past_form(word: str) -> bool:
    from lemminflect import getAllInflections, getAllLemmas

    for lemma in getAllLemmas(word, upos="VERB").get("VERB", ()):
        if lemma != word and word in getAllInflections(lemma, upos="VERB").get("VBD", ()):
            return True
    return False


def _clause(text: str, at: int) -> str:
    """The clause of ``text`` holding offset ``at`` (between sentence marks)."""
    start = max((m.end() for m in _CLAUSE.finditer(text, 0, at)), default=0)
    stop = _CLAUSE.search(text, at)
    return text[start : stop.start() if stop else len(text)]


def leans_past(text: str, at: int) -> bool:
    """Whether the clause of ``text`` at ``at`` tells of the past (module doc)."""
    said = _clause(text, at)
    if _FUTURE.search(said):
        return False
    return any(_past_form(w.lower()) for w in _WORD.findall(said))


def tells_ahead(text: str, at: int) -> bool:
    """Whether the clause of ``text`` at ``at`` surely tells of a time ahead: a future
    word in it, or no past form and none of
    :data:`reverie.timewords.words.NOT_AHEAD`'s words ("we move in a few weeks"; not
    "I haven't seen her in a few years")."""
    said = _clause(text, at)
    if _FUTURE.search(said):
        return True
    return not _NOT_AHEAD.search(said) and not leans_past(text, at)


def lean(said: Said, text: str, base: date) -> Said | None:
    """``said`` (as :func:`reverie.timewords.find` read it, leaning to the past) read
    the way its clause's tense leans, when it is a day name that only the tense places:
    leaning to the future it is a later day within a month ("Thursday", "the 3rd"), and
    its days move with the day said ("June 3" does not), and no word beside it makes it
    part of a longer phrase (:data:`reverie.timewords.words.BESIDE`). None for
    anything else."""
    if (
        said.period != "day"
        or not said.words.isascii()
        or _BEFORE.search(text, 0, said.at)
        or _AFTER.match(text, said.end)
    ):
        return None  # not a day name, or one inside a longer phrase ("the Friday after")
    ahead = [s for s in find(said.words, base, prefer="future") if s.words == said.words]
    if not ahead or not 0 < (ahead[0].first - said.first).days <= 31:
        return None
    # read on other days (two: a day name is not read on its own day)
    moved = [s for back in (400, 403) for s in find(said.words, base - timedelta(days=back))]
    if not any(s.words == said.words and s.first != said.first for s in moved):
        return None
    if leans_past(text, said.at):
        return said
    return replace(ahead[0], at=said.at)


__all__ = ["lean", "leans_past", "tells_ahead"]
