"""Relative dates resolved against the source day (R-DREAM-Q1), so that "last week"
in a promoted entry still means something a month later. Pure.

Each relative expression keeps its words and gains the date it meant in brackets:
"yesterday" -> "yesterday (2023-05-07)", "last week" -> "last week (week of
2023-05-01)", "上周" -> "上周（2023-05-01 那周）". An expression already followed by
a bracket is left alone, so resolving twice changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

_NUM = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _shift_month(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, 1)


def _month(d: date) -> str:
    return f"{_MONTHS[d.month - 1]} {d.year}"


def _week(d: date) -> str:
    return f"week of {_monday(d).isoformat()}"


def _weekend(d: date) -> str:
    sat = _monday(d) + timedelta(days=5)
    return f"weekend of {sat.isoformat()}"


def _ago(unit: str, n: int, day: date) -> str:
    if unit.startswith("day"):
        return (day - timedelta(days=n)).isoformat()
    if unit.startswith("week"):
        return _week(day - timedelta(weeks=n))
    if unit.startswith("month"):
        return _month(_shift_month(day, -n))
    return str(day.year - n)


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]
_EN: list[_Rule] = [
    (
        re.compile(r"\bthe day before yesterday\b", re.I),
        lambda m, d: (d - timedelta(2)).isoformat(),
    ),
    (re.compile(r"\byesterday\b", re.I), lambda m, d: (d - timedelta(1)).isoformat()),
    (re.compile(r"\btoday\b|\btonight\b|\bthis morning\b", re.I), lambda m, d: d.isoformat()),
    (re.compile(r"\btomorrow\b", re.I), lambda m, d: (d + timedelta(1)).isoformat()),
    (re.compile(r"\blast weekend\b", re.I), lambda m, d: _weekend(d - timedelta(7))),
    (re.compile(r"\bthis weekend\b", re.I), lambda m, d: _weekend(d)),
    (re.compile(r"\bnext weekend\b", re.I), lambda m, d: _weekend(d + timedelta(7))),
    (re.compile(r"\blast week\b", re.I), lambda m, d: _week(d - timedelta(7))),
    (re.compile(r"\bthis week\b", re.I), lambda m, d: _week(d)),
    (re.compile(r"\bnext week\b", re.I), lambda m, d: _week(d + timedelta(7))),
    (re.compile(r"\blast month\b", re.I), lambda m, d: _month(_shift_month(d, -1))),
    (re.compile(r"\bthis month\b", re.I), lambda m, d: _month(d)),
    (re.compile(r"\bnext month\b", re.I), lambda m, d: _month(_shift_month(d, 1))),
    (re.compile(r"\blast year\b", re.I), lambda m, d: str(d.year - 1)),
    (re.compile(r"\bthis year\b", re.I), lambda m, d: str(d.year)),
    (re.compile(r"\bnext year\b", re.I), lambda m, d: str(d.year + 1)),
    (
        re.compile(
            r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)"
            r"\s+(days?|weeks?|months?|years?)\s+ago\b",
            re.I,
        ),
        lambda m, d: _ago(
            m.group(2).lower(),
            int(m.group(1)) if m.group(1).isdigit() else _NUM[m.group(1).lower()],
            d,
        ),
    ),
]
_ZH: list[_Rule] = [
    (re.compile(r"前天"), lambda m, d: (d - timedelta(2)).isoformat()),
    (re.compile(r"昨天|昨晚"), lambda m, d: (d - timedelta(1)).isoformat()),
    (re.compile(r"今天|今晚"), lambda m, d: d.isoformat()),
    (re.compile(r"明天"), lambda m, d: (d + timedelta(1)).isoformat()),
    (
        re.compile(r"上(?:个)?(?:周|星期|礼拜)"),
        lambda m, d: _monday(d - timedelta(7)).isoformat() + " 那周",
    ),
    (
        re.compile(r"下(?:个)?(?:周|星期|礼拜)"),
        lambda m, d: _monday(d + timedelta(7)).isoformat() + " 那周",
    ),
    (re.compile(r"上个月"), lambda m, d: f"{_shift_month(d, -1):%Y-%m}"),
    (re.compile(r"下个月"), lambda m, d: f"{_shift_month(d, 1):%Y-%m}"),
    (re.compile(r"去年"), lambda m, d: f"{d.year - 1}年"),
    (re.compile(r"明年"), lambda m, d: f"{d.year + 1}年"),
]
_ALREADY = re.compile(r"\s*[(（]")


def resolve(text: str, day: date | None) -> str:
    """``text`` with each relative date followed by the date it meant on ``day``."""
    if day is None:
        return text
    out: list[str] = []
    spans: list[tuple[int, int, str]] = []
    for rules, cjk in ((_EN, False), (_ZH, True)):
        for pattern, when in rules:
            for m in pattern.finditer(text):
                if any(a < m.end() and m.start() < b for a, b, _ in spans):
                    continue
                if _ALREADY.match(text, m.end()):
                    continue
                note = f"（{when(m, day)}）" if cjk else f" ({when(m, day)})"
                spans.append((m.start(), m.end(), note))
    pos = 0
    for _a, b, note in sorted(spans):
        out += [text[pos:b], note]
        pos = b
    out.append(text[pos:])
    return "".join(out)


__all__ = ["resolve"]
