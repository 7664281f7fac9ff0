"""Snippets: what a model reads of a hit, and how many hits fit in a token budget.
Pure code.

A snippet is the lines of the hit's chunk that match the query best, with a line of
context on each side, contiguous and never cut mid-line; the hit's ``start_line`` /
``end_line`` are exactly the lines shown. The whole chunk stays available through
``memory_get``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from ..tokens import count_tokens, stem_set


@dataclass(frozen=True)
class Focus:
    """The lines of a chunk to show: first and last line numbers and their text."""

    start_line: int
    end_line: int
    text: str


def line_scores(lines: Sequence[str], query: str) -> list[float]:
    """How well each line matches the query: shared tokens, damped by line length
    (a long line sharing one word is a weaker match than a short one sharing it)."""
    q = stem_set(query)
    out = []
    for line in lines:
        toks = stem_set(line)
        out.append(len(q & toks) / (len(toks) ** 0.5) if toks and q else 0.0)
    return out


def focus(
    text: str, start_line: int, query: str, *, context: int = 1, max_tokens: int = 400
) -> Focus:
    """The best-matching line of a chunk with ``context`` lines either side (within
    the chunk, blank lines skipped at the edges), grown while it fits ``max_tokens``.
    A chunk no line of which shares a word with the query (a vector-lane hit) shows
    its first lines."""
    lines = text.split("\n")
    if len(lines) == 1:
        return Focus(start_line, start_line, text)
    scores = line_scores(lines, query)
    best = max(range(len(lines)), key=lambda i: (scores[i], -i)) if any(scores) else 0
    lo, hi = best, best
    used = count_tokens(lines[best])
    for _ in range(context):
        for step in (-1, 1):
            j = (lo if step < 0 else hi) + step
            if 0 <= j < len(lines):
                cost = count_tokens(lines[j])
                if used + cost > max_tokens and (lo, hi) != (best, best):
                    continue
                used += cost
                lo, hi = (j, hi) if step < 0 else (lo, j)
    while lo < hi and not lines[lo].strip():
        lo += 1
    while hi > lo and not lines[hi].strip():
        hi -= 1
    return Focus(start_line + lo, start_line + hi, "\n".join(lines[lo : hi + 1]))


def pack(costs: Iterable[tuple[int, frozenset[tuple[str, int]]]], budget: int) -> list[int]:
    """Which items (by index, in rank order) fit ``budget`` tokens with no line shown
    twice: an item costing too much, or showing a line already shown, is skipped and
    the next one tried."""
    chosen: list[int] = []
    used = 0
    shown: set[tuple[str, int]] = set()
    for i, (cost, lines) in enumerate(costs):
        if used + cost > budget or lines & shown:
            continue
        chosen.append(i)
        used += cost
        shown |= lines
    return chosen


def pack_grouped(
    items: Iterable[tuple[int, int, Hashable, frozenset[tuple[str, int]]]], budget: int
) -> list[int]:
    """:func:`pack` for hits rendered by group (:func:`grouped`): each item is (cost
    with its head, cost under the head of a chosen item of the same group, group,
    lines); an item costs the second once its group has a chosen item."""
    chosen: list[int] = []
    used = 0
    shown: set[tuple[str, int]] = set()
    groups: set[Hashable] = set()
    for i, (full, under, group, lines) in enumerate(items):
        cost = under if group in groups else full
        if used + cost > budget or lines & shown:
            continue
        chosen.append(i)
        used += cost
        shown |= lines
        groups.add(group)
    return chosen


def grouped(keys: Sequence[Hashable]) -> list[tuple[int, bool]]:
    """The order to render items in, grouped by key: groups in the order of their
    first item, items in their own order within a group; each with whether it
    continues its group (shown under the group's first item's head)."""
    slot: dict[Hashable, int] = {}
    groups: list[list[int]] = []
    for i, key in enumerate(keys):
        if key not in slot:
            slot[key] = len(groups)
            groups.append([])
        groups[slot[key]].append(i)
    return [(i, j > 0) for g in groups for j, i in enumerate(g)]


__all__ = ["Focus", "focus", "grouped", "line_scores", "pack", "pack_grouped"]
