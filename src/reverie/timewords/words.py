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
- :data:`CLOCK`: a clock time at the end of a day's words (明天早上七点): the day's
  bracket goes before it (:func:`clock_start`).
- :data:`NOT_AHEAD`: the words that keep a clause from telling of a time ahead.
- :data:`VAGUE`: time words relative to the day said that name no days ("a few weeks
  ago", "lately", "in the coming months", 前阵子, 最近, 过几天): which side of the day
  said each lies on (:func:`vague`), so that a promoted line can say which day it was
  said against.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from functools import cache

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
# the words that keep a clause from telling of a time ahead ("I haven't seen her in a
# few years"): a :data:`VAGUE` word "after" the day said is read only in a clause free
# of them and of past forms
NOT_AHEAD = {"en": r"\b(?:have|has|had|not|never|no)\b|['’](?:ve|d)\b|n['’]t\b"}
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


_ZH_NUM = "[零〇一二两三四五六七八九十\\d]{1,3}"
CLOCK = {
    "zh": rf"(?:{_ZH_NUM}[点點时](?:{_ZH_NUM}分?|半|一刻|三刻)?钟?|\d{{1,2}}[:：]\d\d)$",
}


def clock_start(words: str, lang: str) -> int:
    """Where a :data:`CLOCK` time ending ``words`` starts (``len(words)`` when none; 0
    when ``words`` are a clock time only, no day)."""
    m = re.search(CLOCK[lang], words) if lang in CLOCK else None
    if m is None:
        return len(words)
    return m.start() if words[: m.start()].strip(" ,") else 0


# vague time words, by the side of the day said they lie on: "before" it, "now" (up to
# it) or "after" it; built from a language's amounts, units and directions
_FEW = r"(?:a few|few|several|a couple(?: of)?|couple of|some|many|a number of|a handful of|quite a few|a good few)"
_UNIT = r"(?:days?|nights?|weeks?|months?|years?|decades?)"
_LONG = r"(?:days|weeks|months|years|decades|ages|a while|a bit|a little while|some time|a long time|long|not long)"
_ZH_FEW = "(?:几|好几|十几|些|好些)"
_ZH_UNIT = "(?:天|日|周|个星期|个礼拜|个月|年)"
VAGUE: dict[str, list[tuple[str, str]]] = {
    "en": [
        (rf"{_FEW} {_UNIT} (?:ago|back|earlier)|{_LONG} (?:ago|back)", "before"),
        (r"the other (?:day|night|week)|(?:just |only )?recently", "before"),
        (rf"(?:for|over|in|during) the (?:past|last) (?:{_FEW} )?{_UNIT}", "now"),
        (rf"for (?:{_FEW} {_UNIT}|{_LONG}) now|lately|of late|these days", "now"),
        (rf"in {_FEW} {_UNIT}(?:['’] time)?|{_FEW} {_UNIT} from now", "after"),
        (rf"(?:over|in|during|within) the (?:coming|next) (?:{_FEW} )?{_UNIT}", "after"),
        (r"(?<!as )(?:soon|shortly)(?! after| before)|before long|one of these days|some ?day",
         "after"),
    ],
    "zh": [  # (never the end of a longer word: 提前几天, 附近日料, 修改天数)
        (rf"{_ZH_FEW}{_ZH_UNIT}(?:以前|之前|前)|(?<!提)前(?:几|些)(?:天|日子|年)", "before"),
        ("(?<!提)(?:前一?阵子|前一阵|前一段(?:时间|日子)?|前段(?:时间|日子))", "before"),
        ("不久(?:以)?前|前不久|早(?:前|些年|些时候)", "before"),
        ("最近(?!的)|(?<![附接靠邻将])近(?:来|期|日|年来|几年来?)", "now"),
        ("这(?:几|两|些)(?:天|日子|年)|这一阵子?|这阵子|这段(?:时间|日子)", "now"),
        (rf"{_ZH_FEW}{_ZH_UNIT}(?:以后|之后|后)|过(?:几|两|些)(?:天|日子)", "after"),
        ("过(?:一)?阵子|过一?段(?:时间|日子)|(?<![修更])改天|不久(?:以)?后", "after"),
    ],
}  # fmt: skip


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


@cache
def _vague(lang: str) -> list[tuple[re.Pattern[str], str]]:
    """:data:`VAGUE`'s patterns, compiled on first use (dreaming reads them, a search
    never does)."""
    return [
        (re.compile(rf"\b(?:{p})\b" if lang == "en" else p, re.IGNORECASE), side)
        for p, side in VAGUE.get(lang, [])
    ]


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


def vague(text: str, lang: str) -> list[tuple[str, int, str]]:
    """The :data:`VAGUE` words of ``text`` in ``lang``: words, offset, side of the day
    said ("before", "now" or "after"), in text order, none overlapping one before it."""
    found = sorted(
        ((m.start(), -len(m.group(0)), m.group(0), side)
         for pattern, side in _vague(lang) for m in pattern.finditer(text)),
    )  # fmt: skip
    out: list[tuple[str, int, str]] = []
    for at, _, words, side in found:
        if not out or at >= out[-1][1] + len(out[-1][0]):
            out.append((words, at, side))
    return out


__all__ = [
    "BESIDE",
    "CLOCK",
    "EARLIER",
    "FIRST",
    "FUTURE",
    "NAMED",
    "NOT_AHEAD",
    "SEASONS",
    "SHIFTS",
    "SPOKEN",
    "VAGUE",
    "clock_start",
    "named",
    "spoken_end",
    "vague",
    "written",
]
