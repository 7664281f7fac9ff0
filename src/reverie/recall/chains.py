"""Search follows version links (issue 38, point 2). Pure code.

A line that replaces an earlier one says so in its signed marker
(:mod:`reverie.provenance.links`); the index keeps each link (``links`` table), and the
search hands this module, for its hits, the newer lines that name them. A link holds
when the newer line is of a later day and its origin may replace the older one's
(owner and agent only; an agent never replaces the owner): anything else links
nothing, whatever the files say.

For a hit with newer versions, the chain (oldest first) is placed where the question's
time wants it: for now, the newest version first, at the best place any of them had
(a newest line the search did not rank comes in there, however little it shares with
the question); for "before", "originally" or a window, the version that held then.
The rest follow in the order :mod:`reverie.recall.versions` gives. Each older version
is marked ``superseded_by`` the next one, with its day: the one claim search makes,
and only with a link.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from itertools import pairwise

from ..provenance.links import may_replace
from .asof import TimeAsk
from .ranking import Scored
from .versions import promote, time_key

DEPTH = 8  # a chain is followed this many links at most


@dataclass(frozen=True)
class Link:
    """What a link says of an older hit: the next version and its day."""

    superseded_by: str  # "path#Ln" of the line that replaces it
    changed_on: date | None


def holds(newer: Scored, older: Scored) -> bool:
    """The link from ``newer`` to ``older`` holds: a later day, and the origins allow it."""
    n, o = newer.candidate, older.candidate
    return (
        n.day is not None
        and o.day is not None
        and n.day > o.day
        and may_replace(n.origin, o.origin)
    )


def ref(s: Scored) -> str:
    return f"{s.candidate.path}#L{s.candidate.start_line}"


def chains(ranked: Sequence[Scored], newer: Mapping[int, Sequence[Scored]]) -> list[list[Scored]]:
    """The chains (oldest first) through the ranked hits: ``newer`` maps a chunk id to
    the lines that name it as the line they replace. Where two lines replace one, the
    latest is the next version."""
    nxt: dict[int, Scored] = {}
    everyone: dict[int, Scored] = {s.candidate.chunk_id: s for s in ranked}
    for lines in newer.values():
        for line in lines:
            everyone.setdefault(line.candidate.chunk_id, line)
    for cid, lines in newer.items():
        old = everyone.get(cid)
        ok = [n for n in lines if old is not None and holds(n, old)]
        if ok:
            nxt[cid] = max(ok, key=lambda n: (n.candidate.day or date.min, n.candidate.chunk_id))
    starts = set(nxt) - {n.candidate.chunk_id for n in nxt.values()}
    out: list[list[Scored]] = []
    for cid in sorted(starts):
        chain, seen = [everyone[cid]], {cid}
        while chain[-1].candidate.chunk_id in nxt and len(chain) <= DEPTH:
            step = nxt[chain[-1].candidate.chunk_id]
            if step.candidate.chunk_id in seen:
                break
            seen.add(step.candidate.chunk_id)
            chain.append(step)
        if any(s.candidate.chunk_id in {r.candidate.chunk_id for r in ranked} for s in chain):
            out.append(chain)
    return out


def follow(
    ranked: Sequence[Scored],
    newer: Mapping[int, Sequence[Scored]],
    ask: TimeAsk,
) -> tuple[list[Scored], dict[int, Link]]:
    """``ranked`` with each chain placed as the question's time wants (module doc), and
    a :class:`Link` per older version."""
    items = list(ranked)
    links: dict[int, Link] = {}
    for chain in chains(items, newer):
        for old, new in pairwise(chain):
            links[old.candidate.chunk_id] = Link(ref(new), new.candidate.day)
        ids = {s.candidate.chunk_id for s in items}
        at = min((n for n, s in enumerate(items) if s.candidate.chunk_id in {
            c.candidate.chunk_id for c in chain}), default=len(items))  # fmt: skip
        base = list(items)
        came = [s for s in chain if s.candidate.chunk_id not in ids]
        if came:  # versions the search did not rank come in at the chain's best place
            base = [*items[:at], *came, *items[at:]]
        here = {c.candidate.chunk_id for c in chain}
        members = [s for s in base if s.candidate.chunk_id in here]
        newest = max(s.candidate.day.toordinal() for s in chain if s.candidate.day)
        wanted = sorted(members, key=lambda s: time_key(s, ask, newest))
        moved = promote(list(base), wanted)
        items = [replace(s, final=base[n].final, mmr_rank=base[n].mmr_rank)
                 for n, s in enumerate(moved)]  # fmt: skip
    return items, links


__all__ = ["DEPTH", "Link", "chains", "follow", "holds", "ref"]
