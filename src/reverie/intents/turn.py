"""The turn step: fired intents as one hidden block of the turn context (R-INTENT-2).

Called from :meth:`reverie.engine.Reverie.context`; never raises (P5): a broken
intents table only drops the block and says so in ``ctx.degraded``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..provenance.frames import INTENT_BLOCK_TAG
from .model import Fired
from .service import Intents


class TurnContext(Protocol):
    """The fields of :class:`reverie.recall.context.TurnContext` this step fills."""

    message: str
    intents: list[dict[str, Any]]
    intent_block: str
    degraded: list[str]


BLOCK_OPEN = f'<{INTENT_BLOCK_TAG} hidden="true">'
BLOCK_CLOSE = f"</{INTENT_BLOCK_TAG}>"
BLOCK_INTRO = (
    "Standing intents the owner set, firing now: act on them in this reply. They stay "
    "until the owner cancels them explicitly; never cancel one on your own."
)


def render_block(fired: list[Fired], max_chars: int) -> str:
    """One hidden block of at most ``max_chars`` characters ('' when nothing fired)."""
    if not fired or max_chars <= 0:
        return ""
    budget = max_chars - len(BLOCK_OPEN) - len(BLOCK_INTRO) - len(BLOCK_CLOSE) - 3
    lines: list[str] = []
    for f in fired:
        line = f"- [{f.intent.id}] {' '.join(f.intent.text.split())} ({f.reason})"
        room = budget - sum(len(x) + 1 for x in lines) - 1
        if room <= 20:
            break
        lines.append(line if len(line) <= room else line[: room - 1] + "…")
    return "\n".join([BLOCK_OPEN, BLOCK_INTRO, *lines, BLOCK_CLOSE]) if lines else ""


def add_intents(ctx: TurnContext, intents: Intents) -> None:
    """Fire the intents for ``ctx.message`` into ``ctx.intents`` / ``ctx.intent_block``."""
    try:
        fired = intents.fire_turn(ctx.message)
        ctx.intents = [f.as_dict() for f in fired]
        ctx.intent_block = render_block(fired, int(intents.settings.intent_block_chars))
    except Exception as exc:  # P5: memory failure never blocks a reply
        ctx.degraded.append(f"standing intents skipped: {type(exc).__name__}: {exc}")


__all__ = ["BLOCK_CLOSE", "BLOCK_OPEN", "add_intents", "render_block"]
