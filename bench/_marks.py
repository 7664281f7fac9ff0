"""The "earlier; changed" marks a search shows, judged against the facts
``bench/updates.py`` planted: is each mark on a version of a fact, and is its
superseder a later version of the same fact?"""

from __future__ import annotations

from typing import Any

from _update_cases import UNIQUE


def fact_places(
    cases: list[Any], spot: dict[str, tuple[str, int]], unique: list[Any] = UNIQUE
) -> dict[tuple[str, int], tuple[int, int]]:
    """Each version's and old-unique fact's place -> (fact number, version number)."""
    out = {c.where[t]: (n, k) for n, c in enumerate(cases) for k, (_, t) in enumerate(c.versions)}
    out.update({spot[line]: (len(cases) + m, 0) for m, (line, _, _) in enumerate(unique)})
    return out


def mark_calls(hits: list[Any], facts: dict[tuple[str, int], tuple[int, int]]) -> list[str]:
    """Each hit marked "earlier; changed": right when a version is marked by a later
    version of its fact; wrong-fact when a version or an old-unique fact is marked by
    anything else; other when a remark (not a version) is marked."""
    out = []
    for h in hits:
        if not h.superseded_by:
            continue
        path, _, line = h.superseded_by.partition("#L")
        me = next(
            (f for (p, n), f in facts.items() if p == h.path and h.start_line <= n <= h.end_line),
            None,
        )
        by = facts.get((path, int(line)))
        if me is None:
            out.append("other")
        else:
            out.append("right" if by and by[0] == me[0] and by[1] > me[1] else "wrong-fact")
    return out
