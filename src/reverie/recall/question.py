"""A question, read once (issue 38 point 6): one typed value every ranking stage of a
search reads, in the order :mod:`reverie.recall.search` lists them.

- ``scripts``: the writing systems it is in (Latin, Han, ...): a lane that shares none
  with a line could not have matched it;
- ``names``: the people it names (a speaker's lines are lifted);
- ``subject``: its content terms and names, less the words naming the time asked (two
  hits that both hold one may be versions of one statement);
- ``ask``: the time it asks about, its time words read by the date libraries
  (:mod:`reverie.timewords`) against the day it is asked;
- ``content``: its content words (stop words left out); ``bare``: the question less
  the words naming the time asked;
- ``about_user``: a sentence (it has words beside its content words) that names no
  one: about the user, its form carries the meaning, not only its words.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from ..timewords import find, settled
from ..tokens import QUERY_STOP_WORDS, query_terms, scripts, terms
from .asof import TimeAsk, time_ask
from .hops import names
from .subject import Subject, subject_terms


@dataclass(frozen=True)
class Question:
    """What a search is asked (module doc)."""

    text: str
    today: date
    scripts: frozenset[str]
    names: frozenset[str]
    subject: Subject
    ask: TimeAsk
    content: str
    bare: str
    about_user: bool


def read(text: str, today: date) -> Question:
    """``text`` read as a question asked on ``today``."""
    said = [replace(s, settled=settled(s, today)) for s in find(text, today)]
    ask = time_ask(text, today, said)
    # the subject is not the words that name the time asked; other time words are
    # part of what is asked ("the Tuesday standup")
    bare = text.replace(ask.words, " ") if ask.words else text
    kept = query_terms(text, QUERY_STOP_WORDS)
    content, named = " ".join(kept) or text, names(bare)
    about_user = not named and len(kept) < len(terms(text))
    return Question(
        text, today, scripts(text), named, subject_terms(bare), ask, content, bare.strip(),
        about_user,
    )  # fmt: skip


__all__ = ["Question", "read"]
