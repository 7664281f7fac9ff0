"""The turn step that restates USER.md's directives beside the message (R-USER-1).

Called from :meth:`reverie.engine.Reverie.context` after the trigger step. Reads USER.md
as it is on disk now (a change is live on the next turn), picks the directives that
bear on the message (:mod:`.restate`) and fills the turn context's ``directives`` and
``directive_block``. The semantic lane uses the embedder only when one is already
loaded (a long-running process warmed it); a one-shot command never pays for loading a
model here. Directive vectors are cached by text.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..settings import Settings
from ..storage.embedders.base import Embedder
from .directives import parse
from .restate import Similarity, render_block, select

MAX_FILE_CHARS = 200_000
_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_CACHE_CAP = 512


class Turn(Protocol):
    """What this step fills in (:class:`reverie.recall.context.TurnContext` has it)."""

    message: str
    directives: list[dict[str, Any]]
    directive_block: str
    degraded: list[str]


def similarity_of(embedder: Embedder) -> Similarity:
    """Cosines of a message to directive texts, directive vectors cached."""

    def sims(message: str, texts: Sequence[str]) -> list[float]:
        label = embedder.identity.label()
        missing = [t for t in dict.fromkeys(texts) if (label, t) not in _VECTORS]
        if missing:
            for t, v in zip(missing, embedder.embed_documents(missing), strict=True):
                _VECTORS[(label, t)] = np.asarray(v, dtype=np.float32)
                while len(_VECTORS) > _CACHE_CAP:
                    _VECTORS.popitem(last=False)
        q = np.asarray(embedder.embed_query(message), dtype=np.float32).reshape(-1)
        return [float(np.dot(_VECTORS[(label, t)].reshape(-1), q)) for t in texts]

    return sims


def add_directives(ctx: Turn, user_md: Path, settings: Settings, embedder: object = None) -> None:
    """Fill ``ctx.directives`` and ``ctx.directive_block`` for ``ctx.message``. Never
    raises (P5: a memory failure never blocks a reply): a failure only drops the block
    and is noted in ``ctx.degraded``. ``embedder``: used only if it is a loaded
    :class:`Embedder` (anything else, such as "not created yet", means lexical only)."""
    try:
        _add(ctx, user_md, settings, embedder if isinstance(embedder, Embedder) else None)
    except Exception as exc:
        ctx.directives, ctx.directive_block = [], ""
        ctx.degraded.append(f"directives skipped: {type(exc).__name__}: {exc}")


def _add(ctx: Turn, user_md: Path, settings: Settings, embedder: Embedder | None) -> None:
    try:
        with user_md.open(encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_FILE_CHARS)
    except FileNotFoundError:
        return
    directives = parse(text)
    if not directives:
        return
    chosen, notes = select(
        directives,
        ctx.message,
        similarity=similarity_of(embedder) if embedder is not None else None,
        semantic_min=settings.user_semantic_min,
        max_directives=settings.user_directives_max,
    )
    ctx.directive_block, kept = render_block(chosen, settings.user_directive_chars)
    ctx.directives = [r.as_dict() for r in kept]
    ctx.degraded.extend(notes)


__all__ = ["Turn", "add_directives", "similarity_of"]
