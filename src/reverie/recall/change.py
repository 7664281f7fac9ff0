"""Words that say a value changed, or recall one as past (pure), English and Chinese:
the evidence :mod:`reverie.recall.supersede` and :mod:`reverie.dreaming.current` read."""

from __future__ import annotations

import re
from functools import lru_cache

_CHANGE_EN = re.compile(
    r"\b(?:moved|moving|move to|now|switched|switching|switch(?:ed)? to|no longer|"
    r"not any ?more|any ?more|replaced|replacing|instead|changed|changing|new|"
    r"rescheduled|migrated|took over|taking over|from now on|these days|since then|"
    r"cancelled|gave up|stopped|started|rotated|renamed|upgraded|sold)\b",
    re.I,
)
_CHANGE_ZH = re.compile("改到|改成|改为|改放|改学|已经|不再|换成|换了|换到|搬到|迁到|现在|"
                        "推迟到|提前到|交给|接手|新的|新家|新号|从今天起|目前")  # fmt: skip
_RECALL_EN = re.compile(
    r"\b(?:used to|back when|formerly|previously|was once|in the old days)\b", re.I
)
_RECALL_ZH = re.compile("以前|原来|过去|曾经|当初|原先")


@lru_cache(maxsize=8192)
def change_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that say a value changed, in order."""
    return tuple(m.group(0) for m in _CHANGE_EN.finditer(text)) + tuple(_CHANGE_ZH.findall(text))


# change words too common to say alone that a fact changed ("needs new shoes", "hired
# two new people", "started running"); a line that states a value says the rest ("new
# address is in Bristol")
WEAK_CHANGE = frozenset({"new", "started", "starting", "新的"})


def strong_change_words(text: str) -> tuple[str, ...]:
    """The change words of ``text`` besides the weak ones (:data:`WEAK_CHANGE`)."""
    return tuple(w for w in change_words(text) if w.lower() not in WEAK_CHANGE)


def says_changed(text: str) -> bool:
    """``text`` says a value changed with a change word that is not a weak one."""
    return bool(strong_change_words(text))


@lru_cache(maxsize=8192)
def recalls_past(text: str) -> bool:
    """``text`` recalls a value as a thing of the past ("used to", "以前") and says
    nothing changed: a line that names the old value on its way to the new one ("不再学
    原来的乐器了，改学长笛", "no longer the one she used to see") states the new one."""
    said = bool(_RECALL_EN.search(text) or _RECALL_ZH.search(text))
    return said and not change_words(text)


__all__ = ["WEAK_CHANGE", "change_words", "recalls_past", "says_changed", "strong_change_words"]
