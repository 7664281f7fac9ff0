"""The subject of a question (pure): its content terms and which of them are names.

"Where does Priya live?": ``priya`` and ``live``, ``priya`` a name; "周婷的牙医是谁？":
the character pairs of its words, less those holding a particle (的, 是) and those that
only say what kind of question it is (是谁). Two hits that both hold one may be
versions of one statement (:mod:`reverie.recall.versions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..tokens import QUERY_STOP_WORDS, is_cjk, stem, terms

# question words of Chinese: pairs that say what kind of question, not its subject
_ZH_QUESTION = frozenset(
    ["什么", "哪里", "哪儿", "哪个", "哪天", "是谁", "多少", "怎么", "几点", "为什么",
     "么时", "时候", "是什", "么名", "名字", "在哪", "哪些", "如何", "是多", "少钱"]
)  # fmt: skip


_ZH_PARTICLES = frozenset("的是了在有和也都就把被吗呢吧啊")


@dataclass(frozen=True)
class Subject:
    """The question's content terms (as :func:`reverie.tokens.stem_set` writes them),
    and which of them are names (capitalised inside the question)."""

    terms: frozenset[str]
    names: frozenset[str]
    owners: frozenset[str] = frozenset()  # the names the question itself spells


_OWNER = re.compile(r"((?:\w+\s+){0,2}\w+)['’]s\b")
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][\w'’]*")


def subject_terms(query: str) -> Subject:
    """The question's :class:`Subject`."""
    out: set[str] = set()
    for term in terms(query):
        if is_cjk(term[0]):  # its character pairs, but not those holding a particle
            pairs = (term[i : i + 2] for i in range(len(term) - 1))
            out.update(p for p in pairs if not (set(p) & _ZH_PARTICLES))
            if len(term) == 1:
                out.add(term)
        elif term not in QUERY_STOP_WORDS:
            out.add(stem(term))
    names = {stem(t) for m in _NAME.finditer(query.strip()) for t in terms(m.group(0))}
    # the possessor names an owner too ("the billing team's invoices": the team's)
    names |= {stem(t) for m in _OWNER.finditer(query) for t in terms(m.group(1))} & out
    kept = frozenset(t for t in out if t not in _ZH_QUESTION)
    return Subject(kept, frozenset(names), frozenset(names) & kept)


__all__ = ["Subject", "subject_terms"]
