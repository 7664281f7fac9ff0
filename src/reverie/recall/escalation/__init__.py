"""The escalation lane (lane 2, R-LANE2-1..3): a bounded sub-agent turn behind two
deterministic gates, privacy enforced in the query, a deadline enforced by the caller."""

from __future__ import annotations

from .gates import Gate, no_strong_hit, recall_intent
from .lane import EscalationLane, LaneHost
from .privacy import SessionMeta, Target, Turn, source_refusal, target_gate
from .report import Report, explain

__all__ = [
    "EscalationLane",
    "Gate",
    "LaneHost",
    "Report",
    "SessionMeta",
    "Target",
    "Turn",
    "explain",
    "no_strong_hit",
    "recall_intent",
    "source_refusal",
    "target_gate",
]
