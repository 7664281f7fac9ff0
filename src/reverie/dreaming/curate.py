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

Both are recorded in DREAMS.md and in the dream state (state dir).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import ReverieError
from ..recall.evidence import RecallStats
from ..storage.tombstones import Tombstones
from .gates import GATE_ALREADY_PROMOTED, GATE_JUNK, GATE_PROVENANCE
from .grounding import promotion
from .memory_file import clean_snippet, entries, normalise

if TYPE_CHECKING:
    from .report import CandidateReport
    from .runner import Dreamer

OWNER_GATES = (GATE_PROVENANCE, GATE_JUNK, GATE_ALREADY_PROMOTED)  # never waived


def content_hash(snippet: str) -> str:
    return hashlib.sha256(normalise(clean_snippet(snippet)).encode("utf-8")).hexdigest()[:32]


def owner_rejected(state: dict[str, Any], s: RecallStats) -> bool:
    """The owner rejected this candidate (by key, or its content on another line)."""
    rejected = state.get("rejected", {})
    if s.key in rejected:
        return True
    h = content_hash(s.snippet)
    return any(v.get("content") == h for v in rejected.values() if isinstance(v, dict))


def _find(dreamer: Dreamer, key: str) -> tuple[CandidateReport, RecallStats, Any]:
    report, decisions = dreamer.evaluate(dreamer.clock.now())
    for cand, (s, _sig) in zip(report.candidates, decisions, strict=True):
        if key in (cand.key, cand.source):
            return cand, s, report
    for d in report.dropped:
        if d["key"] == key:
            raise ReverieError(f"{key}: refused: {d['reason']}")
    raise ReverieError(f"{key}: not in the candidate pool (see `reverie dream preview`)")


def promote(dreamer: Dreamer, key: str) -> dict[str, Any]:
    """Promote ``key`` now, past the numeric gates; refused (with the reason) when a
    gate the owner cannot waive fails."""
    cand, s, report = _find(dreamer, key)
    for g in cand.gates:
        if g["name"] in OWNER_GATES and not g["passed"]:
            raise ReverieError(f"{cand.source}: refused: {g['reason']}")
    if Tombstones(dreamer.ws.tombstones_path).blocks(s.snippet):
        raise ReverieError(f"{cand.source}: refused: forgotten by the owner")
    memory = dreamer.memory.read()
    corpus = [s.snippet] + [e.text for e in entries(memory)]
    p = promotion(s, cand.score, corpus)
    run = replace(report, dry_run=False, promoted=[s.key], candidates=[cand])
    dreamer._write_memory([p], run)
    state = dreamer.load_state()
    state.get("rejected", {}).pop(s.key, None)
    state["promoted"][s.key] = {"at": run.at, "source": p.anchor, "by": "owner"}
    dreamer._save_state(state)
    waived = [g["reason"] for g in cand.gates if g["name"] not in OWNER_GATES and not g["passed"]]
    note = "; ".join(waived) or "every gate passed anyway"
    dreamer.memory.append_dreams(
        f"## {run.at} · owner promote\n\n- {p.anchor} promoted by the owner "
        f"(`reverie dream promote`); numeric gates waived: {note}\n"
    )
    dreamer._reindex_memory()
    return {
        "key": s.key,
        "source": p.anchor,
        "entry": p.rendered,
        "mode": run.mode,
        "waived": waived,
        "warnings": run.warnings,
    }


def reject(dreamer: Dreamer, key: str) -> dict[str, Any]:
    """Never promote ``key``; remembered across nights."""
    cand, s, report = _find(dreamer, key)
    state = dreamer.load_state()
    state.setdefault("rejected", {})[s.key] = {
        "at": report.at,
        "source": cand.source,
        "content": content_hash(s.snippet),
    }
    dreamer._save_state(state)
    dreamer.memory.append_dreams(
        f"## {report.at} · owner reject\n\n- {cand.source} rejected by the owner "
        "(`reverie dream reject`): never promoted\n"
    )
    return {"key": s.key, "source": cand.source, "rejected": True}


__all__ = ["OWNER_GATES", "content_hash", "owner_rejected", "promote", "reject"]
