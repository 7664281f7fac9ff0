"""The escalation lane's two deterministic gates (R-LANE2-1). Pure code.

The lane is a real model turn, so it runs only when both hold:

1. **recall intent**: the message reaches into the past: it mentions an earlier time
   ("last time", "yesterday", "two weeks ago", "上次", "之前"), asks about an earlier
   decision or conversation ("what did we decide", "did I tell you", "我们当时决定"),
   or asks to remember ("remember when", "还记得"). "Remember to ..." is a request to
   write, not to recall, and does not count.
2. **no strong lane-1 hit**: no trigger fired, and the best relevance of the lane-1
   search for the message is under a setting. A question lane 1 already answers
   costs no model call.

Each gate returns a :class:`Gate` saying what it decided and why (``--explain``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_EN_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|few|couple\s+of|several|some)"
_EN_PERIOD = (
    r"(?:time|times|week|weekend|month|year|night|session|meeting|call|chat|conversation|sprint|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|quarter|release)"
)
_EN_PAST = (
    r"(?:decide|decided|agree|agreed|say|said|discuss|discussed|talk|talked|conclude|"
    r"concluded|pick|picked|choose|chose|settle|settled|use|used|mention|mentioned|"
    r"plan|planned|go\s+with|went\s+with|name|named|call|called|fix|fixed|find|found)"
)
_EN = [
    ("past reference", rf"\b(?:last|previous|prior)\s+{_EN_PERIOD}\b"),
    ("past reference", r"\bthe\s+other\s+day\b|\byesterday\b|\bback\s+(?:when|then)\b"),
    ("past reference", rf"\b{_EN_NUM}\s+(?:days?|weeks?|months?|years?|hours?)\s+ago\b"),
    ("past reference", r"\bearlier\s+(?:today|this\s+\w+|we|you|i)\b|\bpreviously\b"),
    (
        "earlier conversation",
        r"\b(?:our|that|the)\s+(?:last|previous|earlier|old)\s+"
        r"(?:conversation|chat|session|discussion|talk|meeting)\b",
    ),
    (
        "earlier decision",
        rf"\b(?:what|which|how|why|when|where|who)\b.{{0,40}}\bdid\s+(?:we|you|i)\s+{_EN_PAST}\b",
    ),
    (
        "earlier decision",
        rf"\b(?:did|have|had)\s+(?:we|you|i)\s+(?:ever\s+|already\s+)?{_EN_PAST}\b",
    ),
    (
        "earlier decision",
        r"\b(?:we|you|i)\s+(?:had\s+)?(?:already\s+)?(?:decided|agreed|discussed|talked\s+about|settled\s+on|concluded)\b",
    ),
    ("earlier conversation", r"\bas\s+(?:we|i|you)\s+(?:said|discussed|agreed|mentioned)\b"),
    (
        "earlier conversation",
        r"\b(?:did|have)\s+i\s+(?:ever\s+|already\s+)?(?:tell|told|mention|mentioned|say|said|show|shown)\b",
    ),
    (
        "earlier conversation",
        r"\b(?:you|i)\s+(?:told|showed)\s+(?:me|you)\b|\bi\s+(?:mentioned|said)\s+(?:to\s+you|before|earlier)\b",
    ),
    (
        "remember",
        r"\bremember\s+(?!to\b)(?:when|what|that|how|the|our|we|where|who|which|why|if|whether|my)\b",
    ),
    ("remember", r"\b(?:do|can|could|would)\s+you\s+(?:still\s+)?(?:remember|recall)\b"),
    ("remember", r"\brecall\s+(?:when|what|how|whether|if|the|our|that)\b"),
    ("remember", r"\bremind\s+me\s+(?:what|how|why|which|who|where)\b"),
    ("past reference", r"\ba\s+while\s+(?:ago|back)\b|\bin\s+the\s+past\b|\bthe\s+other\s+week\b"),
    ("past reference", r"\bwhen\s+we\s+last\b|\bthis\s+morning\b|\bearlier\b"),
    (
        "earlier conversation",
        r"\b(?:told|mentioned|said|discussed|asked|showed|talked\s+about)\b.{0,40}\bbefore\b",
    ),
    (
        "earlier conversation",
        r"\bwe\s+(?:spoke|talked|chatted|met|went\s+over)\b|\bi\s+(?:already\s+)?(?:told|asked)\s+you\b",
    ),
    (
        "earlier conversation",
        r"\byou\s+(?:told|said|mentioned|recommended|suggested|promised|showed)\b",
    ),
    ("remember", r"\b(?:what|who|where|which|when|how)\b[^?]{0,80}\bagain\s*\?"),
]
_ZH = [
    (
        "past reference",
        r"上次|上回|那次|那天|前几天|前些天|昨天|前天|上周|上星期|上个月|去年|以前|之前|先前|早些时候|当初",
    ),
    (
        "earlier decision",
        r"(?:我们|咱们|你|我)(?:当时|那时|之前|以前)?(?:决定|商量|约定|定下|选)(?:了|过|的)",
    ),
    ("earlier decision", r"当时|那时候"),
    ("earlier conversation", r"(?:说|提|讲|聊|谈|讨论|告诉|问)(?:到)?过|来着|我跟你说的|之前聊的"),
    ("past reference", r"上一次|那回|那会儿|前阵子|曾经|上周末"),
    ("remember", r"还记得|记得吗|记不记得|记得不|你记得"),
]
_PATTERNS = [(cue, re.compile(p, re.IGNORECASE)) for cue, p in _EN + _ZH]


@dataclass(frozen=True)
class Gate:
    """One gate's decision: passed or not, why, and what it looked at."""

    name: str
    passed: bool
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"gate": self.name, "passed": self.passed, "reason": self.reason, **self.detail}


def recall_intent(message: str) -> Gate:
    """Gate 1: does ``message`` show recall intent? Reports the cues that matched."""
    text = " ".join(message.split())
    cues: list[str] = []
    matched: list[str] = []
    for cue, pattern in _PATTERNS:
        m = pattern.search(text)
        if m and m.group(0) not in matched:
            matched.append(m.group(0))
            if cue not in cues:
                cues.append(cue)
    if not matched:
        return Gate("recall_intent", False, "no recall intent in the message")
    return Gate(
        "recall_intent",
        True,
        f"recall intent ({', '.join(cues)}): " + ", ".join(repr(m) for m in matched[:4]),
        {"cues": cues, "matched": matched[:8]},
    )


def no_strong_hit(triggers_fired: int, best_relevance: float | None, threshold: float) -> Gate:
    """Gate 2: lane 1 had no strong hit (no trigger fired, best relevance < threshold)."""
    detail: dict[str, Any] = {
        "triggers_fired": triggers_fired,
        "best_relevance": None if best_relevance is None else round(best_relevance, 4),
        "threshold": threshold,
    }
    if triggers_fired:
        return Gate("no_strong_hit", False, f"lane 1 fired {triggers_fired} trigger(s)", detail)
    best = best_relevance or 0.0
    if best >= threshold:
        return Gate(
            "no_strong_hit",
            False,
            f"lane 1 has a strong hit (relevance {best:.2f} >= {threshold:g})",
            detail,
        )
    return Gate(
        "no_strong_hit",
        True,
        f"no trigger fired and the best lane-1 relevance {best:.2f} < {threshold:g}",
        detail,
    )


__all__ = ["Gate", "no_strong_hit", "recall_intent"]
