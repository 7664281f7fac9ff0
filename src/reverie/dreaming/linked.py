"""The version links between a dream's promotions and MEMORY.md's entries, read from
the files (issue 38): which cited source line each promotion's source line replaces.

A promotion's source lines are read from their journal (or transcript) and resolved
with the workspace key; a verified ``replaces:`` link from an owner or agent line
(:mod:`reverie.provenance.links`) names an earlier line by path and text hash. The
lines MEMORY.md's entries cite are read the same way and keyed alike; where a link
names one, the promotion replaces that entry (:mod:`.current` marks it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ..provenance.links import line_key, may_replace
from ..provenance.markers import LineOrigin, resolve
from ..provenance.paths import classify
from ..recall.escalation.protocol import parse_anchor
from ..storage import reader
from ..storage.workspace import Workspace


class _Reader:
    """Each file read once, each line resolved with the key."""

    def __init__(self, ws: Workspace) -> None:
        self.ws, self.key = ws, ws.origin_key()
        self._files: dict[str, list[str]] = {}

    def lines(self, anchor: str) -> list[LineOrigin]:
        parsed = parse_anchor(anchor)
        if parsed is None:
            return []
        rel, a, b = parsed
        pclass = classify(rel)
        if not pclass.markers:
            return []
        if rel not in self._files:
            try:  # the one reader policy: a FIFO or a link out never blocks a dream
                self._files[rel] = reader.read_text(self.ws.root / rel, self.ws.root).split("\n")
            except OSError:
                self._files[rel] = []
        return [resolve(r, default=pclass.default_origin, ceiling=pclass.ceiling, key=self.key)
                for r in self._files[rel][a - 1 : b]]  # fmt: skip


class _Anchored(Protocol):
    @property
    def anchor(self) -> str: ...


def replaced(
    ws: Workspace, promoted: Iterable[_Anchored], cited: Iterable[str]
) -> dict[str, frozenset[str]]:
    """A promotion's anchor -> the cited anchors whose lines its lines replace."""
    read = _Reader(ws)
    links: dict[str, set[str]] = {}
    for anchor in (p.anchor for p in promoted):
        for lo in read.lines(anchor):
            if lo.replaces is not None:
                links.setdefault(lo.replaces, set()).add(anchor)
    out: dict[str, set[str]] = {}
    if not links:
        return {}
    for anchor in set(cited):
        for lo in read.lines(anchor):
            path = anchor.split("#", 1)[0]
            for newer in links.get(line_key(path, lo.text), ()):
                if all(may_replace(n.origin, lo.origin) for n in read.lines(newer)):
                    out.setdefault(newer, set()).add(anchor)
    return {k: frozenset(v) for k, v in out.items()}


__all__ = ["replaced"]
