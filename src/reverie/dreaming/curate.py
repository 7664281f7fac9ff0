"""The owner's hand in dreaming: ``reverie dream promote KEY`` and ``dream reject KEY``.

- **promote**: the owner vouches that a candidate matters, so the *numeric* gates
  (recall count, distinct queries, age, score) are waived. Everything else still holds:
  the provenance (taint) gate, the junk gate, "already promoted", the tombstones of
  what the owner forgot, and the acceptance checks of the write itself (a model
  rewrite is checked as in a dream, else append-only). An untrusted candidate is
  refused, with the gate's reason: not even the owner's click turns external text
  into long-term memory (copy it into MEMORY.md by hand if you mean it).
- **reject**: the candidate is never promoted, remembered across nights by its key
  and by a hash of its content (so it stays rejected when its line moves).

Both are recorded in DREAMS.md and in the dream state (state dir). The functions get
their collaborators as :class:`OwnerPorts` (the :class:`reverie.dreaming.runner.Dreamer`
builds them and exposes ``promote``/``reject``); they never see the Dreamer itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import ReverieError
from ..recall.evidence import RecallStats
from ..storage.tombstones import Tombstones
from .consolidate import Promotion
from .content import Judge
from .gates import GATE_ALREADY_PROMOTED, GATE_JUNK, GATE_PROVENANCE
from .grounding import promotion
from .memory_file import entries
from .report import CandidateReport, DreamReport
from .safe_write import MemoryFile
from .signals import Signals
from .state import OwnerRejection, Promoted, StateFile, content_hash

OWNER_GATES = (GATE_PROVENANCE, GATE_JUNK, GATE_ALREADY_PROMOTED)  # never waived

Evaluation = tuple[DreamReport, Sequence[tuple[RecallStats, Signals | None]]]


@dataclass(frozen=True)
class OwnerPorts:
    """What the owner's verbs need from the dreamer, given explicitly."""

    evaluate: Callable[[datetime], Evaluation]
    write: Callable[[list[Promotion], DreamReport], None]
    memory: MemoryFile
    states: StateFile
    tombstones: Path
    reindex_memory: Callable[[], None]
    now: Callable[[], datetime]
    judge: Judge


@dataclass(frozen=True)
class OwnerPromotion:
    """A candidate the owner promoted: its entry as written and the gates waived."""

    key: str
    source: str
    entry: str
    mode: str
    waived: tuple[str, ...]
    warnings: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "entry": self.entry,
            "mode": self.mode,
            "waived": list(self.waived),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class OwnerRejected:
    """A candidate the owner rejected: never promoted."""

    key: str
    source: str

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "source": self.source, "rejected": True}


def _find(ports: OwnerPorts, key: str) -> tuple[CandidateReport, RecallStats, DreamReport]:
    report, decisions = ports.evaluate(ports.now())
    for cand, (s, _sig) in zip(report.candidates, decisions, strict=True):
        if key in (cand.key, cand.source):
            return cand, s, report
    for d in report.dropped:
        if d["key"] == key:
            raise ReverieError(f"{key}: refused: {d['reason']}")
    raise ReverieError(f"{key}: not in the candidate pool (see `reverie dream preview`)")


def promote(ports: OwnerPorts, key: str) -> OwnerPromotion:
    """Promote ``key`` now, past the numeric gates; refused (with the reason) when a
    gate the owner cannot waive fails."""
    cand, s, report = _find(ports, key)
    for g in cand.gates:
        if g["name"] in OWNER_GATES and not g["passed"]:
            raise ReverieError(f"{cand.source}: refused: {g['reason']}")
    if Tombstones(ports.tombstones).blocks(s.snippet):
        raise ReverieError(f"{cand.source}: refused: forgotten by the owner")
    corpus = [s.snippet] + [e.text for e in entries(ports.memory.read())]
    p = promotion(s, cand.score, ports.judge, corpus)
    run = replace(report, dry_run=False, promoted=[s.key], candidates=[cand])
    ports.write([p], run)
    state = ports.states.load()
    state.rejected.pop(s.key, None)
    state.promoted[s.key] = Promoted(run.at, p.anchor, by="owner")
    ports.states.save(state)
    waived = [g["reason"] for g in cand.gates if g["name"] not in OWNER_GATES and not g["passed"]]
    note = "; ".join(waived) or "every gate passed anyway"
    ports.memory.append_dreams(
        f"## {run.at} · owner promote\n\n- {p.anchor} promoted by the owner "
        f"(`reverie dream promote`); numeric gates waived: {note}\n"
    )
    ports.reindex_memory()
    return OwnerPromotion(s.key, p.anchor, p.rendered, run.mode, tuple(waived), tuple(run.warnings))


def reject(ports: OwnerPorts, key: str) -> OwnerRejected:
    """Never promote ``key``; remembered across nights."""
    cand, s, report = _find(ports, key)
    state = ports.states.load()
    state.rejected[s.key] = OwnerRejection(report.at, cand.source, content_hash(s.snippet))
    ports.states.save(state)
    ports.memory.append_dreams(
        f"## {report.at} · owner reject\n\n- {cand.source} rejected by the owner "
        "(`reverie dream reject`): never promoted\n"
    )
    return OwnerRejected(s.key, cand.source)


__all__ = [
    "OWNER_GATES",
    "OwnerPorts",
    "OwnerPromotion",
    "OwnerRejected",
    "content_hash",
    "promote",
    "reject",
]
