"""Relative dates resolved against the source day (R-DREAM-Q1), so that "last week"
in a promoted entry still means something a month later.

The time words are read by the date libraries (:mod:`reverie.timewords`). An
expression is resolved when it means one thing only against its day: its days move with
the day it was said, whichever way a reader would lean ("yesterday", "last Friday", "two
years ago", 上周五; not "June 2022", not "in March", which could be either March).
Each keeps its words and gains the days it meant in brackets: "yesterday" ->
"yesterday (2023-05-07)", "last week" -> "last week (week of 2023-05-01)", "上周" ->
"上周（2023-05-01 那周）". A vague one (:data:`reverie.timewords.words.VAGUE`: "a few
weeks ago", "lately", 前阵子, 过几天) names no days; it gains the day it was said
against, on the side it lies: "a few weeks ago (before 2023-05-08)", "lately (as of
2023-05-08)", "过几天（2023-05-08 后）"; an English one ahead of the day only in a clause
that surely tells of a time ahead (:func:`reverie.timewords.tense.tells_ahead`). An
expression already followed by a bracket is left alone, so resolving twice changes
nothing.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from ..timewords import POSSESSIVE, Said, find, relative
from ..timewords.tense import lean, tells_ahead
from ..timewords.words import clock_start, named, vague
from ..tokens import is_cjk

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip
_BRACKET = re.compile(r"[()（）]")
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


_SIDES = {
    "en": {"before": "before {}", "now": "as of {}", "after": "after {}"},
    "zh": {"before": "{} 前", "now": "截至 {}", "after": "{} 后"},
}


def _anchors(text: str, day: date, exact: list[Said]) -> list[tuple[int, int, str, bool]]:
    """Where each vague time word of ``text`` ends, and the day it was said against
    written on its side, for those no exact reading overlaps."""
    out = []
    for lang in ("en", "zh") if any(is_cjk(ch) for ch in text) else ("en",):
        for words, at, side in vague(text, lang):
            end = at + len(words)
            if any(s.at < end and at < s.end for s in exact):
                continue
            if lang == "en" and side == "after" and not tells_ahead(text, at):
                continue
            out.append((at, end, _SIDES[lang][side].format(day.isoformat()), lang == "zh"))
    return out


def resolve(text: str, day: date | None) -> str:
    """``text`` with each relative date followed by the days it meant on ``day``."""
    if day is None or not text.strip():
        return text
    seasons = [Said(w, at, a, b, "span") for w, at, a, b in named(text, day, "en", seasons=True)]
    exact = find(text, day) + seasons
    notes: list[tuple[int, int, str, bool]] = []
    for said in exact:
        if _BRACKET.search(said.words):
            continue  # words read across a bracket written before: resolved already
        # a season is named from the day said by construction; a day name that is not
        # relative either way may be placed by its clause's tense
        if said not in seasons and not relative(said, day):
            leaned = lean(said, text, day)
            if leaned is None:
                continue
            said = leaned
        zh = any(is_cjk(ch) for ch in said.words)
        # the days go after the words that fix them, before a clock time (明天早上|七点)
        end = said.at + clock_start(said.words, "zh" if zh else "en")
        if end == said.at:
            continue  # a clock time alone names no day (三点 after a bracket)
        notes.append((said.at, end, _days(said, zh), zh))
    out: list[str] = []
    pos = 0
    for at, end, note, zh in sorted(
        notes + _anchors(text, day, exact), key=lambda n: (n[0], -n[1])
    ):
        end = m.end() if (m := POSSESSIVE.match(text, end)) else end  # after an 's
        if at < pos or _ALREADY.match(text, end):
            continue
        out += [text[pos:end], f"（{note}）" if zh else f" ({note})"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


__all__ = ["resolve"]
