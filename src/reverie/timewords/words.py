"""The time words no date library reads, per language: the one place for them.

- :data:`EARLIER` and :data:`FIRST`: a question for the value before the current one,
  or for the first one ("before", 上次; "originally", 最开始).
- :data:`SHIFTS`: a word in front of a day's name that moves it, which dateparser's
  Chinese reading leaves out (it reads 下礼拜一 as the past Monday).
- :data:`SPOKEN`: the spoken forms of day words a library misreads (明儿 as today).
- :data:`FUTURE`: the words that put a clause in the future whatever its verbs'
  tense ("will", "going to"): with none, a clause is in the past when a verb of it is
  in a past form (:mod:`reverie.timewords.tense`).
- :data:`SEASONS`: "last summer", "next spring" (meteorological seasons of the
  northern hemisphere), read only where a promoted line is dated.
- :data:`NAMED`: days named relative to the day said that dateparser misses or misreads
  ("this weekend", "the night before last"; it reads "the day before yesterday" as
  yesterday) and jionlp reads as one day (上周末 as the Sunday): each a pattern and the
  days it names from the Monday of the week said (:func:`named`). Each earned its place
  on ``bench/dates.py``'s held-out set (``bench/README.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

EARLIER = {  # a question for the value before the current one
    "en": r"\b(?:before|previously|formerly|used to|earlier|in the past|prior)\s*[?.!]*\s*$"
    r"|\b(?:previously|formerly|used to|use to|in the past|the previous|the old)\b"
    r"|\bbefore the (?:latest|last|recent)\b",
    "zh": "以前|之前|过去|曾经|上一个|上一次|上次|旧的|原先",
}
FIRST = {  # a question for the first value
    "en": r"\b(?:originally|at first|initially|in the beginning|at the start|the original|"
    r"first (?:one|value|time))\b|\bwhen (?:I|we|you|he|she|they) first\b",
    "zh": "原来|最初|一开始|最开始|刚开始|起初|当初|最早|本来",
}
SHIFTS = {"zh": "上下这本"}
# the words beside a day name that make it part of a longer phrase no library reads
# ("the Friday after", "a week on Thursday", "Monday week", "every Monday"): left alone
BESIDE = {
    "en": (
        r"\b(?:the|a|an|every|each|weeks?|fortnights?|days?)\s+(?:on\s+)?$",  # before
        r"\s*(?:after|before|weeks?|fortnights?)\b",  # the words after
    )
}
FUTURE = {"en": r"\b(?:will|shall|won['’]t|going to|gonna)\b|['’]ll\b"}
# the spoken northern forms of the day words (明儿 for 明天), which jionlp reads as today:
# read as the written forms, character for character
# (昨儿个: the 个 after it belongs to the word)
SPOKEN = {"zh": {"今儿": "今天", "明儿": "明天", "昨儿": "昨天", "前儿": "前天", "后儿": "后天"}}
_SPOKEN_END = re.compile(r"(?<=儿)个")

Days = Callable[[date], tuple[date, date] | None]  # the day said -> first, last


def _days(first: int, last: int | None = None) -> Days:
    """Days counted from the day said."""
    return lambda d: (
        d + timedelta(days=first),
        d + timedelta(days=first if last is None else last),
    )


def _weekend(weeks: int, *, said_on_weekend: bool = False) -> Days:
    """Saturday and Sunday of the week ``weeks`` from the week said (None when the words
    read both ways on a weekday: "next weekend" said on a Tuesday)."""

    def days(d: date) -> tuple[date, date] | None:
        if said_on_weekend and d.weekday() < 5:
            return None
        sat = d - timedelta(days=d.weekday()) + timedelta(days=5 + 7 * weeks)
        return sat, sat + timedelta(days=1)

    return days


def _week(weeks: int) -> Days:
    def days(d: date) -> tuple[date, date]:
        monday = d - timedelta(days=d.weekday()) + timedelta(days=7 * weeks)
        return monday, monday + timedelta(days=6)

    return days


# meteorological seasons of the northern hemisphere: the month each starts in (a winter
# is named by the year of its December)
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season_days(start: int, year: int) -> tuple[date, date]:
    end = date(year + (start + 3 > 12), (start + 2) % 12 + 1, 1)
    return date(year, start, 1), end - timedelta(days=1)


def _season(name: str, step: int) -> Days:
    """The season ``name``: the last one over (-1), the one of this year (0: the one
    running, else the one of the day's year), or the next one not begun (+1)."""
    start = _SEASONS[name]

    def days(d: date) -> tuple[date, date]:
        spans = [_season_days(start, y) for y in range(d.year - 2, d.year + 2)]
        if step < 0:
            return [s for s in spans if s[1] < d][-1]
        if step > 0:
            return next(s for s in spans if s[0] > d)
        running = [s for s in spans if s[0] <= d <= s[1]]
        return running[0] if running else _season_days(start, d.year)

    return days


_STEPS = {"last": -1, "this": 0, "next": 1}
# "last summer", "next spring": read where a promoted line is dated (not in a question,
# where a season's window earned nothing: bench/README.md)
SEASONS = {
    "en": [
        (rf"{which} {name}", _season(name, step))
        for which, step in _STEPS.items()
        for name in _SEASONS
    ]
}
NAMED: dict[str, list[tuple[str, Days]]] = {
    "en": [
        (r"the (?:day|night) before yesterday|the night before last", _days(-2)),
        (r"the day after tomorrow", _days(2)),
        (r"the weekend before last", _weekend(-2)),
        (r"(?:last|this past) weekend|the weekend just gone", _weekend(-1)),
        (r"this (?:coming )?weekend", _weekend(0)),
        (r"next weekend", _weekend(1, said_on_weekend=True)),
        (r"the week before last", _week(-2)),
        (r"the week after next", _week(2)),
    ],
    "zh": [
        (r"上上(?:个)?(?:周末|礼拜天)", _weekend(-2)),
        (r"上(?:个)?周末", _weekend(-1)),
        (r"(?:这|本)(?:个)?周末", _weekend(0)),
        (r"下(?:个)?周末", _weekend(1)),
    ],
}


def _compiled(
    table: dict[str, list[tuple[str, Days]]],
) -> dict[str, list[tuple[re.Pattern[str], Days]]]:
    return {
        lang: [
            (re.compile(rf"\b(?:{p})\b" if lang == "en" else p, re.IGNORECASE), f) for p, f in rows
        ]
        for lang, rows in table.items()
    }


_PATTERNS, _SEASON_PATTERNS = _compiled(NAMED), _compiled(SEASONS)


def written(text: str, lang: str) -> str:
    """``text`` with :data:`SPOKEN`'s forms as written, each the same length."""
    for spoken, form in SPOKEN.get(lang, {}).items():
        text = text.replace(spoken, form)
    return text


def spoken_end(text: str, end: int) -> int:
    """``end`` moved past what belongs to a spoken form ending there (昨儿|个)."""
    return end + 1 if _SPOKEN_END.match(text, end) else end


def named(
    text: str, base: date, lang: str, *, seasons: bool = False
) -> list[tuple[str, int, date, date]]:
    """The :data:`NAMED` phrases of ``text`` in ``lang`` (with ``seasons``, those of
    :data:`SEASONS` instead): words, offset, first, last."""
    out = []
    for pattern, days in (_SEASON_PATTERNS if seasons else _PATTERNS).get(lang, []):
        for m in pattern.finditer(text):
            span = days(base)
            if span is not None:
                out.append((m.group(0), m.start(), span[0], span[1]))
    return out


__all__ = [
    "BESIDE",
    "EARLIER",
    "FIRST",
    "FUTURE",
    "NAMED",
    "SEASONS",
    "SHIFTS",
    "SPOKEN",
    "named",
    "spoken_end",
    "written",
]
