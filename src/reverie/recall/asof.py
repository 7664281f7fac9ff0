"""What time a question asks about (pure): now, the value before the current one, the
first value, or a window of days ("in March", "in the spring", "三月份", "去年").

Only words of the question decide; the hits' days are compared against the window by
:mod:`reverie.recall.versions`. A question with no time words asks about now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

When = Literal["now", "before", "first", "window"]

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]  # fmt: skip
# northern seasons, by their months
SEASONS = {
    "spring": (3, 4, 5),
    "summer": (6, 7, 8),
    "autumn": (9, 10, 11),
    "fall": (9, 10, 11),
    "winter": (12, 1, 2),
}
ZH_SEASONS = {"春": (3, 4, 5), "夏": (6, 7, 8), "秋": (9, 10, 11), "冬": (12, 1, 2)}
ZH_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
          "十": 10, "十一": 11, "十二": 12}  # fmt: skip

# "before" as the question's last word ("Where did she live before?"), not "before the
# race" (an event, a question of its own)
_BEFORE = re.compile(
    r"\b(?:before|previously|formerly|used to|earlier|in the past|prior)\s*[?.!]*\s*$"
    r"|\b(?:previously|formerly|used to|use to|in the past|the previous|the old)\b",
    re.I,
)
_FIRST = re.compile(
    r"\b(?:originally|at first|initially|in the beginning|at the start|the original|"
    r"first (?:one|value|time))\b",
    re.I,
)
_ZH_BEFORE = re.compile("以前|之前|过去|曾经|上一个|旧的|原先")
_ZH_FIRST = re.compile("原来|最初|一开始|起初|当初|最早|本来")
_MONTH = re.compile(r"\b(?:in|during|back in)\s+(" + "|".join(MONTHS) + r")\b", re.I)
_SEASON = re.compile(
    r"\b(?:in|during)\s+(?:the\s+)?(?:last\s+)?(" + "|".join(SEASONS) + r")\b|"
    r"\blast\s+(" + "|".join(SEASONS) + r")\b",
    re.I,
)
_LAST_YEAR = re.compile(r"\blast year\b", re.I)
_ZH_MONTH = re.compile("(十二|十一|十|一|二|三|四|五|六|七|八|九|[1-9]|1[0-2])月")
_ZH_SEASON = re.compile("(春|夏|秋|冬)(?:天|季)")


@dataclass(frozen=True)
class TimeAsk:
    """What the question asks about, and the words that said so."""

    when: When = "now"
    start: date | None = None  # the window (inclusive), for "window"
    end: date | None = None
    words: str = ""

    @property
    def past(self) -> bool:
        return self.when != "now"

    @property
    def order_name(self) -> str:
        """How a group of versions is ordered for this question (``--explain``)."""
        return {
            "now": "newest first",
            "before": f"the one before the newest first ({self.words!r})",
            "first": f"oldest first ({self.words!r})",
            "window": f"as of {self.words!r} ({self.start} to {self.end})",
        }[self.when]


# a question in the past tense asks about an event ("When did Caroline go to the
# support group?"), which no later line supersedes; a state is asked in the present
# ("Where does Priya live?", "Who is her dentist?"). So does the present perfect, an
# accumulation of events ("What books has Tim read?", "Where has she been?", "-ed" or
# an irregular participle; not those that say what holds, "has got", "has kept", "has
# put", "has left", "has become", "has known"). Chinese marks a past event by 过 after
# the verb ("去过哪里", "见过谁").
# A question asking what might be or would be ("Would Caroline pursue writing?", "What
# might she like?") asks for an inference, not for the value that holds now: neither
# is a question supersession answers.
_EVENT_EN = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|(?:has|have)\b[^?？]*\b(?:\w+ed|"
    r"been|done|seen|read|made|gone|met|eaten|written|taken|given|won|bought|taught|heard|"
    r"gotten|tried|found|built|sold|lost|told|said|grown|run|begun|drawn|driven|flown|"
    r"ridden|sung|worn|chosen|spoken|broken|shown|sent|spent|brought|caught|felt|held|led|"
    r"paid|come)\b|"
    r"would|could|might|should|will|likely|ever)\b",
    re.I,
)
_EVENT_ZH = re.compile("过")


def asks_event(question: str) -> bool:
    """The question asks about something that happened (past tense) or what would or
    might be (an inference), not the state that holds now."""
    return bool(_EVENT_EN.search(question) or _EVENT_ZH.search(question))


def _month_window(month: int, today: date) -> tuple[date, date]:
    """The last such month that began before today (this month counts as the past
    only once it is over: "in March" asked in March means last year's)."""
    year = today.year if month < today.month else today.year - 1
    start = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return start, nxt - timedelta(days=1)


def _months_window(months: tuple[int, ...], today: date) -> tuple[date, date]:
    """The last whole run of ``months`` (a season) before today."""
    last = _month_window(months[-1], today)[1]
    if last >= today:
        last = _month_window(months[-1], today.replace(day=1) - timedelta(days=1))[1]
    first_month = months[0]
    year = last.year if first_month <= last.month else last.year - 1
    return date(year, first_month, 1), last


def time_ask(question: str, today: date) -> TimeAsk:
    """The time a question asks about (``now`` when it names none)."""
    m = _MONTH.search(question)
    if m:
        start, end = _month_window(MONTHS.index(m.group(1).lower()) + 1, today)
        return TimeAsk("window", start, end, m.group(0))
    m = _SEASON.search(question)
    if m:
        name = (m.group(1) or m.group(2)).lower()
        start, end = _months_window(SEASONS[name], today)
        return TimeAsk("window", start, end, m.group(0))
    m = _ZH_MONTH.search(question)
    if m:
        raw = m.group(1)
        month = ZH_NUM.get(raw) or int(raw)
        start, end = _month_window(month, today)
        return TimeAsk("window", start, end, m.group(0))
    m = _ZH_SEASON.search(question)
    if m:
        start, end = _months_window(ZH_SEASONS[m.group(1)], today)
        return TimeAsk("window", start, end, m.group(0))
    if _LAST_YEAR.search(question) or "去年" in question:
        return TimeAsk(
            "window", date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), "last year"
        )
    for pattern, when in ((_FIRST, "first"), (_ZH_FIRST, "first"), (_BEFORE, "before"),
                          (_ZH_BEFORE, "before")):  # fmt: skip
        m = pattern.search(question)
        if m:
            return TimeAsk(when, words=m.group(0).strip(" ?.!"))  # type: ignore[arg-type]
    return TimeAsk()


__all__ = ["TimeAsk", "When", "asks_event", "time_ask"]
