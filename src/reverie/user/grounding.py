"""Who may write a directive into USER.md (R-USER-1, R-PROV-1). Pure code.

From a session, a directive is accepted only when it is grounded in an *owner message
of that session*: the caller cites the message (its ``seq``), the message was recorded
with source ``owner`` and origin ``owner`` in an interactive session, and the
directive says what that message says (most of its content words occur in it). A
directive drawn from tool output, a web page, a group member's message, the assistant's
own words or a recalled memory is refused, with the reason. The recorded origin is
what the session computed from its context when the message came in, never anything
the text claims.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..results import Accepted, Rejected
from ..tokens import token_set

MIN_COVERAGE = 0.6
_NOT_OWNER = {
    "tool": "tool output",
    "web": "a web page",
    "import": "imported text",
    "member": "a group member's message",
    "recalled": "recalled memory",
    "assistant": "the assistant's own words",
    "scaffold": "scaffolding (a cron or heartbeat prompt)",
}
_FILLER = frozenset(
    re.findall(
        r"\S+",
        "always never prefer please don't dont do not use i me my you your the a an to "
        "of and or in on for with be is it that this from now when want like",
    )
)


def content(text: str) -> frozenset[str]:
    """The words (and CJK uni- and bigrams) a directive's meaning rests on."""
    return frozenset(t for t in token_set(text) if t not in _FILLER)


def coverage(directive: str, message: str) -> float:
    """How much of ``directive``'s content the message holds (1.0: all of it)."""
    d = content(directive)
    if not d:
        return 0.0
    return len(d & token_set(message)) / len(d)


def grounded(
    messages: Sequence[Mapping[str, Any]],
    cites: int,
    text: str,
    *,
    session_kind: str,
) -> Accepted[Mapping[str, Any]] | Rejected:
    """Accepted (the cited message) when ``text`` may become a directive, else why not."""
    if session_kind != "interactive":
        return Rejected("session", f"a {session_kind} session cannot set the owner's preferences")
    cited = next((m for m in messages if m.get("seq") == cites), None)
    if cited is None:
        return Rejected("citation", f"this session has no message {cites}")
    source = str(cited.get("source"))
    if source != "owner":
        what = _NOT_OWNER.get(source, f"a {source!r} message")
        return Rejected(
            "source",
            f"message {cites} is {what}, not the owner's: a directive must come from the owner",
            {"source": source},
        )
    if cited.get("origin") != "owner":
        return Rejected(
            "origin",
            f"message {cites} was recorded as {cited.get('origin')!r}, not as the owner's "
            "(another sender, or a channel that cannot prove it is the owner)",
            {"origin": cited.get("origin")},
        )
    share = coverage(text, str(cited.get("text", "")))
    if share < MIN_COVERAGE:
        return Rejected(
            "grounding",
            f"message {cites} does not say this ({share:.0%} of the directive's words are in "
            f"it, {MIN_COVERAGE:.0%} needed)",
            {"coverage": round(share, 3)},
        )
    return Accepted(cited)


__all__ = ["MIN_COVERAGE", "content", "coverage", "grounded"]
