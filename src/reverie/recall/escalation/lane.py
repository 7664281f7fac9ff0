"""The escalation lane (R-LANE2-1..3): gates, one bounded sub-agent turn, a deadline
the caller enforces, a short cache. Fills ``TurnContext.escalation`` and
``escalation_block``.

Why it cannot wedge a reply (P5, and OpenClaw's tracker): the caller runs everything
after the cheap gates in a daemon worker thread and stops waiting at the deadline,
whatever the provider does with its own timeout; the worker holds no lock while it
waits on the model (lane-1 search takes the facade's lock for the search alone); two
turns asking the same thing share one run, and at most :data:`MAX_RUNNING` runs exist
at once, so a hung provider costs threads, never a reply. Timeouts, provider errors,
a broken search and empty results all come back as a report saying why, with no
recalled context.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import ProviderError, ProviderTimeout
from ...settings import Settings
from .gates import Gate, no_strong_hit, recall_intent
from .privacy import Target, Turn, target_gate
from .report import Report

if TYPE_CHECKING:  # the worker's side loads them when a lane first runs: a one-shot
    # hook with the lane off (the default) only decides the gates
    from ...llm.base import LLM
    from ...llm.factory import Purpose
    from ...storage.workspace import Workspace
    from ..context import TurnContext
    from ..search import SearchResponse
    from .protocol import Answer
    from .sources import Sources

MAX_RUNNING = 4
RESULT_CHARS = 4000  # what one step shows the model


@dataclass
class _Run:
    done: threading.Event = field(default_factory=threading.Event)
    report: Report | None = None


class LaneHost(Protocol):
    """What the lane needs from its host (the facade implements it)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def workspace(self) -> Workspace: ...

    def search(
        self, query: str, *, max_results: int | None = None, record: bool = True
    ) -> SearchResponse: ...

    def llm(self, purpose: Purpose = "main") -> LLM | None: ...


class EscalationLane:
    """The lane for one engine: ports in, reports out (never raises for a memory or
    provider failure). ``sealed(header, key)`` proves a transcript header was written
    by the session API (:func:`reverie.write.transcript.is_sealed`)."""

    def __init__(
        self,
        host: LaneHost,
        *,
        sealed: Callable[[Mapping[str, Any], bytes], bool],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.host = host
        self._sealed = sealed
        self._now = monotonic
        self._mu = threading.Lock()  # guards the two dicts below; never held while waiting
        self._cache: dict[tuple[str, str], tuple[float, Report]] = {}
        self._running: dict[tuple[str, str], _Run] = {}

    @property
    def settings(self) -> Settings:
        return self.host.settings

    def _llm(self) -> LLM | None:
        return self.host.llm("main")

    def _sources(self, skip: frozenset[str] = frozenset()) -> Sources:
        from .sources import Sources

        ws = self.host.workspace
        key = ws.origin_key()
        return Sources(
            ws,
            lambda q, n: self.host.search(q, max_results=n, record=False),
            lambda header: self._sealed(header, key),
            max_results=self.settings.escalation_results,
            skip=skip,
        )

    # -- the caller's side ---------------------------------------------------------------
    def fill(self, ctx: TurnContext, target: Target | None = None) -> Report:
        """Decide and (maybe) run the lane for ``ctx.message``; fill ``ctx``. Never
        raises (P5): a failure of the lane itself is reported and noted in
        ``ctx.degraded``."""
        try:
            report = self.report(ctx.message, target or Target(), len(ctx.trigger_hits))
        except Exception as exc:
            report = Report("error", f"escalation failed: {type(exc).__name__}: {exc}")
            ctx.degraded.append(f"escalation skipped: {report.reason}")
        ctx.escalation = report.as_dict()
        ctx.escalation_block = report.block if report.status == "answered" else ""
        return report

    def report(self, message: str, target: Target, triggers_fired: int) -> Report:
        start = self._now()
        s = self.settings
        deadline = start + float(s.escalation_timeout)
        gates = [target_gate(target)]  # cheap, so --explain shows them even when off
        if gates[0].passed:
            gates.append(recall_intent(message))
        if gates[-1].passed and triggers_fired:
            gates.append(no_strong_hit(triggers_fired, None, s.escalation_strong_relevance))
        if not s.escalation:
            off = "the escalation lane is off (setting escalation)"
            return self._done(Report("skipped", off, gates=gates), start)
        if not gates[-1].passed:
            return self._done(Report("skipped", gates[-1].reason, gates=gates), start)
        try:
            llm = self._llm()
        except Exception as exc:  # a misconfigured provider: say so, reply anyway
            return self._done(Report("error", f"no LLM: {exc}", gates=gates), start)
        if llm is None:
            return self._done(
                Report("skipped", "no LLM configured (setting llm)", gates=gates), start
            )
        key = (target.session_id or "", message)
        run, fresh = self._join_or_start(key)
        if run is None:
            if fresh is not None:
                return replace(fresh, cached=True)
            return self._done(
                Report("skipped", f"{MAX_RUNNING} escalation lanes still running", gates=gates),
                start,
            )
        if fresh is not None:  # this call started the run
            thread = threading.Thread(
                target=self._work,
                args=(run, key, llm, message, target, gates, deadline, start),
                name="reverie-escalation",
                daemon=True,
            )
            thread.start()
        if run.done.wait(timeout=max(0.0, deadline - self._now())) and run.report is not None:
            return run.report
        report = self._done(
            Report(
                "timeout",
                f"no answer within {s.escalation_timeout:g} s: the reply goes on without "
                "recalled context",
                gates=list(gates),
            ),
            start,
        )
        self._remember(key, report, overwrite=False)  # a late answer that came first stays
        return report

    def _join_or_start(self, key: tuple[str, str]) -> tuple[_Run | None, Report | None]:
        """(run to wait on, None) when one is running; (None, cached report) from the
        cache; (new run, placeholder) when this call must start it; (None, None) when
        too many runs are still going."""
        now = self._now()
        ttl = float(self.settings.escalation_cache_seconds)
        with self._mu:
            for k in [k for k, (t, _) in self._cache.items() if now - t > ttl]:
                del self._cache[k]
            if key in self._cache:
                return None, self._cache[key][1]
            if key in self._running:
                return self._running[key], None
            if len(self._running) >= MAX_RUNNING:
                return None, None
            run = self._running[key] = _Run()
        return run, Report("skipped", "started")

    def _remember(self, key: tuple[str, str], report: Report, *, overwrite: bool = True) -> None:
        if self.settings.escalation_cache_seconds > 0:
            with self._mu:
                if overwrite or key not in self._cache:
                    self._cache[key] = (self._now(), report)

    def _done(self, report: Report, start: float) -> Report:
        report.elapsed_ms = (self._now() - start) * 1000
        return report

    # -- the worker's side ---------------------------------------------------------------
    def _work(
        self,
        run: _Run,
        key: tuple[str, str],
        llm: LLM,
        message: str,
        target: Target,
        gates: list[Gate],
        deadline: float,
        start: float,
    ) -> None:
        from .sources import SearchUnavailable

        report = Report("error", "the lane did not finish", gates=list(gates))
        sources: Sources | None = None
        try:
            sources = self._sources(frozenset(t.text for t in turns_of(target, message)))
            self._turn(report, sources, llm, message, target, deadline)
        except ProviderTimeout as exc:
            report.status, report.reason = "timeout", f"provider timed out: {exc}"
        except ProviderError as exc:
            report.status, report.reason = "error", f"provider error: {exc}"
        except SearchUnavailable as exc:
            report.status, report.reason = "error", f"search unavailable: {exc}"
        except Exception as exc:  # P5: never let the lane's failure reach the reply
            report.status = "error"
            report.reason = f"the lane failed: {type(exc).__name__}: {exc}"
        report.refused = dict(sources.refused) if sources is not None else {}
        self._done(report, start)
        self._remember(key, report)
        with self._mu:
            self._running.pop(key, None)
        run.report = report
        run.done.set()

    def _turn(
        self,
        report: Report,
        sources: Sources,
        llm: LLM,
        message: str,
        target: Target,
        deadline: float,
    ) -> None:
        from ...llm.base import Message
        from ...provenance.redact import for_model  # every line the lane's model reads
        from .protocol import (
            STEP_SCHEMA,
            SYSTEM,
            Seen,
            check_answer,
            first_prompt,
            render_results,
            steps_note,
            validate_step,
        )

        s = self.settings
        segments, response = sources.search(message)
        best = max((h.relevance for h in response.hits), default=0.0)
        gate = no_strong_hit(0, best, s.escalation_strong_relevance)
        report.gates.append(gate)
        if not gate.passed:
            report.status, report.reason = "skipped", gate.reason
            return
        seen = Seen()
        seen.add(segments)
        steps = int(s.escalation_max_steps)
        chars = int(s.escalation_summary_chars)
        system = SYSTEM.replace("{chars}", str(chars))
        prompt = first_prompt(turns_of(target, message), segments, RESULT_CHARS)
        messages = [Message("user", for_model(prompt) + steps_note(steps))]
        for left in range(steps, 0, -1):
            remaining = deadline - self._now()
            if remaining <= 0:
                raise ProviderTimeout(llm.name, "the lane's deadline passed", transient=True)
            reply = llm.complete(
                messages, system=system, json_schema=STEP_SCHEMA, timeout=remaining, max_tokens=400
            )
            report.model_calls += 1
            step = validate_step(reply.data, llm.name)
            if step.action == "answer":
                self._answer(report, check_answer(step, seen, max_chars=chars))
                return
            if step.action == "none":
                report.status = "skipped"
                report.reason = "empty result: " + (step.reason or "nothing relevant found")
                report.steps.append({"action": "none", "reason": step.reason})
                return
            if left == 1:
                raise ProviderError(llm.name, f"no answer within {steps} step(s)", transient=False)
            if self._now() >= deadline:  # the caller has gone: touch the engine no more
                raise ProviderTimeout(llm.name, "the lane's deadline passed", transient=True)
            if step.action == "search":
                found, _ = sources.search(step.query)
                report.steps.append({"action": "search", "query": step.query, "found": len(found)})
                result = render_results(found, RESULT_CHARS)
            else:
                try:
                    found = sources.read(step.anchor)
                    result = render_results(found, RESULT_CHARS)
                except Exception as exc:  # a refused or missing path is the model's answer
                    found, result = [], f"refused: {exc}"
                report.steps.append({"action": "read", "anchor": step.anchor, "found": len(found)})
            seen.add(found)
            messages += [
                Message("assistant", reply.text),
                Message(
                    "user", f"Result of {step.action}:\n{for_model(result)}" + steps_note(left - 1)
                ),
            ]

    @staticmethod
    def _answer(report: Report, answer: Answer) -> None:
        from .protocol import render_block

        report.dropped_sources = answer.dropped
        report.steps.append({"action": "answer", "sources": len(answer.sources)})
        if not answer.sources:
            report.status = "error"
            report.reason = "the answer cites no source the lane read (invented anchors dropped)"
            return
        report.status, report.reason = "answered", f"{len(answer.sources)} source(s)"
        report.summary, report.sources = answer.summary, answer.sources
        report.origin = answer.origin.value
        report.block = render_block(answer)


def turns_of(target: Target, message: str) -> list[Turn]:
    """The last 2 user turns and the last assistant turn, the message being the latest
    user turn (it may already be recorded, or not yet)."""
    turns = list(target.turns)
    if not (turns and turns[-1].role == "user" and turns[-1].text == message):
        turns.append(Turn("user", message))
    users = [i for i, t in enumerate(turns) if t.role == "user"][-2:]
    helper = [i for i, t in enumerate(turns) if t.role == "assistant"][-1:]
    return [turns[i] for i in sorted(users + helper)]


__all__ = ["MAX_RUNNING", "EscalationLane", "LaneHost", "turns_of"]
