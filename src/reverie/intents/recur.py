"""Recurring phrasings -> cron, and the time of day they name (pure, deterministic).

Date parsers read *one* time ("Friday at 9"); none turns "every Monday at 9" or
"每周一早上九点" into a schedule. These rules do, for the common shapes:

- every day / daily / each morning, 每天 / 每日 / 天天 / 每晚 / 每早;
- every Monday (and Wednesday), Mondays, 每周一 / 每星期一 / 每个礼拜一 (和周三);
- every weekday / on weekdays / 工作日 / 周一到周五; weekends / 周末;
- every month on the 15th, monthly, 每月15号 / 每个月1日;
- every hour, every N minutes / hours, 每小时, 每隔N分钟 / 小时.

The time of day is read from the same text (``at 9``, ``9:30 pm``, ``noon``, ``早上九点``,
``下午3点半``, ``晚上8点15分``); without one, 09:00.
"""

from __future__ import annotations

import re

DEFAULT_HOUR = 9

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_CN_NUM = "零〇一二两三四五六七八九十"


def cn_int(text: str) -> int | None:
    """``九`` 9, ``十二`` 12, ``二十五`` 25, ``15`` 15; None when it is no number."""
    if text.isdigit():
        return int(text)
    if not text or any(c not in _CN_NUM for c in text):
        return None
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _CN_DIGITS.get(tens, 1) if tens else 1
        o = _CN_DIGITS.get(ones, 0) if ones else 0
        return t * 10 + o
    value = 0
    for c in text:
        value = value * 10 + _CN_DIGITS[c]
    return value


_N = rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})"
_EN_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_EN_DAY_RE = r"(sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat)(?:day|nesday|rsday|urday|s)?s?\b"
_CN_DAY = {"日": 0, "天": 0, "七": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_CN_WEEK = r"(?:周|星期|礼拜)"

# -- time of day -------------------------------------------------------------------
_CN_PERIOD = {
    "凌晨": "am",
    "早上": "am",
    "早晨": "am",
    "清晨": "am",
    "上午": "am",
    "早": "am",
    "中午": "noon",
    "下午": "pm",
    "午后": "pm",
    "傍晚": "pm",
    "晚上": "pm",
    "今晚": "pm",
    "明晚": "pm",
    "晚": "pm",
    "夜里": "pm",
}
_CN_TIME_RE = re.compile(
    r"(凌晨|早上|早晨|清晨|上午|中午|下午|午后|傍晚|晚上|今晚|明晚|夜里|早|晚)?"
    rf"\s*{_N}\s*(点|时|:|：)\s*(半|一刻|三刻|{_N}\s*分?)?"
)
_EN_TIME_RE = re.compile(
    r"\b(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)\b"  # 9am, 9:30 pm
    r"|\bat\s+(\d{1,2})(?::(\d{2}))?\b(?!\s*(?:%|percent|st|nd|rd|th))"  # at 9, at 9:30
    r"|\b(\d{1,2}):(\d{2})\b"  # 14:00
    r"|\b(noon|midday|midnight)\b",
    re.IGNORECASE,
)
_EN_PM_HINT = re.compile(r"\b(afternoon|evening|tonight|night|pm)\b", re.IGNORECASE)


def _adjust(hour: int, period: str | None) -> int:
    if period == "pm" and hour < 12:
        return hour + 12
    if period == "noon" and hour < 6:
        return hour + 12
    if period == "am" and hour == 12:
        return 0
    return hour


def time_of_day(text: str) -> tuple[int, int] | None:
    """The (hour, minute) the text names, or None."""
    m = next((c for c in _CN_TIME_RE.finditer(text) if c.group(1) or c.group(3) in "点时"), None)
    if m:
        hour = cn_int(m.group(2))
        minute = 0
        tail = m.group(4)
        if tail == "半":
            minute = 30
        elif tail == "一刻":
            minute = 15
        elif tail == "三刻":
            minute = 45
        elif tail:
            minute = cn_int(re.sub(r"\s*分$", "", tail).strip()) or 0
        if hour is not None and hour <= 24 and minute < 60:
            return _adjust(hour % 24, _CN_PERIOD.get(m.group(1) or "")), minute
    if re.search(r"中午", text):
        return 12, 0
    m = _EN_TIME_RE.search(text)
    if m:
        g = m.groups()
        if g[7]:
            return (0, 0) if g[7].lower() == "midnight" else (12, 0)
        period: str | None
        if g[0]:
            hour, minute = int(g[0]), int(g[1] or 0)
            period = "pm" if g[2].lower().startswith("p") else "am"
        elif g[3]:
            hour, minute = int(g[3]), int(g[4] or 0)
            period = "pm" if _EN_PM_HINT.search(text) else None
        else:
            hour, minute, period = int(g[5]), int(g[6]), None
        if hour <= 24 and minute < 60:
            return _adjust(hour % 24, period), minute
    return None


_PARTS = (
    (re.compile(r"\b(?:noon|midday|lunch(?:time)?)\b|中午", re.IGNORECASE), 12),
    (re.compile(r"\bafternoon\b|下午|午后", re.IGNORECASE), 15),
    (re.compile(r"\bevening\b|傍晚", re.IGNORECASE), 19),
    (re.compile(r"\b(?:tonight|night)\b|晚上|今晚|明晚|每晚|夜里", re.IGNORECASE), 20),
)


def default_time(text: str) -> tuple[int, int]:
    """The time a part of the day names ("Sunday evening" 19:00, 下午 15:00), else 09:00."""
    for pattern, hour in _PARTS:
        if pattern.search(text):
            return hour, 0
    return DEFAULT_HOUR, 0


# -- recurrence ----------------------------------------------------------------------
_EVERY_N = re.compile(
    rf"\bevery\s+(\d+)\s*(minutes?|mins?|hours?|hrs?)\b|每隔?\s*{_N}\s*(分钟|小时|个小时)",
    re.IGNORECASE,
)
_HOURLY = re.compile(r"\b(every\s+hour|hourly)\b|每(个)?小时", re.IGNORECASE)
_WEEKDAYS = re.compile(
    r"\b(every\s+week\s?day|week\s?days|every\s+working\s+day|monday\s+(to|through|-)\s+friday)\b"
    rf"|工作日|{_CN_WEEK}一(到|至|-|~)\s*{_CN_WEEK}?五",
    re.IGNORECASE,
)
_WEEKENDS = re.compile(r"\b(every\s+weekend|weekends)\b|每(个)?周末", re.IGNORECASE)
_MONTHLY = re.compile(
    r"\b(?:every\s+month|monthly|each\s+month)\b(?:\D{0,12}?(\d{1,2})(?:st|nd|rd|th)?\b)?"
    rf"|每(?:个)?月\s*{_N}?\s*(?:号|日)?",
    re.IGNORECASE,
)
_DAILY = re.compile(
    r"\b(every\s*day|daily|each\s+day|every\s+(morning|evening|night|afternoon))\b"
    r"|每天|每日|天天|每晚|每早|每个?早上|每个?晚上",
    re.IGNORECASE,
)
_EN_EVERY_DAYS = re.compile(
    rf"\b(?:every|each)\s+(?:other\s+)?{_EN_DAY_RE}|\b(?:sun|mon|tues|wednes|thurs|fri|satur)days\b",
    re.IGNORECASE,
)
_CN_EVERY_DAYS = re.compile(
    rf"每(?:个)?{_CN_WEEK}\s*([日天一二三四五六七](?:\s*(?:和|、|,|，|及|与)?\s*{_CN_WEEK}?\s*[日天一二三四五六七])*)"
)


def _en_days(spec: str) -> list[int]:
    days = []
    for m in re.finditer(_EN_DAY_RE, spec, re.IGNORECASE):
        d = _EN_DAYS.index(m.group(1).lower()[:3])
        if d not in days:
            days.append(d)
    return days


def _cron(minute: int, hour: int, dom: str = "*", dow: str = "*") -> str:
    return f"{minute} {hour} {dom} * {dow}"


def recurrence(text: str) -> str | None:
    """The cron expression a recurring phrasing names, or None when it names none."""
    m = _EVERY_N.search(text)
    if m:
        n = int(m.group(1)) if m.group(1) else cn_int(m.group(3) or "") or 0
        unit = (m.group(2) or m.group(4) or "").lower()
        if n > 0:
            if unit.startswith(("h", "小", "个")):
                return f"0 */{n} * * *" if n < 24 else None
            return f"*/{n} * * * *" if n < 60 else None
    if _HOURLY.search(text):
        return "0 * * * *"
    hour, minute = time_of_day(text) or default_time(text)
    if _WEEKDAYS.search(text):
        return _cron(minute, hour, dow="1-5")
    if _WEEKENDS.search(text):
        return _cron(minute, hour, dow="0,6")
    m = _CN_EVERY_DAYS.search(text)
    if m:
        days = sorted({_CN_DAY[c] for c in re.findall(r"[日天一二三四五六七]", m.group(1))})
        return _cron(minute, hour, dow=",".join(map(str, days)))
    if _EN_EVERY_DAYS.search(text):
        days = sorted(_en_days(text))
        if days:
            return _cron(minute, hour, dow=",".join(map(str, days)))
    m = _MONTHLY.search(text)
    if m:
        dom = m.group(1) or (cn_int(m.group(2)) if m.group(2) else None) or 1
        if 1 <= int(dom) <= 31:
            return _cron(minute, hour, dom=str(dom))
    if _DAILY.search(text):
        return _cron(minute, hour)
    return None


_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MAX_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_RE = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_EN_MD = re.compile(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_EN_DM = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}(?=\W|$)", re.I)
_CN_MD = re.compile(rf"([0-9{_CN_NUM}]{{1,3}})\s*月\s*([0-9{_CN_NUM}]{{1,3}})\s*[日号號]")


def impossible_day(text: str) -> str | None:
    """Why ``text`` names a day no calendar has ("February 31", "4月31日", "2月30日"),
    or None. February 29 passes (the year decides; the date parser checks it)."""
    found: list[tuple[int, int]] = []
    for m in _EN_MD.finditer(text):
        found.append((_month_index(m.group(1)), int(m.group(2))))
    for m in _EN_DM.finditer(text):
        found.append((_month_index(m.group(2)), int(m.group(1))))
    for m in _CN_MD.finditer(text):
        month, day = cn_int(m.group(1)), cn_int(m.group(2))
        if month is not None and day is not None:
            found.append((month, day))
    for month, day in found:
        if not 1 <= month <= 12:
            return f"there is no month {month}: {text!r} names no day"
        if not 1 <= day <= _MAX_DAYS[month - 1]:
            name = _MONTHS[month - 1].capitalize()
            return f"{name} has {_MAX_DAYS[month - 1]} days at most: {text!r} names no day"
    return None


def _month_index(word: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(word[:3].lower()))


__all__ = [
    "DEFAULT_HOUR",
    "cn_int",
    "default_time",
    "impossible_day",
    "recurrence",
    "time_of_day",
]
