"""The nightly dream (R-DREAM-1..11): light, REM, deep, then a safe write.

I/O lives here; the decisions are made by the pure modules next to it (phases,
signals, gates, consolidate, memory_file, report). The write itself goes through
:mod:`.safe_write` (R-DREAM-9).

The dreamer is given its collaborators explicitly (the workspace map, settings, the
clock, a reader of the recall log's evidence rows, the LLM or None, a re-index
callback): it never sees the facade.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..errors import ProviderError, ReverieError
from ..llm.base import LLM, Message
from ..provenance.redact import mask
from ..recall.evidence import RecallStats
from ..results import Accepted, Rejected
from ..settings import Settings
from ..storage.files import atomic_write
from ..storage.tombstones import Tombstones
from ..storage.workspace import Workspace
from . import archive, consolidate, current, linked
from .budget import fit, need_now
from .content import Judge
from .curate import OwnerPorts, OwnerPromotion, OwnerRejected
from .curate import promote as owner_promote
from .curate import reject as owner_reject
from .directives import UserModel
from .gates import GateConfig, decide
from .grounding import Parsed, ground, promotion
from .memory_file import anchors, clean_snippet, entries, normalise
from .phases import light, reflect, rem_themes
from .reflect import reflect_with
from .report import CandidateReport, DreamReport, change_summary, phase_report, rewrite_counts
from .safe_write import MemoryFile, sha
from .signals import Signals, compute_signals
from .state import DreamState, Promoted, StateFile

EvidenceReader = Callable[[], Sequence[RecallStats]]
LLMProvider = Callable[[], LLM | None]


class Dreamer:
    """Runs and explains dreams over one workspace.

    ``evidence`` reads the recall log's evidence rows; ``llm`` gives the consolidation
    model or None (deterministic append-only promotion, R-DREAM-11); ``reindex`` syncs
    the index after a write; ``enabled`` says whether dreaming is switched on.
    """

    def __init__(
        self,
        *,
        workspace: Workspace,
        settings: Settings,
        clock: Clock,
        evidence: EvidenceReader,
        llm: LLMProvider,
        reindex: Callable[[], object],
        enabled: Callable[[], bool],
        judge: Judge,
    ) -> None:
        self.ws = workspace
        self.settings = settings
        self.clock = clock
        self._evidence = evidence
        self._llm = llm
        self._reindex = reindex
        self._enabled = enabled
        self.judge = judge
        self.state_path = workspace.dream_state_path
        self.states = StateFile(self.state_path)
        self._need: dict[str, float] = {}  # source anchor -> its score now (the budget's)
        self.memory = MemoryFile(workspace, preimages_kept=settings.preimages_kept)
        self.preimage_dir = self.memory.preimage_dir
        self.memory_path = self.memory.path
        self.user = UserModel(
            workspace, preimages_kept=settings.preimages_kept, llm=llm, clock=clock
        )

    # -- state and the owner's hand -----------------------------------------------------
    def load_state(self) -> DreamState:
        return self.states.load()

    def _owner(self) -> OwnerPorts:
        return OwnerPorts(
            evaluate=self.evaluate,
            write=self._write_memory,
            memory=self.memory,
            states=self.states,
            tombstones=self.ws.tombstones_path,
            reindex_memory=self._reindex_memory,
            now=self.clock.now,
            judge=self.judge,
        )

    def promote(self, key: str) -> OwnerPromotion:
        """``reverie dream promote``: past the numeric gates (see :mod:`.curate`)."""
        return owner_promote(self._owner(), key)

    def reject(self, key: str) -> OwnerRejected:
        """``reverie dream reject``: never promoted, remembered across nights."""
        return owner_reject(self._owner(), key)

    # -- evaluation (no writes) --------------------------------------------------------
    def evaluate(
        self, now: datetime
    ) -> tuple[DreamReport, list[tuple[RecallStats, Signals | None]]]:
        report = DreamReport(
            at=now.isoformat(timespec="seconds"), enabled=self._enabled(), dry_run=True
        )
        state = self.states.load()
        raw = self._evidence()
        grounded: list[RecallStats] = []
        forgotten = Tombstones(self.ws.tombstones_path)
        parsed: Parsed = {}  # each source file parsed once per dream
        for s in raw:
            g, why = ground(self.ws, s, parsed)
            if g is not None and forgotten.blocks(g.snippet):
                g, why = None, "forgotten by the owner (`reverie forget`)"
            if g is None:
                report.dropped.append({"key": s.key, "reason": why})
            else:
                grounded.append(g)
        memory = self.memory.read()  # a bad byte reads replaced; run() will not rewrite it
        promoted_anchors = anchors(memory) | anchors(archive.read(self.ws))
        promoted_texts = {e.norm for e in entries(memory)}

        def promoted(s: RecallStats) -> bool:
            return (
                f"{s.path}#L{s.start_line}-L{s.end_line}" in promoted_anchors
                or s.key in state.promoted
                or normalise(clean_snippet(s.snippet)) in promoted_texts
            )

        self._need = need_now(grounded, now) | state.recent(now)  # a month's stay
        self.judge.prime([clean_snippet(g.snippet) for g in grounded])
        lr = light(grounded, now=now, judge=self.judge, promoted=promoted)
        report.staged = len(lr.staged)
        report.dropped += [{"key": d.key, "reason": d.reason} for d in lr.dropped]
        themes = rem_themes(lr.staged, now=now)
        report.themes = [asdict(t) for t in themes]
        report.reflections = reflect(themes)
        rem_members = Counter(k for t in themes for k in t.keys)
        report.warnings += [
            f"{p}: read with that byte replaced; no dream rewrites the file until it is fixed"
            for p in self._unwritable()
        ]
        cfg = GateConfig.from_settings(self.settings)
        decisions: list[tuple[RecallStats, Signals | None]] = []
        for s in lr.staged:
            s = replace(
                s,
                light_hits=state.light_hits.get(s.key, 0) + 1,
                rem_hits=state.rem_hits.get(s.key, 0) + rem_members.get(s.key, 0),
            )
            signals = compute_signals(s, now)
            anchor = f"{s.path}#L{s.start_line}-L{s.end_line}"
            already = promoted(s)
            outcome = decide(
                s, signals, now=now, judge=self.judge, already_promoted=already, config=cfg
            )
            if state.owner_rejected(s.key, s.snippet):  # the owner's no outranks every gate
                shown = outcome.value if isinstance(outcome, Accepted) else outcome.detail["gates"]
                outcome = Rejected("owner", "rejected by the owner", {"gates": shown})
            match outcome:
                case Accepted(value=gates):
                    reason = "passed every gate"
                case Rejected(reason=reason, detail=detail):
                    gates = detail.get("gates", [])
            report.candidates.append(
                CandidateReport(
                    key=s.key,
                    source=anchor,
                    snippet=s.snippet,
                    origin=s.origin.value if s.origin else None,
                    session_kind=s.session_kind.value if s.session_kind else None,
                    score=round(signals.score, 4),
                    signals={k: round(v, 4) for k, v in signals.as_dict().items()},
                    gates=[asdict(g) for g in gates],
                    decision="promote" if outcome.ok else "reject",
                    reason=reason,
                )
            )
            decisions.append((s, signals) if outcome.ok else (s, None))
        return report, decisions

    # -- the run -----------------------------------------------------------------------
    def run(self, *, dry_run: bool = False) -> DreamReport:
        now = self.clock.now()
        if not dry_run and not self._enabled():
            return DreamReport(
                at=now.isoformat(timespec="seconds"),
                enabled=False,
                dry_run=False,
                fallback_reason="dreaming is off; nothing read or written",
            )
        if not dry_run:
            self._repair()
        report, decisions = self.evaluate(now)
        winners = sorted(
            ((s, sig) for s, sig in decisions if sig is not None), key=lambda x: -x[1].score
        )
        winners = winners[: self.settings.dream_max_promotions]
        for s, _sig in winners:
            report.promoted.append(s.key)
        if dry_run:  # R-DREAM-10: the preview also says which would go to USER.md
            made = [promotion(s, g.score, self.judge) for s, g in winners]
            _, user = self.user.take_from_dream(made, True)
            report.directives = user.changes
            return report
        report.dry_run = False
        state = self.states.load()
        if report.themes:
            report.reflections = self._reflect(report)
        for c in report.candidates:
            state.light_hits[c.key] = state.light_hits.get(c.key, 0) + 1
        for t in report.themes:
            for k in t["keys"]:
                state.rem_hits[k] = state.rem_hits.get(k, 0) + 1
        corpus = [s.snippet for s, _ in decisions] + [e.text for e in entries(self.memory.read())]
        promotions = [promotion(s, sig.score, self.judge, corpus) for s, sig in winners]
        if promotions and self._unwritable():  # never rewrite what cannot round-trip
            report.warnings.append("nothing promoted tonight: see the invalid UTF-8 above")
            report.promoted, promotions = [], []
        to_memory, user = self.user.take_from_dream(promotions)  # the owner's directives
        report.directives = user.changes + [{"refused": True, **r} for r in user.refused]
        if to_memory:
            self._write_memory(to_memory, report)
        for p in promotions:
            if p.key in report.promoted:  # (the budget may have refused some)
                state.promoted[p.key] = Promoted(report.at, p.anchor)
        state.last_run = report.at
        self.states.save(state)
        self._write_phase_report(report)
        if promotions:  # MEMORY.md or USER.md changed
            try:
                self._reindex_memory()
            except ReverieError as exc:
                report.warnings.append(f"re-index after the dream failed: {exc}")
        return report

    def _unwritable(self) -> list[str]:
        """Why MEMORY.md or USER.md cannot be rewritten byte-exactly (bad UTF-8)."""
        return [p for p in (self.memory.problem(), self.user.file.problem()) if p]

    def _repair(self) -> None:
        """What a dream killed mid-way left: temp files, a change without its DREAMS.md
        summary (the intent record), and an index older than MEMORY.md."""
        self.memory.recover()
        if self.memory_path.exists():
            with contextlib.suppress(ReverieError):
                if self.states.load().indexed_memory != sha(self.memory.read()):
                    self._reindex_memory()

    def _reindex_memory(self) -> None:
        """Re-index, then record which MEMORY.md the index holds."""
        text = self.memory.read()
        self._reindex()
        state = self.states.load()
        state.indexed_memory = sha(text)
        self.states.save(state)

    def _reflect(self, report: DreamReport) -> list[str]:
        """REM reflections by the configured model, else the deterministic summaries."""
        return reflect_with(self._llm(), report, timeout=self.settings.llm_timeout)

    # -- writing -----------------------------------------------------------------------
    def _read_memory(self) -> str:
        return self.memory.read()

    def _write_memory(self, promotions: list[consolidate.Promotion], report: DreamReport) -> None:
        old = self._read_memory()
        model = self._llm()
        if model is None:
            report.fallback_reason = "no model configured: append-only promotion"
            return self._append_only(promotions, report)
        # what a promotion's line replaces is marked first, so the model keeps the history
        links = linked.replaced(self.ws, promotions, anchors(old))
        marked, superseded = current.premark(old, promotions, links)
        rewrite = self._consolidate(model, marked, promotions, report)
        if rewrite is not None:
            counts = rewrite_counts(
                {e.norm for e in entries(marked)},
                {e.norm for e in entries(rewrite)},
                added=len(promotions),
                model_ops=report.counts.get("model_ops", 0),
                superseded=len(superseded),
            )
            why = [x.summary() for x in superseded]
            planned = replace(report, mode="rewrite", counts=counts, superseded=why)
            if self.memory.commit(sha(old), rewrite, change_summary(planned, old, rewrite)):
                report.mode, report.counts, report.superseded = "rewrite", counts, why
                return None
            report.fallback_reason = (
                "MEMORY.md was edited during the dream: rewrite dropped, append-only"
            )
        return self._append_only(promotions, report)

    def _consolidate(
        self, model: LLM, old: str, promotions: list[consolidate.Promotion], report: DreamReport
    ) -> str | None:
        budget = self.settings.memory_max_chars
        system, user = consolidate.build_prompt(old, promotions, budget)
        masked = mask(user)  # the model never sees the values; its rewrite gets them back
        try:
            reply = model.complete(
                [Message("user", masked.text)],
                system=system,
                json_schema=consolidate.SCHEMA,
                timeout=self.settings.llm_timeout,
                max_tokens=4096,
            )
        except ProviderError as exc:
            report.fallback_reason = f"consolidation turn failed ({exc}): append-only"
            return None
        data = masked.restore_data(reply.data)
        match consolidate.check_rewrite(old, data, promotions, budget=budget):
            case Accepted(value=text):
                report.counts["model_ops"] = len((reply.data or {}).get("operations", []))
                return text
            case Rejected(code=code, reason=why):
                report.fallback_reason = f"rewrite rejected: {code}: {why}: append-only"
                return None
        return None  # unreachable: the outcome is Accepted or Rejected

    def _append_only(self, promotions: list[consolidate.Promotion], report: DreamReport) -> None:
        """Promote within ``memory_max_chars`` (R-DREAM-Q2, :mod:`.budget`, :mod:`.linked`): what
        a new entry displaces goes to the archive first, so nothing is lost if we die here."""
        budget = self.settings.memory_max_chars
        for _attempt in range(5):
            links = linked.replaced(self.ws, promotions, anchors(current := self._read_memory()))
            fitted = fit(current, promotions, budget, self._need, links, self.judge.keep)
            if fitted.refused:  # not promoted: a candidate again on another night
                report.promoted = [k for k in report.promoted if k not in fitted.refused]
                report.warnings.append(
                    f"MEMORY.md is full ({budget} chars): {len(fitted.refused)} candidate(s) "
                    "did not beat its weakest entry"
                )
            if fitted.text == current:
                return
            archive.add(self.ws, fitted.archived, report.at[:10])
            counts = {"added": len(fitted.added), "merged": fitted.merged}
            counts["superseded"] = len(fitted.superseded)
            counts["archived"] = len(fitted.archived)
            why = [s.summary() for s in fitted.superseded]
            planned = replace(report, mode="append-only", counts=counts, superseded=why)
            new = fitted.text
            if not self.memory.commit(sha(current), new, change_summary(planned, current, new)):
                continue  # edited between read and write: read again, never overwrite
            report.mode, report.counts, report.superseded = "append-only", counts, why
            return
        report.warnings.append("MEMORY.md kept changing; promotion postponed to the next dream")

    def preimages(self) -> list[Path]:
        return self.memory.preimages()

    def restore(self, name: str | None = None) -> Path:
        """Put a pre-image back (the newest by default); the current file becomes one."""
        chosen = self.memory.restore(name)
        self._reindex()
        return chosen

    def _write_phase_report(self, report: DreamReport) -> None:
        day = report.at[:10]
        atomic_write(self.ws.dream_reports_dir / f"{day}.md", phase_report(report))

    def explain(self, key: str) -> dict[str, Any]:
        """Every signal and every gate for one candidate (by key or source anchor)."""
        report, _ = self.evaluate(self.clock.now())
        for c in report.candidates:
            if key in (c.key, c.source):
                return asdict(c)
        for d in report.dropped:
            if d["key"] == key:
                return {
                    "key": key,
                    "decision": "reject",
                    "reason": d["reason"],
                    "gates": [],
                    "signals": {},
                }
        raise ReverieError(
            f"{key}: not in the candidate pool (never recalled, or recalled only below the min score)"
        )


__all__ = ["CandidateReport", "DreamReport", "Dreamer", "EvidenceReader", "LLMProvider"]
