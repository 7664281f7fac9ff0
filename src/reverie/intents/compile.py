"""Compile what the owner said into an intent: a time, a schedule, triggers or a wish.

Deterministic, relative to the injected clock, in the user's time zone. Routing, in
order (R-INTENT-1):

1. **event** phrasings ("when Alice mentions the release, ...", "当有人提到银行时...")
   -> one trigger of the terms named (a generic subject such as *I*, *anyone*, *有人*
   is no term);
2. **recurring** phrasings -> a cron expression (:mod:`reverie.intents.recur`);
3. **one-off** times -> a date parser: ``dateparser`` for English and most languages,
   ``jionlp`` for Chinese (dateparser reads neither 明天下午三点 nor 下周五). The parser
   gives the day; the time of day comes from the text (``recur.time_of_day``), 09:00
   when it names none; relative phrasings ("in 10 minutes", 半小时后) keep the
   parser's time;
4. anything else is a **wish**, kept with a review date.
"""

from __future__ import annotations

import contextlib
import io
import re
from datetime import UTC, datetime, time, timedelta, tzinfo

from croniter import CroniterBadDateError, croniter

from ..errors import ReverieError
from ..stopwords import TRIGGER
from ..timewords import jionlp, wall_stamp
from ..tokens import is_cjk, terms
from .model import MAX_TEXT_CHARS, Kind, Spec, parse_triggers
from .recur import DEFAULT_HOUR, default_time, impossible_day, recurrence, time_of_day

# -- event phrasings -----------------------------------------------------------------
_EN_VERBS = (
    r"mentions?|mentioned|says?|said|talks?\s+about|brings?\s+up|asks?\s+about|writes?\s+about"
    r"|speaks?\s+(?:of|about)|refers?\s+to|discuss(?:es)?"
)
_EN_EVENT = re.compile(
    rf"\b(?:when(?:ever)?|if|once|next\s+time|the\s+next\s+time|each\s+time|every\s+time)\s+"
    rf"(?:(?P<who>[^,;.]+?)\s+(?:{_EN_VERBS})\s+(?P<what>[^,;.]+?)"
    rf"|(?P<what2>[^,;.]+?)\s+(?:comes?\s+up|is\s+mentioned|gets?\s+mentioned))"
    r"\s*(?:[,;.]|\bthen\b|$|\s+(?=(?:please\s+)?(?:remind|ask|tell|send|show|ping|suggest|say"
    r"|bring|check|let|give|mention|warn|notify|share)\b))",
    re.IGNORECASE,
)
_CN_EVENT = re.compile(
    r"(?:当|如果|要是|一旦|下次|下回|每当|只要|若)?(?P<who>[^，,。；;！!？?]{0,20}?)"
    r"(?:提到|提起|说到|聊到|谈到|问到|讲到|说起|问起|聊起|谈起|讨论)"
    r"(?P<what>[^，,。；;！!？?]{1,30}?)(?:的时候|时候|时|就|，|,|。|；|$)"
)
_GENERIC = frozenset(
    [
        "i",
        "me",
        "we",
        "you",
        "he",
        "she",
        "they",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "everyone",
        "people",
        "the",
        "user",
        "user",
        "my",
        "boss",
        "it",
        "this",
        "that",
    ]
)
_CN_GENERIC = ("我", "你", "他", "她", "有人", "谁", "任何人", "大家", "用户", "别人", "对方")
_STOP = TRIGGER
_CN_TRIM = re.compile(r"^(?:了|过|到)|(?:的事情|的事|这件事|那件事|的话题|这个|那个|了)$")


def _terms_of(phrase: str, *, subject: bool = False) -> list[str]:
    phrase = phrase.strip()
    if subject:
        low = phrase.lower()
        if not low or low in _GENERIC or phrase in _CN_GENERIC:
            return []
    out: list[str] = []
    for t in terms(phrase):
        if is_cjk(t[0]):
            t = _CN_TRIM.sub("", _CN_TRIM.sub("", t))
            if t and t not in _CN_GENERIC:
                out.append(t)
        elif t not in _STOP and t not in _GENERIC and not t.isdigit():
            out.append(t)
    return out


def event_terms(text: str) -> tuple[str, ...] | None:
    """The trigger terms an event phrasing names, or None when it is none."""
    m = _EN_EVENT.search(text)
    if m:
        found = _terms_of(m.group("who") or "", subject=True) + _terms_of(
            m.group("what") or m.group("what2") or ""
        )
        return tuple(dict.fromkeys(found)) or None
    m = _CN_EVENT.search(text)
    if m:
        who = re.sub(r"^(?:当|如果|要是|一旦|下次|下回|每当|只要|若)", "", m.group("who"))
        found = _terms_of(who, subject=True) + _terms_of(m.group("what"))
        return tuple(dict.fromkeys(found)) or None
    return None


# -- one-off times -------------------------------------------------------------------
_RELATIVE = re.compile(
    r"\bin\s+(?:\d+|an?|one|two|three|half\s+an?)\s*(?:minutes?|mins?|hours?|hrs?|seconds?)\b"
    r"|\b\d+\s*(?:minutes?|hours?)\s+(?:from\s+now|later)\b"
    r"|(?:\d+|[零一二两三四五六七八九十半]+)\s*(?:个)?\s*(?:分钟|小时|钟头)\s*(?:后|以后|之后)",
    re.IGNORECASE,
)
_WEEKDAY = re.compile(
    r"\b(?:sun|mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?)(?:day)?\b|(?:周|星期|礼拜)[一二三四五六日天]",
    re.IGNORECASE,
)
_HAS_DAY = re.compile(
    r"\b(?:today|tomorrow|tonight|next|this|\d{4}-\d{2}-\d{2}|jan|feb|mar|apr|may|jun|jul|aug"
    r"|sep|oct|nov|dec|\d{1,2}(?:st|nd|rd|th))\b|今|明|后天|下周|下个?星期|本周|这周|月|号|日",
    re.IGNORECASE,
)
_WISH = re.compile(
    r"\b(?:some\s?day|one\s+day|eventually|at\s+some\s+point|some\s?time|in\s+the\s+future)\b"
    r"|有空|有时间的时候|总有一天|将来|有朝一日|哪天|改天|以后有机会",
    re.IGNORECASE,
)
_CN_SHORT = (("明早", "明天早上"), ("明晚", "明天晚上"), ("今早", "今天早上"), ("今晚", "今天晚上"))


def _cn_day(text: str, now: datetime) -> datetime | None:
    for short, full in _CN_SHORT:
        text = text.replace(short, full)
    base = wall_stamp(now)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            found = jionlp().ner.extract_time(text, time_base=base, with_parsing=True)
    except Exception:  # a parser bug on odd input reads as "no time here", never a crash
        return None
    for ent in found:
        detail = ent.get("detail") or {}
        if detail.get("type") == "time_point":
            return datetime.fromisoformat(detail["time"][0])
    return None


def _mask(text: str) -> str:
    """Long digit runs (account numbers, ids) are no dates; bare ``at 9`` reads as 9:00."""
    text = re.sub(r"\d{5,}|\b(?!19\d\d|20\d\d)\d{4}\b(?![-/:])", " ", text)
    return re.sub(r"\bat\s+(\d{1,2})\b(?![:.\d])(?!\s*[ap]\.?m)", r"at \1:00", text)


def _en_day(text: str, now: datetime) -> datetime | None:
    from dateparser.search import search_dates

    text = re.sub(r"\btonight\b", "today", text, flags=re.IGNORECASE)
    settings = {
        "RELATIVE_BASE": now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    try:
        found = search_dates(_mask(text), languages=["en"], settings=settings) or []
    except Exception:  # a parser bug on odd input reads as "no time here", never a crash
        return None
    for said, value in found:
        if len(said.strip()) >= 3 and abs(value.year - now.year) <= 5:
            return value
    return None


def one_off(text: str, now: datetime) -> datetime | None:
    """The one time ``text`` names (aware, in ``now``'s zone), or None. A day no
    calendar has ("February 31") is refused, never read as some other day."""
    problem = impossible_day(text)
    if problem is not None:
        raise ReverieError(f"{problem}; nothing armed")
    local = now.replace(microsecond=0)
    cjk = any(is_cjk(c) for c in text)
    day = (_cn_day(text, local) if cjk else None) or _en_day(text, local)
    if day is None:
        return None
    zone = now.tzinfo
    if _RELATIVE.search(text):
        return day.replace(tzinfo=zone)
    hm = time_of_day(text) or default_time(text)
    at = datetime.combine(day.date(), time(*hm)).replace(tzinfo=zone)
    if at <= now:
        if _WEEKDAY.search(text) and not re.search(r"\blast\b|上周|上个?星期", text):
            at += timedelta(days=7)
        elif not _HAS_DAY.search(text):
            at += timedelta(days=1)
    return at


# a value written as an ISO date: read as one or refused, never handed to the word parser
_ISO_LIKE = re.compile(r"^[+-]?\d{4,}-\d{1,2}-\d{1,2}(?:[ T].*)?$")


def _iso(value: str, now: datetime) -> datetime | None:
    """``value`` as an ISO date-time (local when naive); None when it is no ISO date;
    a date no calendar has (2027-02-29, year 10000) is an error."""
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        if _ISO_LIKE.match(value):
            raise ReverieError(f"{value!r} is no date a calendar has; nothing armed") from None
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=now.tzinfo)


def parse_when(value: str, now: datetime) -> datetime:
    """``--at``: an ISO date-time (local when naive) or words ("friday 9:00", "明天下午三点");
    the service refuses a time already past."""
    value = value.strip()
    at = _iso(value, now)
    if at is None:
        at = one_off(value, now)
        if at is None:
            raise ReverieError(f"cannot read a time in {value!r}")
    return at


def parse_day(value: str, now: datetime) -> datetime:
    """``--review-by``: a date (ISO or words), at 09:00 local; a day before today is
    refused."""
    value = value.strip()
    at = _iso(value, now)
    d = at.date() if at is not None else parse_when(value, now).date()
    if d < now.date():
        raise ReverieError(f"{value!r} has passed already; nothing armed")
    return datetime.combine(d, time(DEFAULT_HOUR)).replace(tzinfo=now.tzinfo)


def parse_cron(value: str) -> str:
    """``--every``: a cron expression, or a recurring phrasing ("monday 9:00", "每天早上八点")."""
    expr = " ".join(value.split())
    if croniter.is_valid(expr) and len(expr.split()) == 5:
        try:  # "0 0 30 2 *" is valid syntax for a day that never comes
            croniter(expr, datetime(2000, 1, 1)).get_next(datetime)
        except (CroniterBadDateError, ValueError):
            raise ReverieError(
                f"--every {value!r} never fires (no such day in any month); nothing armed"
            ) from None
        return expr
    cron = recurrence(expr) or recurrence("every " + expr)
    if cron is None:
        raise ReverieError(f"not a cron expression or a recurring time: {value!r}")
    return cron


def _clean(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise ReverieError("an intent needs a text saying what to do")
    if len(text) > MAX_TEXT_CHARS:
        raise ReverieError(f"an intent's text is at most {MAX_TEXT_CHARS} characters")
    return text


def compile_text(
    text: str,
    now: datetime,
    *,
    at: str | None = None,
    every: str | None = None,
    on: str | None = None,
    review_by: str | None = None,
    wish_days: int = 30,
) -> Spec:
    """Route ``text`` (``now``: aware, in the user's zone). A structured option, when
    given, decides the kind; otherwise the text is parsed (see the module docstring)."""
    text = _clean(text)
    options = (("at", at), ("every", every), ("on", on), ("review_by", review_by))
    given = [k for k, v in options if v is not None]
    if len(given) > 1:
        raise ReverieError(f"give one of --at, --every, --on, --review-by (got {', '.join(given)})")
    if at is not None:
        return Spec(Kind.TIME, text, at=parse_when(at, now))
    if every is not None:
        return Spec(Kind.TIME, text, cron=parse_cron(every))
    if on is not None:
        return Spec(Kind.EVENT, text, triggers=parse_triggers(on))
    if review_by is not None:
        return Spec(Kind.WISH, text, review_by=parse_day(review_by, now))
    found = event_terms(text)
    if found:
        return Spec(Kind.EVENT, text, triggers=(found,))
    cron = recurrence(text)
    if cron:
        return Spec(Kind.TIME, text, cron=cron)
    when = None if _WISH.search(text) and not _RELATIVE.search(text) else one_off(text, now)
    if when is not None:
        return Spec(Kind.TIME, text, at=when)
    review = datetime.combine(now.date() + timedelta(days=wish_days), time(DEFAULT_HOUR))
    return Spec(Kind.WISH, text, review_by=review.replace(tzinfo=now.tzinfo))


def next_slot(cron: str, after: datetime, zone: tzinfo) -> datetime:
    """The first slot of ``cron`` strictly after ``after``, read in wall-clock time of
    ``zone`` (09:00 stays 09:00 across a daylight-saving change)."""
    wall = after.astimezone(zone).replace(tzinfo=None)
    it = croniter(cron, wall - timedelta(hours=3))  # a DST shift moves wall time <= 2 h
    for _ in range(10_000):
        try:
            slot = it.get_next(datetime).replace(tzinfo=zone, fold=0)
        except CroniterBadDateError:
            break
        if slot.astimezone(UTC) > after.astimezone(UTC):
            return slot
    raise ReverieError(f"no slot of {cron!r} after {after.isoformat()}")


__all__ = [
    "Spec",
    "compile_text",
    "event_terms",
    "next_slot",
    "one_off",
    "parse_cron",
    "parse_day",
    "parse_when",
]
