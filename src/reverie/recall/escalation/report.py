"""What the escalation lane reports for one message (``reverie context --json`` and
``--explain``). Pure code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .gates import Gate

Status = Literal["skipped", "answered", "timeout", "error"]


@dataclass
class Report:
    """What the lane did for one message, and why (``reverie context --json``)."""

    status: Status
    reason: str
    summary: str = ""
    sources: tuple[str, ...] = ()
    dropped_sources: tuple[str, ...] = ()
    origin: str | None = None
    gates: list[Gate] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    model_calls: int = 0
    elapsed_ms: float = 0.0
    cached: bool = False
    block: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "summary": self.summary,
            "sources": list(self.sources),
            "dropped_sources": list(self.dropped_sources),
            "origin": self.origin,
            "untrusted": self.origin == "untrusted",
            "gates": [g.as_dict() for g in self.gates],
            "refused_sessions": dict(self.refused),
            "steps": self.steps,
            "model_calls": self.model_calls,
            "elapsed_ms": round(self.elapsed_ms, 1),
            "cached": self.cached,
        }


def explain(report: dict[str, Any] | None) -> str:
    """The gates' decisions and the outcome of a report (``as_dict``), one line each:
    what ``reverie context --explain`` prints."""
    if not report:
        return "escalation: not run"
    lines = [f"escalation: {report['status']}: {report['reason']}"]
    for g in report.get("gates", []):
        lines.append(f"  gate {g['gate']}: {'pass' if g['passed'] else 'no'}: {g['reason']}")
    lines += [f"  refused {sid}: {why}" for sid, why in report.get("refused_sessions", {}).items()]
    lines += [f"  step {i}: {s}" for i, s in enumerate(report.get("steps", []), start=1)]
    if report.get("sources"):
        lines.append(f"  sources: {', '.join(report['sources'])} ({report.get('origin')})")
    if report.get("dropped_sources"):
        lines.append(f"  dropped (never read): {', '.join(report['dropped_sources'])}")
    return "\n".join(lines)


__all__ = ["Report", "Status", "explain"]
