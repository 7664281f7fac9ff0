"""The values a line states (pure): what fills a question's slot, read by its shape.

A line that changes a fact states another value of the same kind ("Dr. Patel" ->
"Dr. Okafor", "9:30" -> "10:15", "Leeds" -> "Bristol", "#ops" -> "#inc-room"); a line
that only mentions the subject ("the dentist's waiting room had no magazines") states
none. Three kinds, by shape, never by a list of examples: ``num`` (a token holding a
digit: times, phone numbers, ports, sizes), ``ref`` (an address: ``@`` or ``#`` in
it) and ``name`` (a capitalised word inside a sentence). Words of the question (its
subject: the owner, the attribute) and titles ("Dr.", "Mr.") are not values. A Chinese
line gives digits, Chinese numbers with their unit ("七月十号", "三点半") and the Latin
names it holds ("GitLab"); its Chinese names have no capital to be read by.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..tokens import stem, terms

_REF = re.compile(r"[\w.+-]*[@#][\w.-]*\w")
_NUM = re.compile(r"\d[0-9A-Za-z:.-]*[0-9A-Za-z]|\d")  # not the Chinese after it
# a capitalised word not opening a sentence, a clause after ":" or ";", or the line;
# in a Chinese line too ("设计组用Travis做持续集成": the Chinese beside it is no part of it)
_L = "[^\\W\u3040-\u30ff\u3400-\u9fff]"  # a word character of no CJK script
_NAME = re.compile(rf"(?<![.?!:;]\s)(?<!{_L})(?<!['’-])(?<!^)(?<!^- )[A-Z](?:{_L}|['’-])*{_L}")
# a Chinese number with the unit of a value: 六月一号, 三点半, 地下二层, 十五岁 (not a
# bare 一, a word's; not a span of time or a frequency, 两周, 三年, 十分钟: those say how long)
_ZH_DIGIT = "[零〇一二两三四五六七八九十百千万]"
_ZH_UNIT = "[月号日点时岁层楼块元]"
_ZH_NUM = re.compile(rf"{_ZH_DIGIT}+{_ZH_UNIT}(?:(?:{_ZH_DIGIT}|半)+{_ZH_UNIT}?)*")
# 一 with 点, 块 or 层 alone is a word more often than a value: 改了一点 (a little), 一块去
# (together), 一层灰 (a layer); a value with a time or money word beside it (下午一点,
# 一点半, 一块钱, 地下一层)
_ZH_WORDISH = frozenset({"一点", "一块", "一层"})
_ZH_BEFORE = re.compile(r"(?:上午|下午|早上|晚上|凌晨|中午|夜里|地下)$")
_ZH_AFTER = frozenset("半钟刻钱")
_TITLE_DOT = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St)\.")
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "st", "i", "im", "ive", "ill", "id"})


@lru_cache(maxsize=16384)
def values(text: str, question: frozenset[str]) -> frozenset[tuple[str, str]]:
    """The (kind, value) pairs ``text`` states that ``question`` (its stems) does not
    hold."""
    out: set[tuple[str, str]] = set()
    for m in _REF.finditer(text):
        out.add(("ref", m.group(0).lower()))
    bare = _TITLE_DOT.sub(r"\1", _REF.sub(" ", text))  # "Dr. Okafor": one sentence
    for m in _NUM.finditer(bare):
        out.add(("num", m.group(0).lower().rstrip(".:")))
    for m in _ZH_NUM.finditer(bare):
        held = m.group(0)
        if held in _ZH_WORDISH and not (
            bare[m.end() : m.end() + 1] in _ZH_AFTER or _ZH_BEFORE.search(bare[: m.start()])
        ):
            continue
        if not any(held[i : i + 2] in question for i in range(len(held) - 1)):
            out.add(("num", held))
    for m in _NAME.finditer(bare):
        word = re.sub(r"['’]s$", "", m.group(0)).lower()
        stems = {stem(t) for t in terms(word)}
        if word.replace("'", "").replace("’", "") in _TITLES or stems & question:
            continue
        out.add(("name", word))
    return frozenset(out)


def differ(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> str | None:
    """The kind of value each line states and the other does not (another value of one
    slot), or None. A value both state is the slot's context, not its value: "GP" in
    "Sofia's GP is Dr. Singh" and "registered with a new GP, Dr. Novak"."""
    for kind in ("ref", "num", "name"):
        va = {v for k, v in a if k == kind}
        vb = {v for k, v in b if k == kind}
        if va - vb and vb - va:
            return kind
    return None


__all__ = ["differ", "values"]
