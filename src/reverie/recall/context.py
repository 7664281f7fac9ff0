"""Turn context: what to inject for one message (bootstrap + trigger block).

Zero model calls. Trigger entries are loaded once per index version and kept with a
word index, so each message costs one FTS query plus a few dictionary look-ups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..storage.index.memfts import MemoryFts
from ..tokens import fts_query, is_cjk, keyword_body, terms
from .trigger_snapshot import Raw, Snapshot, TriggerSnapshot
from .triggers import (
    Message,
    TriggerEntry,
    TriggerHit,
    bm25_normalise,
    entry_score,
    phrase_pattern,
    render_block,
    select,
)

if TYPE_CHECKING:
    from ..settings import Settings
    from ..storage.index.trigger_rows import TriggerRow
    from .boot import Bootstrap


class TriggerSource(Protocol):
    """Where trigger entries come from (the index): a version that changes whenever
    the index does, and the trigger-carrying curated rows."""

    def version(self) -> str: ...

    def rows(self) -> list[TriggerRow]: ...


@runtime_checkable
class RawTriggerSource(TriggerSource, Protocol):
    """A source that also gives its rows unparsed (what a snapshot is keyed on)."""

    def raw(self) -> list[Raw]: ...

    def row(self, raw: Raw) -> TriggerRow: ...


class TriggerIndex:
    """Trigger-carrying curated entries, kept in memory per index version, with a word
    index for the prefilter and a small in-memory FTS5 table for the lexical relevance:
    only these entries can ever fire, so searching the whole index for every inbound
    message would be wasted work.

    With a ``snapshot`` path, a build is also written there, and a one-shot process
    (no ``precompile``) reads the parts from that file instead of building them when it
    holds these very rows (:mod:`reverie.recall.trigger_snapshot`): the same entries,
    words and FTS5 table, so the same hits."""

    def __init__(self, snapshot: Path | None = None) -> None:
        self._version: str | None = None
        self.entries: Mapping[int, TriggerEntry] = {}
        self._by_word: Mapping[str, Sequence[int]] = defaultdict(list)
        self._cjk_terms: Mapping[str, Sequence[int]] = defaultdict(list)
        self._fts = MemoryFts()
        self._disk = TriggerSnapshot(snapshot) if snapshot is not None else None
        self._open: Snapshot | None = None

    def refresh(self, source: TriggerSource, *, precompile: bool = False) -> None:
        version = source.version()
        if version == self._version:
            return
        if self._disk is None or not isinstance(source, RawTriggerSource):
            self._build(source.rows(), precompile=precompile)
            self._version = version
            return
        raw = source.raw()
        found = None if precompile else self._disk.open(raw, source.row)
        self.close()
        if found is not None:  # a one-shot process: the build, read from the file
            self.entries, self._by_word, self._cjk_terms = found.entries, found.words, found.cjk
            self._open, self._fts, self._version = found, found.fts, version
            return
        self._build([source.row(r) for r in raw], precompile=precompile)
        self._version = version
        self._disk.save(raw, self._fts, self._by_word, self._cjk_terms)

    def close(self) -> None:
        """Let go of the snapshot file, if one is open."""
        if self._open is not None:
            self._open.close()
            self._open, self._fts, self._version = None, MemoryFts(), None

    def _build(self, rows: Sequence[TriggerRow], *, precompile: bool) -> None:
        entries: dict[int, TriggerEntry] = {}
        by_word: dict[str, list[int]] = defaultdict(list)
        cjk: dict[str, list[int]] = defaultdict(list)
        for entry in rows:  # a trigger row is the entry trigger scoring reads
            entries[entry.chunk_id] = entry
            for phrase in entry.phrases:
                if precompile:  # a warm process pays once; a one-shot call only for hits
                    phrase_pattern(phrase)
                for t in terms(phrase):
                    (cjk if is_cjk(t[0]) else by_word)[t].append(entry.chunk_id)
        self.entries, self._by_word, self._cjk_terms = entries, by_word, cjk
        self._fts.replace((cid, keyword_body(e.text)) for cid, e in entries.items())

    def lexical(self, message: str, k: int) -> dict[int, float]:
        """Lexical-only relevance (vectors off) of trigger entries to ``message``."""
        match = fts_query(message)
        if match is None:
            return {}
        return {cid: bm25_normalise(r) for cid, r in self._fts.search(match, k)}

    def prefilter(self, message: str) -> set[int]:
        msg = Message.of(message)
        ids: set[int] = set()
        for w in msg.words:
            ids.update(self._by_word.get(w, ()))
        for t, cids in self._cjk_terms.items():
            if t in msg.lower:
                ids.update(cids)
        return ids


class TurnContext:
    """What to inject for one message: the bootstrap, fired triggers, what degraded."""

    def __init__(self, message: str, bootstrap: Bootstrap) -> None:
        self.message = message
        self.bootstrap = bootstrap
        self.trigger_hits: list[TriggerHit] = []
        self.trigger_block = ""
        self.degraded: list[str] = []
        # filled by the later steps of a turn (each one leaves them empty when it has nothing)
        self.escalation: dict[str, Any] | None = None  # the escalation lane's report
        self.escalation_block = ""  # (R-LANE2-1..3)
        self.intents: list[dict[str, Any]] = []  # fired standing intents
        self.intent_block = ""
        self.directives: list[dict[str, Any]] = []  # USER.md, restated
        self.directive_block = ""

    @property
    def blocks(self) -> tuple[str, ...]:
        """The injected blocks in order; the directives come last, right beside the
        user's message (a preference restated next to the question is followed)."""
        return (
            self.bootstrap.text,
            self.trigger_block,
            self.escalation_block,
            self.intent_block,
            self.directive_block,
        )

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in self.blocks if p)

    def as_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "text": self.text,
            "bootstrap": self.bootstrap.as_dict(),
            "trigger_block": self.trigger_block,
            "triggers": [
                {
                    "source": f"{h.entry.path}#L{h.entry.start_line}-L{h.entry.end_line}",
                    "text": h.entry.text,
                    "phrase": h.phrase,
                    "trigger_score": round(h.trigger_score, 4),
                    "relevance": round(h.relevance, 4),
                    "combined": round(h.combined, 4),
                }
                for h in self.trigger_hits
            ],
            "escalation": self.escalation,
            "intents": self.intents,
            "directives": self.directives,
            "degraded": self.degraded,
        }


def trigger_hits(
    source: TriggerSource,
    index: TriggerIndex,
    message: str,
    *,
    active_projects: frozenset[str],
    max_candidates: int,
    threshold: float,
    top: int,
) -> list[TriggerHit]:
    """R-TRIG-1..6: lexical-only candidates unioned with trigger-carrying curated
    entries (at most ``max_candidates``), then eligibility, scoring, threshold, top."""
    index.refresh(source)
    lexical = index.lexical(message, max_candidates)
    msg = Message.of(message)
    pool = (set(lexical) | index.prefilter(message)) & index.entries.keys()
    # the cap keeps the entries whose trigger words the message holds: a lexical hit
    # without one could never fire, and must not push out one that can
    ids = sorted(
        pool,
        key=lambda cid: (-entry_score(index.entries[cid], msg)[0], -lexical.get(cid, 0.0), cid),
    )[:max_candidates]
    candidates = [(index.entries[cid], lexical.get(cid, 0.0)) for cid in ids]
    return select(
        candidates, message, active_projects=active_projects, threshold=threshold, top=top
    )


def add_triggers(
    ctx: TurnContext,
    source: TriggerSource,
    index: TriggerIndex,
    settings: Settings,
    active_projects: frozenset[str],
) -> None:
    """Fire the triggers for ``ctx.message`` with the settings' thresholds, and render
    the hidden block (R-TRIG-1..6)."""
    s = settings
    ctx.trigger_hits = trigger_hits(
        source,
        index,
        ctx.message,
        active_projects=active_projects,
        max_candidates=s.trigger_candidates,
        threshold=s.trigger_threshold,
        top=s.trigger_top,
    )
    ctx.trigger_block = render_block(ctx.trigger_hits, s.trigger_block_chars)


__all__ = [
    "TriggerIndex",
    "TriggerSource",
    "TurnContext",
    "add_triggers",
    "render_block",
    "trigger_hits",
]
