"""What time a question asks about (pure): now, the value before the current one, the
first value, or a window of days ("in March", "last month", "三月份", "去年").

The question's time words are read by the date libraries (:mod:`reverie.timewords`),
once, when the question is read (:mod:`reverie.recall.question`); this module only
turns what they read into a :class:`TimeAsk`. The hits' days are compared against it
by :mod:`reverie.recall.versions`. A question with no time words asks about now.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

from ..timewords import EARLIER, FIRST
from ..tokens import is_cjk

if TYPE_CHECKING:
    from ..timewords import Said

When = Literal["now", "before", "first", "window"]

_EARLIER = [re.compile(p, re.I) for p in EARLIER.values()]
_FIRST = [re.compile(p, re.I) for p in FIRST.values()]


@dataclass(frozen=True)
class TimeAsk:
    """What the question asks about, and the words that said so."""

    when: When = "now"
    start: date | None = None  # the window (inclusive), for "window"
    end: date | None = None
    words: str = ""

    @property
    def order_name(self) -> str:
        """How a group of versions is ordered for this question (``--explain``)."""
        return {
            "now": "newest first",
            "before": f"the one before the newest first ({self.words!r})",
            "first": f"oldest first ({self.words!r})",
            "window": f"as of {self.words!r} ({self.start} to {self.end})",
        }[self.when]


# the past tense ("When did Caroline go to the support group?"), the present perfect,
# an accumulation of events ("What books has Tim read?"; not "has got", "has kept"),
# and an inference ("Would Caroline pursue writing?") are not the present tense: their
# time words name the time asked. Chinese marks a past event by 过 after the verb.
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
# the present tense, which asks about a state that holds now ("Where does Mia swim on
# Tuesdays?", "What time do I wake up on Saturdays?")
_STATE_EN = re.compile(r"\b(?:is|are|am|does|do|isn't|aren't|doesn't|don't)\b", re.I)


def asks_event(question: str) -> bool:
    """The question asks about something that happened (past tense) or what would or
    might be (an inference), not a state that holds now."""
    return bool(_EVENT_EN.search(question) or _EVENT_ZH.search(question))


def time_ask(question: str, today: date, said: Sequence[Said] = ()) -> TimeAsk:
    """The time a question asks about. A window its time words name, over before
    ``today``, is asked about unless the question is in the present tense and the
    words name days only as a reader leans ("Where does Mia swim on Tuesdays?": the
    weekday is part of what is asked); words that name the same days however read
    ("last month", "in 2022") always name the time asked, and Chinese, with no tense,
    names it by its time words alone ("我三月份住在哪里？"). Else the question asks for
    the first or an earlier value when it says so, else about now (a question in the
    past tense too: ordering its versions as ranked cost 3 of 240 held-out answers,
    ``bench/README.md``)."""
    event = asks_event(question)
    present = not event and bool(_STATE_EN.search(question))
    tenseless = any(is_cjk(ch) for ch in question)
    for s in said:
        if s.last < today and (s.settled or not present or tenseless):
            return TimeAsk("window", s.first, s.last, s.words)
    for patterns, when in ((_FIRST, "first"), (_EARLIER, "before")):
        for pattern in patterns:
            m = pattern.search(question)
            if m:
                return TimeAsk(when, words=m.group(0).strip(" ?.!"))  # type: ignore[arg-type]
    return TimeAsk()


__all__ = ["TimeAsk", "When", "asks_event", "time_ask"]
