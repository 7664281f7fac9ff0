"""Time words in a text, read by date libraries: ``dateparser`` for English, ``jionlp``
for Chinese with ``dateparser``'s Chinese reading where jionlp reads nothing (it misses
bare months, 三月份, and 上个月). Both are imported on first use.

Each expression found becomes a :class:`Said`: its words, where they are, and the days
it covers (a day, a week, a month, a year, or the span jionlp gives). What a library
reads only as a clock time or a duration ("in 45 minutes", "a second") is no day and is
left out, and so is a lone lowercase word read as more than a day ("I may go": English
writes a month's name with a capital).

The few time words no library reads (the words that ask for an earlier or the first
value, weekends, "the night before last") are kept per language in one place,
:mod:`reverie.timewords.words`, and read before the libraries. English seasons, which
dateparser does not read either, were kept once and earned nothing on any set
(``bench/README.md``): "last summer" is left to the question's other words.
"""

from __future__ import annotations

import contextlib
import io
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from ..stopwords import QUERY
from ..tokens import is_cjk
from .words import EARLIER, FIRST, SHIFTS, named, spoken_end, written

Period = Literal["day", "week", "month", "year", "span"]
Prefer = Literal["past", "future"]

_MONTH_NUMBER = re.compile(r"(\d{1,2})\s*月")
POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")  # "last month's": read as "last month"
_CLAUSE_MARKS = re.compile(r"[;:!?()\"“”]|,(?!\s*\d)")
# an amount or a model number read as a date: "$12", "a $5 coupon", "Canon EOS 80D"
_NOT_DATE = re.compile(r"[$€£¥%]|\b\d+(?!st\b|nd\b|rd\b|th\b)[A-Za-z]+\b")


@dataclass(frozen=True)
class Said:
    """One time expression: ``words`` at ``at`` in the text, covering ``first`` to
    ``last`` (inclusive)."""

    words: str
    at: int
    first: date
    last: date
    period: Period
    settled: bool = False  # the same days however read (:func:`settled`), when asked

    @property
    def end(self) -> int:
        return self.at + len(self.words)


def _period_days(day: date, period: str) -> tuple[date, date] | None:
    if period == "day":
        return day, day
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=6)
    if period == "month":
        nxt = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
        return day.replace(day=1), nxt - timedelta(days=1)
    if period == "year":
        return date(day.year, 1, 1), date(day.year, 12, 31)
    return None  # a clock time or a duration: no day


@lru_cache(maxsize=4)
def _parser(lang: str, base: datetime, prefer: Prefer) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(languages=[lang], settings=_settings(base, prefer))


def _settings(base: datetime, prefer: Prefer) -> dict[str, Any]:
    return {"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer,
            "RETURN_AS_TIMEZONE_AWARE": False}  # fmt: skip


def _trimmed(said: str, value: datetime, lang: str, when: datetime, prefer: Prefer) -> str | None:
    """``said`` without the stop words it ends in ("last Friday and"), or None when one
    of them changes its reading: "four years in" (high school) is no date."""
    words = said.split()
    while len(words) > 1 and words[-1].strip(",.;:!?").lower() in QUERY:
        shorter = " ".join(words[:-1])
        if _parser(lang, when, prefer).get_date_data(shorter).date_obj != value:
            return None
        words.pop()
    return said[: said.index(words[-1]) + len(words[-1])] if words else None


def _one_way(said: str, value: datetime, period: str | None, lang: str, when: datetime) -> bool:
    """``said`` names a day, not a length of time: read leaning to the future it is the
    same day, or the same name one cycle on (March next year, Monday next week).
    "3 months", "two weeks" (a duration dateparser reads as "ago") lean both ways by
    twice their length."""
    ahead = _parser(lang, when, "future").get_date_data(said).date_obj
    if ahead is None or ahead.date() == value.date():
        return True
    gap = (ahead.date() - value.date()).days
    return (period == "month" and gap in (365, 366)) or (period == "day" and gap == 7)


def _zh_months(text: str) -> tuple[str, list[int]]:
    """``text`` with month numbers in Chinese numerals (dateparser reads 3月 as three
    months, 三月 as March), and for each of its characters the offset it came from."""
    out: list[str] = []
    origin: list[int] = []
    pos = 0
    for m in _MONTH_NUMBER.finditer(text):
        out.append(text[pos : m.start()])
        origin += range(pos, m.start())
        n = int(m.group(1))
        numeral = _ZH_DIGITS[n] if 1 <= n <= 12 else m.group(0)[:-1]
        out.append(numeral + "月")
        origin += [m.start()] * len(numeral) + [m.end() - 1]
        pos = m.end()
    out.append(text[pos:])
    origin += range(pos, len(text) + 1)
    return "".join(out), origin


_ZH_DIGITS = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]


def _dateparser(text: str, lang: str, base: date, prefer: Prefer) -> list[Said]:
    from dateparser.search import search_dates

    origin = list(range(len(text) + 1))
    # dateparser's search loses a date beside a comma ("Last week, I built"): the
    # punctuation between clauses read as spaces, one for one (a date's own comma kept)
    read = POSSESSIVE.sub("  ", _CLAUSE_MARKS.sub(" ", text))
    if lang == "zh":
        read, origin = _zh_months(text)
    when = datetime(base.year, base.month, base.day)
    try:
        found = search_dates(read, languages=[lang], settings=_settings(when, prefer)) or []
    except Exception:  # a parser bug on odd input reads as "no time here", never a crash
        return []
    out: list[Said] = []
    pos = 0
    for said, value in found:
        # the search gives words single-spaced: a comma read as a space leaves two
        hit = re.compile(r"\s+".join(map(re.escape, said.split()))).search(read, pos)
        if hit is None:
            continue
        at, said = hit.start(), hit.group(0)
        pos = hit.end()
        said = _trimmed(said, value, lang, when, prefer) or ""
        if len(said.strip()) < (2 if lang == "zh" else 3):
            continue
        pos = at + len(said)
        words = text[origin[at] : origin[pos - 1] + 1]
        if lang == "zh" and at and read[at - 1] in SHIFTS["zh"]:
            out += _jionlp_point(text[origin[at - 1] : origin[pos - 1] + 1], origin[at - 1], base)
            continue
        period = _parser(lang, when, prefer).get_date_data(said).period
        if value.time() != datetime.min.time():
            if not _day_part(said, value, lang, when, prefer):
                continue  # a clock time or a duration ("a second", "in 45 minutes")
            period, value = "day", datetime(value.year, value.month, value.day)
        if abs(value.year - base.year) > 60:
            continue
        bare = lang == "en" and " " not in words.strip() and words.strip().islower()
        if bare and period != "day":
            continue  # "may", "march": a verb, not a month (English capitalises months)
        if _NOT_DATE.search(said) or not _one_way(said, value, period, lang, when):
            continue
        days = _period_days(value.date(), period or "")
        if days is not None:
            out.append(Said(words, origin[at], days[0], days[1], period))
    return out


def _day_part(said: str, value: datetime, lang: str, when: datetime, prefer: Prefer) -> bool:
    """``said`` names a part of a day ("last night", "tomorrow morning", "this
    afternoon"): read on the same day at noon it is the same moment, where a duration
    moves with the clock ("in 45 minutes", "two hours ago"); a clock time of the day
    itself ("at 9am") is no part of a day."""
    noon = _parser(lang, when.replace(hour=12), prefer).get_date_data(said).date_obj
    if noon != value:
        return False
    return value.date() != when.date() or not any(ch.isdigit() for ch in said)


def _jionlp_point(words: str, at: int, base: date) -> list[Said]:
    """``words`` (a shifted day's name, 下礼拜一) as jionlp reads them alone: one day or
    span, else nothing."""
    stamp = wall_stamp(datetime(base.year, base.month, base.day))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            got = jionlp().parse_time(words, time_base=stamp)
        first, last = (datetime.fromisoformat(str(t)).date() for t in got["time"][:2])
    except Exception:  # not a point in time, or a parser bug: no reading
        return []
    return [Said(words, at, first, last, "span")] if got.get("type") == "time_point" else []


@lru_cache(maxsize=1)
def jionlp() -> Any:
    """jionlp, imported on first use (here and by :mod:`reverie.intents.compile`): it
    prints a banner on import, kept off stdout, which carries JSON and the MCP protocol."""
    import logging

    with contextlib.redirect_stdout(io.StringIO()):
        import jionlp as module
        from jionlp.gadget import time_parser

    # Its time parser logs each odd input's traceback through the root logger, which
    # would give the host process a stderr handler (logging.basicConfig) and print
    # ERROR lines on Chinese questions; those go to a logger of its own, quiet unless
    # the host attaches a handler.
    quiet = logging.getLogger("jionlp.time_parser")
    quiet.propagate = False
    quiet.addHandler(logging.NullHandler())
    time_parser.logging = quiet
    return module


def wall_stamp(when: datetime) -> float:
    """A timestamp whose local-time reading (jionlp reads it so) is ``when``'s wall time."""
    import time as _time

    return _time.mktime(when.replace(tzinfo=None).timetuple())


def _jionlp(text: str, base: date) -> list[Said]:
    stamp = wall_stamp(datetime(base.year, base.month, base.day))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            found = jionlp().ner.extract_time(
                written(text, "zh"), time_base=stamp, with_parsing=True
            )
    except Exception:  # a parser bug on odd input reads as "no time here", never a crash
        return []
    out: list[Said] = []
    for ent in found:
        detail = ent.get("detail") or {}
        span = detail.get("time")
        if detail.get("type") not in ("time_point", "time_span") or not isinstance(span, list):
            continue  # a duration (三月 read as three months) or a recurrence
        try:
            first, last = (datetime.fromisoformat(str(t)).date() for t in span[:2])
        except (ValueError, TypeError):
            continue
        at, end = int(ent["offset"][0]), spoken_end(text, int(ent["offset"][1]))
        out.append(Said(text[at:end], at, first, last, "span"))
    return out


_WEEK_END = re.compile(r"(?:周|礼拜|星期)$")
_WEEKDAY_DIGITS = frozenset("一二三四五六日天")


# What dateparser reads a day from in English (its English data: month and weekday
# names and their short forms, the units, the relative words, the number words, the
# parts of the day; ``tests/test_question.py`` holds this to that data): a text with
# none of these, no digit, and no "a"/"an" (dateparser's "1") beside a symbol names no
# day, and a search is spared importing dateparser (its 210 languages' locale maps).
# A word that starts with one of these (three letters or more) counts too: "Mondays".
_DAY_TEXT = (
    "afternoon am apr april aug august centuries century d date day days dec decade decades "
    "december eight eighteen eighty eleven evening feb february fifteen fifty five fortnight "
    "fortnights forty four fourteen fr fri friday h hour hours hr hrs jan january jul july "
    "jun june later m mar march may midnight min mins minute minutes mo mon monday mons "
    "month months morning night nine nineteen ninety noon nov november now oct october one "
    "pm s sa sat saturday sec second seconds secs sep sept september seven seventeen "
    "seventy six sixteen sixty su sun sunday ten th thirteen thirty three thu thursday till "
    "today tomorrow tonight tu tue tues tuesday twelve twenty two w we wed wednesday week "
    "weeks wk y year years yesterday yr"
)
DAY_WORDS = frozenset(_DAY_TEXT.split())
_DAY_PREFIXES = tuple(w for w in DAY_WORDS if len(w) >= 3)
_LETTERS = re.compile(r"[^\W\d_]+")
_PLAIN = frozenset(' \t\n.,?!:;()"-')  # beside "a", no symbol dateparser reads as a date


def might_name_a_day(text: str) -> bool:
    """Whether ``text`` may hold a time word :func:`find` reads (False: surely none)."""
    if not text.isascii():  # accents off, as dateparser reads them: "Mónday" is Monday
        if any(is_cjk(ch) for ch in text):
            return True
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    if any(ch.isnumeric() for ch in text):
        return True
    words = _LETTERS.findall(text.lower())
    if any(w in DAY_WORDS or w.startswith(_DAY_PREFIXES) for w in words):
        return True
    return bool({"a", "an"} & set(words)) and any(
        not ch.isalpha() and ch not in _PLAIN for ch in text
    )


def find(text: str, base: date, *, prefer: Prefer = "past") -> list[Said]:
    """The time expressions of ``text``, read against the day ``base``, in text order;
    an expression overlapping one found before it is left out."""
    if not might_name_a_day(text):  # (an empty text included)
        return []
    try:
        found = _named(text, base) + _dateparser(text, "en", base, prefer)
        if any(is_cjk(ch) for ch in text):
            found += _jionlp(text, base) + _dateparser(text, "zh", base, prefer)
    except Exception:  # a library that breaks reads as no time words: a search goes on
        return []
    kept: list[Said] = []
    for read in found:  # in the order of trust: the named words, English, jionlp, zh
        said: Said | None = read
        if _WEEK_END.search(read.words) and text[read.end : read.end + 1] in _WEEKDAY_DIGITS:
            # a reading that stops inside a day's name (下周|四以后): the whole name, or none
            said = next(iter(_jionlp_point(text[read.at : read.end + 1], read.at, base)), None)
        if said and not any(s.at < said.end and said.at < s.end for s in kept):
            kept.append(said)
    return sorted(kept, key=lambda s: s.at)


def settled(said: Said, base: date) -> bool:
    """``said`` names the same days whether a reader leans to the past or the future
    ("yesterday", "last month", "June 2022"; not "in March", not "on Tuesdays")."""
    ahead = [s for s in _again(said.words, base, "future") if s.words == said.words]
    return bool(ahead) and (ahead[0].first, ahead[0].last) == (said.first, said.last)


def relative(said: Said, base: date) -> bool:
    """``said`` means one thing only against its day: it is :func:`settled`, and its
    days move with the base day ("yesterday", "last week", "two years ago", "last
    Friday"; not "June 2022", not "in March")."""
    other = base - timedelta(days=400)
    moved = [s for s in _again(said.words, other, "past") if s.words == said.words]
    return bool(moved) and moved[0].first != said.first and settled(said, base)


def _named(text: str, base: date) -> list[Said]:
    """The time words no library reads (:mod:`reverie.timewords.words`)."""
    lang = "zh" if any(is_cjk(ch) for ch in text) else "en"
    found = named(text, base, "en") + (named(text, base, lang) if lang == "zh" else [])
    return [Said(w, at, first, last, "span") for w, at, first, last in found]


def _again(words: str, base: date, prefer: Prefer) -> list[Said]:
    try:
        if any(is_cjk(ch) for ch in words):
            return (
                _named(words, base) + _jionlp(words, base) + _dateparser(words, "zh", base, prefer)
            )
        return _named(words, base) + _dateparser(words, "en", base, prefer)
    except Exception:  # (as in find)
        return []


def cron_in_words(expr: str) -> str:
    """A cron schedule as a person says it ("0 3 * * *" -> "At 03:00"), by
    ``cron-descriptor``; the expression itself when it cannot say it."""
    try:
        from cron_descriptor import ExpressionDescriptor, Options

        options = Options()
        options.use_24hour_time_format = True
        return str(ExpressionDescriptor(expr, options).get_description())
    except Exception:  # an expression it does not read is shown as it is
        return expr


__all__ = [
    "DAY_WORDS",
    "EARLIER",
    "FIRST",
    "POSSESSIVE",
    "Said",
    "cron_in_words",
    "find",
    "jionlp",
    "might_name_a_day",
    "relative",
    "settled",
    "wall_stamp",
]
