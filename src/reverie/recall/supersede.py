"""Which version of a fact is current (pure): supersession among one search's hits.

Two dated hits (journal or transcript lines of different days) state the same thing
about the same subject when both contain a content term of the question (the subject
the question names: "Priya", "standup", "例会") and they are alike: their vectors'
cosine is at least ``SIMILAR``, or at least ``SIMILAR_CHANGED`` when the newer one
carries a change word ("moved to", "now", "switched", "no longer", "replaced",
"instead of", "改到", "已经", "不再", "换成" ...). Without vectors, the Jaccard of their
word stems stands in. Such hits form a group (connected pairs).

Within a group the question's time decides the order (:mod:`reverie.recall.asof`):
now: newest first, but a mere mention (no value, no change word, far less relevant
than the group's best) after the members stating a value; "before": a line recalling
the earlier value ("used to"), then the value before the newest; "originally": the
oldest; a window ("in March"): the newest line not after the window's end. A group
grows only around the best content hit (the fact the question asks about; a chat that
comes back to a topic in many sessions is not reordered further down), and it moves
as little as it takes: a member that must come first moves up to just before the
member it passes, the hits in between step down one place, every place keeps its
score. A group already in order, or a search that groups nothing, returns what it did.

Provenance decides who may supersede: owner and agent lines come first in a group
whatever the days, then system lines, then untrusted ones; only an owner or agent
line marks another line superseded (an untrusted one marks only an untrusted one), a
system line never does. A line that recalls a value as past ("used to", "以前") states
no current value: it supersedes nothing and is not marked. Nor does a line that states
no value and says nothing changed supersede anything ("needs new shoes for the
wedding": "new" alone is no change).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

import numpy as np

from ..provenance.origin import Origin
from ..tokens import is_cjk, stem_set
from .asof import TimeAsk, asks_event
from .change import change_words, recalls_past, says_changed
from .ranking import Scored
from .slots import SlotView, slot_group
from .subject import Subject, subject_terms
from .values import differ, values

# what two hits share of the subject, topical, change words, likeness, how, value kind
_PairT = tuple[frozenset[str], bool, tuple[str, ...], float, str, str | None]

SIMILAR = 0.65  # cosine of two hits' vectors: the same statement about the same subject
SIMILAR_CHANGED = 0.28  # ... when the newer one says it changed
LEXICAL = 0.35  # Jaccard of word stems, when a hit has no vector
LEXICAL_CHANGED = 0.15
SIMILAR_OWNER = 0.75  # ... when all they share of the question is a name (an owner)
LEXICAL_OWNER = 0.5
COMMON_MIN, COMMON_SHARE = 3, 0.4  # a question term in this many / share of the members
NEAR_TOP_CHANGED = 0.25  # ... or this share, for a line that says it changed
NEAR_TOP = 0.3  # a member's relevance is at least this share of the best hit's
NEAREST = 2  # two hits each among the other's this many closest same-subject hits ...
NEAREST_MIN = 0.3  # ... with at least this cosine (Jaccard: below) state one fact
LEXICAL_NEAREST_MIN = 0.12
VERSIONS = 3  # a group of more lines than this is a recurring topic: left alone
SEEDS = 1  # a group grows only around the best this many content hits
# a mere mention ("Sofia said the rent keeps going up") this far below the group's best
# relevance does not pass a member stating a value, for a question about now
MENTION_SHARE = 0.5


@dataclass(frozen=True)
class Mark:
    """What supersession says of one hit (``--explain`` and JSON print it)."""

    group: int
    order: str  # how the group was ordered: "newest first", "as of March", ...
    why: str  # why it is in its group
    superseded_by: str | None = None  # "path#Ln" of the newer line
    changed_on: date | None = None

    def as_dict(self) -> dict[str, Any]:
        on = self.changed_on.isoformat() if self.changed_on else None
        return {**asdict(self), "changed_on": on}


def _trust(origin: Origin) -> int:
    """0: may supersede (owner, agent); 1: system (never supersedes); 2: untrusted."""
    if origin in (Origin.OWNER, Origin.AGENT):
        return 0
    return 1 if origin is Origin.SYSTEM else 2


def _unit(v: Any) -> Any:
    u = np.asarray(v, dtype=np.float64)
    n = float(np.linalg.norm(u))
    return u / n if n else u


def _ref(s: Scored) -> str:
    return f"{s.candidate.path}#L{s.candidate.start_line}"


@dataclass(frozen=True)
class _Link:
    """Why two hits state one fact; ``strong``: evidence enough to call one changed."""

    why: str
    strong: bool


def _pair(a: Scored, b: Scored, subject: Subject, vectors: Mapping[int, Any]) -> _PairT | None:
    """What ``a`` and ``b`` share of the subject, whether a topic (not only an owner),
    the newer one's change words, their likeness and how measured, the kind of value
    each states another of (:mod:`.values`); None when they share no subject term."""
    ca, cb = a.candidate, b.candidate
    assert ca.day is not None and cb.day is not None
    sa, sb = stem_set(ca.text), stem_set(cb.text)
    shared = sa & sb & subject.terms
    if not shared or not subject.owners <= shared:
        return None  # a question naming an owner: both lines must name all of it
    # sharing only a name ("Priya", or one Chinese pair: 陈静) is sharing an owner,
    # not a topic: that takes a change word or a closer likeness
    topical = bool(shared - subject.names) and (len(shared) > 1 or not is_cjk(min(shared)[0]))
    changed = change_words((cb if cb.day > ca.day else ca).text)  # the newer one's
    va, vb = vectors.get(ca.chunk_id), vectors.get(cb.chunk_id)
    if va is not None and vb is not None:  # unit vectors
        sim, how, floor = float(va @ vb), "cosine", min(SIMILAR_CHANGED, NEAREST_MIN)
    else:
        sim, how = len(sa & sb) / (len(sa | sb) or 1), "stem overlap"
        floor = min(LEXICAL_CHANGED, LEXICAL_NEAREST_MIN)
    q = subject.terms  # below every bar no link forms: no values to read (most pairs)
    kind = differ(values(ca.text, q), values(cb.text, q)) if sim >= floor else None
    return shared, topical, changed, sim, how, kind


def _linkable(idx: list[int], items: list[Scored], vectors: Mapping[int, Any]) -> bool:
    """Some two hits at ``idx`` may link: one has no vector, or two pass the lowest bar."""
    vs = [vectors.get(items[i].candidate.chunk_id) for i in idx]
    if len(vs) < 2 or any(v is None for v in vs):
        return len(vs) > 1
    m = np.stack([v for v in vs if v is not None])
    sims = m @ m.T
    np.fill_diagonal(sims, -1.0)
    return bool(sims.max() >= min(SIMILAR_CHANGED, NEAREST_MIN))


def _link(pair: _PairT, nearest: bool) -> _Link | None:
    """The link of a pair (see :func:`_pair`), or None. ``nearest``: each of the two is
    among the other's closest same-subject hits of the pool (a relative likeness: two
    wordings of one fact are nearer each other than the owner's other facts are). Two
    lines stating other values of one kind ("Dr. Patel", "Dr. Okafor") are evidence
    of a change as a change word is; sharing only an owner, a lower likeness will do."""
    shared, topical, changed, sim, how, kind = pair
    cosine = how == "cosine"
    if topical:
        bar = (SIMILAR_CHANGED if changed or kind else SIMILAR) if cosine else (
            LEXICAL_CHANGED if changed or kind else LEXICAL)  # fmt: skip
    else:  # only an owner: another value is evidence as a change word is
        bar = (SIMILAR if changed or kind else SIMILAR_OWNER) if cosine else (
            LEXICAL if changed or kind else LEXICAL_OWNER)  # fmt: skip
    strong = sim >= bar
    near = nearest and sim >= (NEAREST_MIN if cosine else LEXICAL_NEAREST_MIN)
    if not (strong or near):
        return None
    said = f", change words {', '.join(repr(w) for w in changed[:3])}" if changed else ""
    said += f", another {kind}" if kind else ""
    words = ", ".join(sorted(shared)[:3])
    rel = "" if strong else ", nearest same-subject hits"
    return _Link(f"shares {words!r}, {how} {sim:.2f}{rel}{said}", strong or bool(changed or kind))


def _order(
    members: list[Scored], ask: TimeAsk, question: frozenset[str] = frozenset()
) -> list[Scored]:
    """The group's members in the order the question wants (see the module doc). For a
    question about an earlier value the versions are the members stating a value of the
    slot (:mod:`.values`: "lives in Leeds", "moved to Bristol") when two do, else those
    saying it changed: a mere mention ("Ravi said the rent keeps going up") is none.
    "Before" is answered first by a line recalling the earlier value ("Aisha used to
    live in Lyon", "阿美的护照以前放在蓝色文件夹"), then by the version before the newest."""

    def day(s: Scored) -> int:
        return s.candidate.day.toordinal() if s.candidate.day else 0

    statements = said = [s for s in members if not recalls_past(s.candidate.text)]
    if ask.past:  # two valued (one may be the only value read: "迁到AWS东京", "自建机房")
        valued = [s for s in said if values(s.candidate.text, question)]
        statements = valued if len(valued) > 1 else said
    trusted = [s for s in statements if _trust(s.candidate.origin) == 0]
    versions = trusted or statements
    if statements is said:  # no values to tell them by: those saying it changed, if any
        versions = [s for s in versions if change_words(s.candidate.text)] or versions
    newest = max(versions or members, key=day)  # what "before" counts back from
    mentions = _mentions(said, members, question)
    answer: Scored | None = None
    if ask.when == "window" and ask.end is not None:
        end = ask.end.toordinal()
        before_end = [s for s in trusted or statements if day(s) <= end]
        answer = max(before_end, key=day) if before_end else min(trusted or members, key=day)

    def key(s: Scored) -> tuple[int, int, int, int]:
        bucket, other = _trust(s.candidate.origin), int(s not in statements)
        if ask.when == "first":
            return bucket, other, 0, day(s)
        if ask.when == "before":  # a line recalling the earlier value says it
            return bucket, -1 if s not in said else other, int(s is newest), -day(s)
        if ask.when == "window":
            return bucket, int(s is not answer), other, -day(s)
        return bucket, other, int(id(s) in mentions), -day(s)

    return sorted(members, key=key)


def _informs(s: Scored, question: frozenset[str]) -> bool:
    """``s`` states a value (by shape, :mod:`.values`) or says it changed with more than
    a weak word (:func:`.change.says_changed`): a mere mention does neither."""
    return bool(values(s.candidate.text, question) or says_changed(s.candidate.text))


def _mentions(said: list[Scored], members: list[Scored], question: frozenset[str]) -> set[int]:
    """The ``id``s of the members merely mentioning the slot (:func:`_informs` not),
    under :data:`MENTION_SHARE` of the best relevance; none when no member informs."""
    if not any(_informs(s, question) for s in said):
        return set()
    top = max(s.relevance for s in members)
    return {id(s) for s in said if not _informs(s, question) and s.relevance < MENTION_SHARE * top}


def supersede(
    ranked: Sequence[Scored],
    query: str,
    ask: TimeAsk,
    *,
    vectors: Mapping[int, Any] | None = None,
    window: int = 24,
    near_top: float | None = None,
    slots: SlotView | None = None,
) -> tuple[list[Scored], dict[int, Mark]]:
    """``ranked`` with each group's members together, at the place of its best-placed
    member, in the order the question wants; every other hit keeps its order, and every
    place its score. A :class:`Mark` per grouped chunk id."""
    items = list(ranked)
    near_top = NEAR_TOP if near_top is None else near_top
    if not ask.past and asks_event(query):  # "When did ...": events, not states
        return items, {}
    vectors = {k: _unit(v) for k, v in (vectors or {}).items()}
    # the time words are not the subject ("in June" names no one)
    subject = subject_terms(query.replace(ask.words, " ") if ask.words else query)
    content = [s for s in items[:window] if s.tier == 0]
    best = max((s.relevance for s in content), default=0.0)
    idx = [
        i
        for i, s in enumerate(items[:window])
        if s.tier == 0
        and s.candidate.day is not None
        and s.candidate.kind in ("journal", "transcript")
        and (
            s.relevance >= near_top * best
            or (s.relevance >= NEAR_TOP_CHANGED * best and bool(change_words(s.candidate.text)))
        )
    ]
    # a question term most of the pool holds names an owner ("Priya", "the billing
    # team", 数据组), not a topic: hits that share only such terms share an owner
    linkable = _linkable(idx, items, vectors)  # else no pair could link: none is read
    counts = Counter(
        t for s in content if linkable for t in stem_set(s.candidate.text) & subject.terms
    )
    common = {t for t, n in counts.items() if n >= max(COMMON_MIN, COMMON_SHARE * len(content))}
    subject = Subject(subject.terms, subject.names | common, subject.owners)
    pairs = {}
    for n, i in enumerate(idx if linkable else []):
        for j in idx[n + 1 :]:
            if items[i].candidate.day != items[j].candidate.day:
                pair = _pair(items[i], items[j], subject, vectors)
                if pair is not None:
                    pairs[(i, j)] = pairs[(j, i)] = pair
    close: dict[int, set[int]] = {}  # each hit's nearest same-subject peers
    for i in idx:
        peers = sorted((j for j in idx if (i, j) in pairs), key=lambda j: -pairs[(i, j)][3])
        # nearer than the subject's other hits: only where there are others to be nearer than
        close[i] = set(peers[:NEAREST]) if len(peers) > NEAREST else set()
    edges: dict[tuple[int, int], _Link] = {}
    for (i, j), pair in pairs.items():
        link = _link(pair, j in close[i] and i in close[j])
        if link is not None:
            edges[(i, j)] = link
    # groups seeded in rank order: a member is like the seed and like at least half of
    # the group (a chain of look-alikes, A like B like C, is not one fact)
    groups: list[list[int]] = []
    why: dict[int, str] = {}
    free = list(idx)
    seeds = [i for i, s in enumerate(items[:window]) if s.tier == 0][:SEEDS]
    view = slots or SlotView()
    ranked_ids = {s.candidate.chunk_id for s in items}
    extras = [e for e in view.extras if e.candidate.chunk_id not in ranked_ids]
    look = [*items[:window], *extras]  # the owner's lines past the pool join a group or nothing
    spoken, said, strong = slot_group(look, view, subject.terms)
    base = items
    if spoken:  # the hits that speak of the question's slot of its owner: one group
        items, free = [*items[:window], *extras, *items[window:]], []
        groups.append(spoken)
        why.update(said)
        for both, evident in strong.items():  # the slot's evidence of a change counts too
            had = edges.get(both)
            edges[both] = _Link(
                had.why if had else "the same slot", evident or bool(had and had.strong)
            )
    while free:
        seed = free.pop(0)
        if seed not in seeds:
            continue
        group = [seed]
        for j in list(free):
            if (seed, j) in edges and 2 * sum((m, j) in edges for m in group) >= len(group):
                group.append(j)
                free.remove(j)
                why[j] = f"with {_ref(items[seed])}: {edges[(seed, j)].why}"
        if 1 < len(group) <= VERSIONS:  # more: a topic the chat comes back to, not a fact
            why[seed] = f"with {_ref(items[group[1]])}: {edges[(seed, group[1])].why}"
            groups.append(sorted(group))
    marks: dict[int, Mark] = {}
    moved = list(items)
    for places in groups:
        moved = _promote(moved, _order([items[i] for i in places], ask, subject.terms))
    grouped = {items[i].candidate.chunk_id for places in groups for i in places}
    joined = [e for e in extras if e.candidate.chunk_id in grouped]  # the rest: not shown
    moved = [s for s in moved if s.candidate.chunk_id in ranked_ids or s in joined]
    at = [*base, *joined]  # every place keeps its score; a joined line's place is its own
    out = [replace(s, final=at[n].final, mmr_rank=at[n].mmr_rank) for n, s in enumerate(moved)]
    place = {s.candidate.chunk_id: n for n, s in enumerate(items)}
    for number, places in enumerate(groups, start=1):
        members = [items[i] for i in places]
        for s in members:
            me = place[s.candidate.chunk_id]
            links = {
                m.candidate.chunk_id: edges.get((me, place[m.candidate.chunk_id])) for m in members
            }
            by = _superseder(s, members, links, subject.terms)
            marks[s.candidate.chunk_id] = Mark(
                number,
                ask.order_name,
                why[place[s.candidate.chunk_id]],
                _ref(by) if by else None,
                by.candidate.day if by else None,
            )
    return out, marks


def _promote(items: list[Scored], wanted: list[Scored]) -> list[Scored]:
    """``items`` with the members of one group in the ``wanted`` order, moving as little
    as it takes: each member that must come before an earlier-placed one moves up to
    just before it (the hits it passes step down one place); a group already in order
    changes nothing."""
    out = list(items)
    rest = list(wanted)
    while rest:
        first = rest.pop(0)
        at = {id(s): n for n, s in enumerate(out)}
        here = at[id(first)]
        top = min((at[id(m)] for m in rest), default=here)
        if top < here:
            out.insert(top, out.pop(here))
    return out


def _superseder(
    s: Scored,
    members: list[Scored],
    links: Mapping[int, _Link | None],
    question: frozenset[str],
) -> Scored | None:
    """The nearest newer member that may mark ``s`` superseded, or None: it states a
    value (by shape, :mod:`.values`) or says it changed, and does not recall one as
    past (a mere mention, "Omar's passport expires in three years", replaces nothing);
    its trust allows it; and the evidence is strong: a change word, another value, or a
    close likeness to ``s`` (not only the nearest of the pool)."""
    c = s.candidate
    if recalls_past(c.text) or c.day is None:
        return None
    mine = _trust(c.origin)

    def strong(m: Scored) -> bool:
        link = links.get(m.candidate.chunk_id)
        return link.strong if link is not None else bool(change_words(m.candidate.text))

    later = [
        m
        for m in members
        if m.candidate.day is not None and m.candidate.day > c.day
        and not recalls_past(m.candidate.text)
        and _informs(m, question)
        and (_trust(m.candidate.origin) == 0 or mine == _trust(m.candidate.origin) == 2)
        and strong(m)
    ]  # fmt: skip
    return min(later, key=lambda m: m.candidate.day or date.min) if later else None


__all__ = ["Mark", "Subject", "change_words", "recalls_past", "subject_terms", "supersede"]
