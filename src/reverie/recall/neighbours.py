"""Neighbouring entries of a hit, for a search that fills a token budget. Pure code.

Journals and transcripts are chunked by entry, one observation or turn each, so a hit
is one line and carries no context of its own; yet what answers a question often sits
next to what matches it: the reply to the message that names the topic, the line after
"we went camping" that says where. When a search fills a budget, the entries within
``reach`` of a hit in the same file (not across a heading: another section is another
context) become candidates of their own, scored ``share`` x the hit's score; an entry
that is also a direct match keeps the better of its two scores. They are read in rank
order like any hit, each with its own origin and frame.

A neighbour is context, not a match: its relevance stays its own (zero when the query
did not find it), so it is never recorded as evidence and never counts as a strong hit.

Measured on the LoCoMo development split, what the model reads within 2,000 tokens
(bench/README.md): reach 2, share 0.6 read 0.785 -> 0.85 of the evidence turns; shares
0.5-0.8 and reach 1-3 all read 0.82-0.855 (the gain is not a knife-edge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Lift:
    """A neighbour's score from the hit beside it (``parent``: that hit's chunk id)."""

    score: float
    parent: int
    distance: int


def neighbour_scores(
    hits: Sequence[tuple[int, str, float]],
    order: Mapping[str, Sequence[tuple[int, bool]]],
    *,
    reach: int,
    share: float,
) -> dict[int, Lift]:
    """Chunk id -> the best score a hit lends it. ``hits``: (chunk id, path, score) of
    the ranked hits; ``order``: per file its chunks in line order with whether each is
    a heading. A heading ends the walk (and lends or gets nothing)."""
    if reach < 1 or share <= 0:
        return {}
    where = {cid: (path, i) for path, chunks in order.items() for i, (cid, _) in enumerate(chunks)}
    out: dict[int, Lift] = {}
    for cid, path, score in hits:
        at = where.get(cid)
        if at is None or at[0] != path:
            continue
        chunks = order[path]
        if chunks[at[1]][1]:
            continue
        for step in (-1, 1):
            for d in range(1, reach + 1):
                j = at[1] + step * d
                if not 0 <= j < len(chunks) or chunks[j][1]:
                    break
                other = chunks[j][0]
                lift = Lift(share * score, cid, d)
                if other not in out or lift.score > out[other].score:
                    out[other] = lift
    return out


__all__ = ["Lift", "neighbour_scores"]
