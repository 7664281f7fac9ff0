"""The slot a question asks of its owner (pure): which hits speak of it.

"Where does Aisha live?" asks one slot (where she lives) of one owner (Aisha). Every
line about Aisha shares her name with the question, so a line's likeness to the
question says as much about Aisha as about where she lives: "Aisha moved to Grenoble
last weekend" can look no more like it than "Aisha wears size 31 shoes" does. The
likeness of the *slot* is read with the owner taken out of both texts
(:func:`masked`), embedded again by the caller: what is left of the question ("Where
does live?") and of each line ("moved to Grenoble last weekend") compares what is
said, not who it is said of.

The owner is what the question names: a capitalised name inside it or a possessor
("the billing team's"), as :func:`reverie.recall.subject.subject_terms` reads them
(an all-capitals word such as "CI" or "AWS" names a thing, not an owner), or, in
Chinese, the words before a leading 的 ("周婷的牙医是谁") or the question's first two
or three characters when that many hits hold them ("阿美住在哪里").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from ..tokens import is_cjk, stem
from .change import change_words
from .ranking import Scored
from .values import differ, values

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_ZH_POSSESSOR = re.compile(r"^\s*([\u4e00-\u9fff]{2,6}?)的")
_ACRONYM = re.compile(r"^[A-Z0-9]{2,5}$")
# "Where does Aisha live?", "What does the payments team use for CI?": the subject of
# a question with do-support stands between the auxiliary and the main verb
_DO_SUBJECT = re.compile(
    r"\b(?:do|does|did)\s+((?:[^\W_]+[\s-]+){1,4}?)[^\W_]+"
    r"(?=\s+(?:for|to|in|on|at|with|about|from|by|of|the|a|an|his|her|their|its|my|our)\b"
    r"|\s*[?？.]|\s*$)",
    re.I,
)
# the possessor: "the billing team's" (after an article, up to three words) or "Yuki's"
_POSSESSOR = re.compile(
    r"\b(?:(?:the|my|our|your|his|her|their)\s+((?:[^\W_]+[\s-]+){0,2}[^\W_]+)|([^\W_]+))['’]s\b",
    re.I,
)
_ARTICLES = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their"})
SLOT_SHARE = 0.4  # a hit speaks of the slot: its likeness is this share of the best's
SLOT_MIN = 0.1  # ... and at least this
SLOT_MAX = 5  # more hits than this alike: the owner's topic, not one slot
# another value of the slot's kind at least this alike: numbers and addresses embedded
# alone (those of one slot look alike: "555-0141", "555-0198"); a name by how much nearer
# the slot's best line reads with it in place of the line's value than with no name there
# (names of any kind look alike alone: "Victor" beside "Leeds" more than "Bristol" does)
KIN_MIN = {"num": 0.25, "ref": 0.25, "name": 0.0}
# the slot's best line with a value stands for the slot only when it reads at least this
# share as alike as the slot's best line: "数据组的项目截止日期是六月一号" (0.21) is no
# line of "数据组八月份的值班表是怎么排的" when "数据组的值班已经改成每月了" reads 0.44
KIN_SEED_SHARE = 0.6
# when another of the owner's lines recalls the slot's value as past ("used to have a red
# Corolla"), some other value holds now: its line joins at this much less fit
KIN_PAST_SLACK = 0.05
ZH_PREFIX_MIN_HITS = 2  # a Chinese question's first characters name its owner when held this often
# ... three of them only when held by at least this share of the hits holding the first
# two ("刘洋开" of "刘洋开什么车": 2 hits of the 6 holding 刘洋; "王小明": most of 王小's)
ZH_PREFIX_SHARE = 0.5


@dataclass(frozen=True)
class Owner:
    """Whom a question asks about: English word stems, or a Chinese string."""

    stems: frozenset[str] = frozenset()
    zh: str = ""
    phrase: tuple[str, ...] = ()  # the stems in the question's order ("billing team")

    def __bool__(self) -> bool:
        return bool(self.stems or self.zh)

    def named_in(self, text: str) -> bool:
        """``text`` names the owner: the Chinese string, or the owner's words in a row
        ("the billing team", "the billing team's"; not "the payments team's cloud bill")."""
        if self.zh:
            return self.zh in text
        held = [stem(_bare(w)) for w in _WORD.findall(text.lower())]
        want, n = self.phrase, len(self.phrase)
        if n < 2:  # one word, or names the question spells apart: all of them
            return self.stems <= set(held)
        return any(tuple(held[i : i + n]) == want for i in range(len(held) - n + 1))

    def holds(self, term: str) -> bool:
        """``term`` (a stem, or a Chinese pair) is the owner's."""
        return term in self.stems or bool(self.zh and term in self.zh)

    def label(self) -> str:
        return self.zh or " ".join(sorted(self.stems))


# the owner's lines past the pool: (the owner's words, chunk ids to leave out) -> hits
OwnerLines = Callable[[str, set[int]], Sequence[Scored]]


@dataclass(frozen=True)
class SlotView:
    """What a search read of the question's slot (:mod:`.slot_likeness`): the slot
    likeness of each pool hit naming the owner, those sharing a word of the question
    besides the owner's, and for each of the owner's lines stating another value of
    the kind the slot's best line (``seed``) states, the likeness of the two values;
    ``extras``: the owner's lines found past the pool, which join a group or nothing."""

    likeness: Mapping[int, float] = field(default_factory=dict)
    topical: frozenset[int] = frozenset()
    kin: Mapping[int, tuple[float, str]] = field(default_factory=dict)  # likeness, kind
    extras: tuple[Scored, ...] = ()
    seed: int | None = None
    past: bool = False  # another of the owner's lines recalls the seed's value as past


def owner_words(query: str, owner: Owner) -> str:
    """The question's words that name its owner (a keyword query for the owner's lines)."""
    if owner.zh:
        return owner.zh
    return " ".join(w for w in _WORD.findall(query) if stem(_bare(w.lower())) in owner.stems)


def _phrase(words: list[str]) -> Owner:
    stems = tuple(stem(_bare(w)) for w in words)
    return Owner(stems=frozenset(stems), phrase=stems)


def _bare(word: str) -> str:
    return re.sub(r"['’]s$", "", word)


def owner_of(query: str, owners: frozenset[str], texts: Iterable[str] = ()) -> Owner:
    """The owner ``query`` asks about: ``owners`` (the stems of the names and
    possessor it spells, less acronyms), or a Chinese possessor or first characters
    (held by at least :data:`ZH_PREFIX_MIN_HITS` of ``texts``, three characters only
    by :data:`ZH_PREFIX_SHARE` of those holding two); empty when none."""
    acronyms = {stem(w.lower()) for w in _WORD.findall(query) if _ACRONYM.match(w)}
    whose = _POSSESSOR.search(query)
    if whose:
        words = _WORD.findall((whose.group(1) or whose.group(2)).lower())
        return _phrase(words)
    said = _DO_SUBJECT.search(query)
    if said:
        words = [w for w in _WORD.findall(said.group(1).lower()) if w not in _ARTICLES]
        if words:
            return _phrase(words)
    kept = frozenset(owners - acronyms)
    if kept:
        return Owner(stems=kept)
    m = _ZH_POSSESSOR.match(query)
    if m:
        return Owner(zh=m.group(1))
    head = query.strip()
    if head and is_cjk(head[0]):
        pool = list(texts)
        held = {
            n: sum(head[:n] in t for t in pool)
            for n in (3, 2)
            if len(head[:n]) == n and all(is_cjk(ch) for ch in head[:n])
        }
        for n in (3, 2):  # a third character most of the two's lines lack is no name's
            if held.get(n, 0) >= max(ZH_PREFIX_MIN_HITS, ZH_PREFIX_SHARE * held.get(2, 0)):
                return Owner(zh=head[:n])
    return Owner()


def masked(text: str, owner: Owner) -> str:
    """``text`` without the owner's words (a possessive "'s" goes with them)."""
    if owner.zh:
        out = text.replace(owner.zh, " ")
    else:

        def drop(m: re.Match[str]) -> str:
            return " " if stem(_bare(m.group(0).lower())) in owner.stems else m.group(0)

        out = _WORD.sub(drop, text)
    return " ".join(out.replace("- ", " ", 1).split()) if out.strip() else out


def _alike(view: SlotView) -> set[int]:
    """The pool hits alike enough, or sharing a word of the question besides the
    owner's ("standup", "dentist")."""
    if not view.likeness:
        return set()
    bar = max(SLOT_MIN, SLOT_SHARE * max(view.likeness.values()))
    return {
        k for k, v in view.likeness.items() if v >= bar or (k in view.topical and v >= SLOT_MIN)
    }


def _kin(view: SlotView) -> int | None:
    """The one line stating another value most like the slot's best line's (at least
    :data:`KIN_MIN`), when that line is of the slot and nearly its most alike
    (:data:`KIN_SEED_SHARE`)."""
    if not view.kin or view.seed not in _alike(view):
        return None
    if view.likeness[view.seed] < KIN_SEED_SHARE * max(view.likeness.values()):
        return None
    slack = KIN_PAST_SLACK if view.past else 0.0
    over = {k: like - KIN_MIN[kind] + slack for k, (like, kind) in view.kin.items()}
    kin = max(over, key=lambda k: over[k])
    return kin if over[kin] >= 0 else None


def slot_members(view: SlotView) -> list[int]:
    """The hits (chunk ids) that speak of the question's slot (alike, or another value
    of it), best first. Past :data:`SLOT_MAX` (another value counting) the alike ones
    are cut to the most alike and those sharing a word of the question besides the
    owner's; empty when fewer than two are left, or still more than :data:`SLOT_MAX`
    (a topic the owner comes back to)."""
    kin = _kin(view)
    alike = _alike(view)
    joins = {kin} if kin is not None else set()
    if len(alike | joins) > SLOT_MAX:  # too many: the most alike and those naming the slot's word
        alike &= view.topical | {max(alike, key=lambda k: view.likeness[k])}
    members = alike | joins
    ordered = sorted(members, key=lambda k: -view.likeness.get(k, -1.0))
    return ordered if 2 <= len(ordered) <= SLOT_MAX else []


def slot_group(
    items: Sequence[Scored], view: SlotView, question: frozenset[str]
) -> tuple[list[int], dict[int, str], dict[tuple[int, int], bool]]:
    """The places in ``items`` of the hits that speak of the slot (:func:`slot_members`),
    why each is there, and for each pair whether the evidence says one changed: the
    newer carries a change word, or the two state other values of one kind, and both
    read at least :data:`KIN_SEED_SHARE` as alike as the slot's best (or one is the
    other value)."""
    at = {s.candidate.chunk_id: n for n, s in enumerate(items)}
    spoken = sorted(at[k] for k in slot_members(view) if k in at)
    if not spoken:
        return [], {}, {}
    best, alike = max(view.likeness.values()), _alike(view)

    def said(k: int) -> str:
        if k in alike:
            return f"likeness {view.likeness[k]:.2f} without the owner, best {best:.2f}"
        like, kind = view.kin[k]
        name = {"num": "number", "ref": "address"}.get(kind, kind)
        return f"another {name} than the slot's, the two values' likeness {like:.2f}"

    why = {
        i: f"speaks of the question's slot ({said(items[i].candidate.chunk_id)})" for i in spoken
    }
    kin = _kin(view)
    # a line marks another changed only when both read nearly as alike as the slot's
    # best (or one is the other value): a member at the bar may be another slot's line
    firm = {
        i for i in spoken
        if items[i].candidate.chunk_id == kin
        or view.likeness.get(items[i].candidate.chunk_id, -1.0) >= KIN_SEED_SHARE * best
    }  # fmt: skip
    strong: dict[tuple[int, int], bool] = {}
    for i in spoken:
        for j in spoken:
            if i != j:
                a, b = items[i].candidate, items[j].candidate
                newer = b if (b.day or date.min) > (a.day or date.min) else a
                kind = differ(values(a.text, question), values(b.text, question))
                evident = bool(change_words(newer.text)) or kind is not None
                strong[(i, j)] = evident and i in firm and j in firm
    return spoken, why, strong


__all__ = [
    "Owner",
    "OwnerLines",
    "SlotView",
    "masked",
    "owner_of",
    "owner_words",
    "slot_group",
    "slot_members",
]
