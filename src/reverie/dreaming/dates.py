"""Relative dates resolved against the source day (R-DREAM-Q1), so that "last week"
in a promoted entry still means something a month later.

The time words are read by the date libraries (:mod:`reverie.timewords`). An
expression is resolved when it means one thing only against its day: its days move with
the day it was said, whichever way a reader would lean ("yesterday", "last Friday", "two
years ago", 上周五; not "June 2022", not "in March", which could be either March).
Each keeps its words and gains the days it meant in brackets: "yesterday" ->
"yesterday (2023-05-07)", "last week" -> "last week (week of 2023-05-01)", "上周" ->
"上周（2023-05-01 那周）". An expression already followed by a bracket is left alone,
so resolving twice changes nothing.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from ..timewords import POSSESSIVE, Said, find, relative
from ..timewords.tense import lean
from ..timewords.words import named
from ..tokens import is_cjk

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip
_ALREADY = re.compile(r"\s*[(（]|\w{1,4}（\d{4}")  # resolved, or inside words resolved


def _days(said: Said, zh: bool) -> str:
    """The days ``said`` covers, written as a person would."""
    a, b = said.first, said.last
    nxt = date(a.year + (a.month == 12), a.month % 12 + 1, 1)
    if a == b:
        return a.isoformat()
    if a.weekday() == 0 and b == a + timedelta(days=6):
        return f"{a.isoformat()} 那周" if zh else f"week of {a.isoformat()}"
    if a.day == 1 and b == nxt - timedelta(days=1):
        return f"{a:%Y-%m}" if zh else f"{_MONTHS[a.month - 1]} {a.year}"
    if (a.month, a.day, b.month, b.day) == (1, 1, 12, 31) and a.year == b.year:
        return f"{a.year}年" if zh else str(a.year)
    return f"{a.isoformat()} 至 {b.isoformat()}" if zh else f"{a.isoformat()} to {b.isoformat()}"


def resolve(text: str, day: date | None) -> str:
    """``text`` with each relative date followed by the days it meant on ``day``."""
    if day is None or not text.strip():
        return text
    out: list[str] = []
    pos = 0
    seasons = [Said(w, at, a, b, "span") for w, at, a, b in named(text, day, "en", seasons=True)]
    for said in sorted(find(text, day) + seasons, key=lambda s: (s.at, -len(s.words))):
        end = m.end() if (m := POSSESSIVE.match(text, said.end)) else said.end  # after an 's
        if said.at < pos or _ALREADY.match(text, end):
            continue
        # a season is named from the day said by construction; a day name that is not
        # relative either way may be placed by its clause's tense
        if said not in seasons and not relative(said, day):
            leaned = lean(said, text, day)
            if leaned is None:
                continue
            said = leaned
        zh = any(is_cjk(ch) for ch in said.words)
        note = f"（{_days(said, zh)}）" if zh else f" ({_days(said, zh)})"
        out += [text[pos:end], note]
        pos = end
    out.append(text[pos:])
    return "".join(out)


__all__ = ["resolve"]
