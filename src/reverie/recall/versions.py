"""Versions of one statement among a search's hits, in the order the question's time
asks (pure). No claim: nothing here says a line is out of date.

A hit is a version of the best content hit (the seed) when both are dated journal or
transcript lines of different days that read as the same statement: both hold a term
of the question's subject (``priya``, ``dentist``, 牙医) and their vectors' cosine is
at least :data:`SAME_SHARED`, and its relevance to
the question is at least :data:`NEAR` of the seed's. Lines that name their speaker
(``- Caroline: ...``) are versions only of the same speaker's lines: what one person
said, another did not say again. Both read as statements: the
learned durable-line classifier (:mod:`reverie.durable`) gives each at least
:data:`STATEMENT`, so an assistant's advice or a remark on the topic neither seeds a
group nor joins one (when the classifier can read the index's vectors). Nothing else
decides: no change words, no value shapes, no list of any language. A line joins when it is as alike to
a version already in the group (a value changed three times drifts away from the
first wording), up to :data:`VERSIONS` lines, best ranked first. What each constant
earned, on which sets, is in ``bench/README.md`` ("Versions without rules"). A newer
version the search did not rank comes in only by a link (:mod:`reverie.recall.chains`).

The group's lines then move, as little as it takes, into the order asked for
(:class:`reverie.recall.asof.TimeAsk`): for now, newest first; "before", the one before
the newest; "originally", the oldest; a window, the newest not after its end. Owner and
agent lines come before system lines, and those before untrusted ones, whatever their
days: an untrusted line never passes an owner's. The group's lines share out the
group's scores in that order; every other hit keeps its own score and its order.
What a line replaced is said only by a link in the files
(:mod:`reverie.recall.chains`), never here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..provenance.origin import Origin
from ..tokens import stem_set
from .asof import TimeAsk
from .hops import speaker
from .ranking import Scored

SAME_SHARED = 0.2  # cosine of two lines' vectors that both hold a subject term
VERSIONS = 5  # at most this many lines in a group: more is a topic the chat comes back to
NEAR = 0.5  # a version's relevance is at least this share of the seed's
STATEMENT = 0.8  # the durable classifier's keep probability of a line that states a fact


@dataclass(frozen=True)
class Version:
    """Why a hit stands where it does in its group (``--explain`` prints it)."""

    group: int
    order: str  # "newest first", "as of 'in March'", ...
    why: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _trust(origin: Origin) -> int:
    """0 owner and agent, 1 system, 2 untrusted: the order trust puts a group in."""
    if origin in (Origin.OWNER, Origin.AGENT):
        return 0
    return 1 if origin is Origin.SYSTEM else 2


def _unit(v: Any) -> Any:
    u = np.asarray(v, dtype=np.float64)
    n = float(np.linalg.norm(u))
    return u / n if n else u


def _dated(s: Scored) -> bool:
    c = s.candidate
    return s.tier == 0 and c.day is not None and c.kind in ("journal", "transcript")


def alike(a: Scored, b: Scored, va: Any, vb: Any, subject: frozenset[str]) -> str | None:
    """Why ``a`` and ``b`` read as the same statement, or None."""
    if va is None or vb is None or a.candidate.day == b.candidate.day:
        return None
    who = speaker(a.candidate.text), speaker(b.candidate.text)
    if None not in who and who[0] != who[1]:
        return None  # two people's lines (``- Name: ...``): not one statement said again
    cos = float(va @ vb)
    shared = stem_set(a.candidate.text) & stem_set(b.candidate.text) & subject
    if shared and cos >= SAME_SHARED:
        return f"cosine {cos:.2f}, both say {', '.join(sorted(shared)[:3])!r}"
    return None


def time_key(s: Scored, ask: TimeAsk, newest: int) -> tuple[int, int, int]:
    day = s.candidate.day.toordinal() if s.candidate.day else 0
    bucket = _trust(s.candidate.origin)
    if ask.when == "first":
        return bucket, 0, day
    if ask.when == "before":
        return bucket, int(day == newest), -day
    if ask.when == "window" and ask.end is not None:
        return bucket, int(day > ask.end.toordinal()), -day
    return bucket, 0, -day


def order(
    ranked: Sequence[Scored],
    ask: TimeAsk,
    subject: frozenset[str],
    *,
    vectors: Mapping[int, Any],
    window: int = 24,
    statements: Mapping[int, float] | None = None,
) -> tuple[list[Scored], dict[int, Version]]:
    """``ranked`` with the seed's versions in the order ``ask`` wants (module doc), and
    a :class:`Version` per grouped chunk id. ``statements``: each dated hit's keep
    probability by the durable classifier (None: not judged, every line may group)."""
    items = list(ranked)
    units = {k: _unit(v) for k, v in vectors.items()}
    pool = [s for s in items[:window] if _dated(s)]
    if not pool or pool[0] is not next((s for s in items[:window] if s.tier == 0), None):
        return items, {}
    if statements is not None:  # the seed and each version state something
        stated = [s for s in pool if statements.get(s.candidate.chunk_id, 0.0) >= STATEMENT]
        if not stated or stated[0] is not pool[0]:
            return items, {}
        pool = stated
    seed = pool[0]
    group, why = [seed], {seed.candidate.chunk_id: "the best content hit"}
    for s in pool[1:]:
        if len(group) == VERSIONS:
            break
        if s.relevance < NEAR * seed.relevance:
            continue
        if any(g.candidate.day == s.candidate.day for g in group):
            continue
        v = units.get(s.candidate.chunk_id)
        for m in group:
            said = alike(m, s, units.get(m.candidate.chunk_id), v, subject)
            if said:
                group.append(s)
                why[s.candidate.chunk_id] = f"like {_ref(m)}: {said}"
                break
    if len(group) < 2:
        return items, {}
    newest = max(s.candidate.day.toordinal() for s in group if s.candidate.day)
    wanted = sorted(group, key=lambda s: time_key(s, ask, newest))
    moved = promote(list(items), wanted)
    # the group's lines share out the group's scores, the first asked for the best; every
    # other hit keeps its own (a place's score, taken by a hit that stepped down to it,
    # could be far below its own: places are in the ranking's order, not by score)
    best = sorted((g.final for g in group), reverse=True)
    shares = dict(zip(map(id, wanted), best, strict=True))
    out = [
        replace(s, final=shares.get(id(s), s.final), mmr_rank=items[n].mmr_rank)
        for n, s in enumerate(moved)
    ]
    marks = {
        s.candidate.chunk_id: Version(1, ask.order_name, why[s.candidate.chunk_id]) for s in group
    }
    return out, marks


def promote(items: list[Scored], wanted: list[Scored]) -> list[Scored]:
    """``items`` with the group in the ``wanted`` order, moving as little as it takes:
    each line that must come before an earlier-placed one moves up to just before it
    (the hits it passes step down one place); a group already in order moves nothing."""
    rest = list(wanted)
    while rest:
        first = rest.pop(0)
        at = {id(s): n for n, s in enumerate(items)}
        here = at[id(first)]
        top = min((at[id(m)] for m in rest), default=here)
        if top < here:
            items.insert(top, items.pop(here))
    return items


def _ref(s: Scored) -> str:
    return f"{s.candidate.path}#L{s.candidate.start_line}"


__all__ = [
    "SAME_SHARED",
    "STATEMENT",
    "VERSIONS",
    "Version",
    "alike",
    "order",
    "promote",
    "time_key",
]
