"""The turn step that restates USER.md's directives beside the message (R-USER-1).

Called from :meth:`reverie.engine.Reverie.context` after the trigger step. Reads USER.md
as it is on disk now (a change is live on the next turn), picks the directives that
bear on the message (:mod:`.restate`) and fills the turn context's ``directives`` and
``directive_block``. The semantic lane uses the embedder only when one is already
loaded (a long-running process warmed it); a one-shot command never pays for loading a
model here. Its score is calibrated per embedder (:func:`similarity_of`); directive
vectors are cached by text.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .directives import parse

if TYPE_CHECKING:  # (an embedder is only ever loaded in a long-running process)
    import numpy as np

    from ..settings import Settings
    from ..storage.embedders.base import Embedder
    from .restate import Similarity

MAX_FILE_CHARS = 200_000
_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_CACHE_CAP = 512


class Turn(Protocol):
    """What this step fills in (:class:`reverie.recall.context.TurnContext` has it)."""

    message: str
    directives: list[dict[str, Any]]
    directive_block: str
    degraded: list[str]


# Unrelated sentences: a directive's mean cosine to them is what "unrelated" scores with
# this embedder (multilingual-e5 puts everything near 0.8, USE near 0.1), so a match is
# judged by how far above that floor it lies, on any embedder.
PROBES = (
    "The weather was mild on Tuesday afternoon.",
    "She bought a second-hand bicycle last spring.",
    "The invoice number on the parcel is 4471.",
    "我们明天下午去公园散步。",
)


def _vectors(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    import numpy as np

    label = embedder.identity.label()
    missing = [t for t in dict.fromkeys(texts) if (label, t) not in _VECTORS]
    if missing:
        for t, v in zip(missing, embedder.embed_documents(missing), strict=True):
            _VECTORS[(label, t)] = np.asarray(v, dtype=np.float32).reshape(-1)
    out = [_VECTORS[(label, t)] for t in texts]
    while len(_VECTORS) > _CACHE_CAP:
        _VECTORS.popitem(last=False)
    return out


def similarity_of(embedder: Embedder) -> Similarity:
    """How far each directive's cosine to the message lies above the directive's floor
    (its mean cosine to :data:`PROBES`), scaled to 0..1: ``(cos - floor) / (1 - floor)``.
    Directive and probe vectors are cached by text."""

    import numpy as np

    def sims(message: str, texts: Sequence[str]) -> list[float]:
        probes = np.stack(_vectors(embedder, PROBES))
        docs = _vectors(embedder, texts)
        q = np.asarray(embedder.embed_query(message), dtype=np.float32).reshape(-1)
        out = []
        for v in docs:
            floor = float(np.mean(probes @ v))
            out.append((float(np.dot(v, q)) - floor) / max(1e-6, 1.0 - floor))
        return out

    return sims


def add_directives(ctx: Turn, user_md: Path, settings: Settings, embedder: object = None) -> None:
    """Fill ``ctx.directives`` and ``ctx.directive_block`` for ``ctx.message``. Never
    raises (P5: a memory failure never blocks a reply): a failure only drops the block
    and is noted in ``ctx.degraded``. ``embedder``: used only if it is a loaded
    :class:`Embedder` (anything else, such as "not created yet", means lexical only)."""
    loaded: Embedder | None = None
    if embedder is not None:  # (None, the one-shot hook's case, never is one)
        from ..storage.embedders.base import Embedder

        loaded = embedder if isinstance(embedder, Embedder) else None
    try:
        _add(ctx, user_md, settings, loaded)
    except Exception as exc:
        ctx.directives, ctx.directive_block = [], ""
        ctx.degraded.append(f"directives skipped: {type(exc).__name__}: {exc}")


def _add(ctx: Turn, user_md: Path, settings: Settings, embedder: Embedder | None) -> None:
    if user_md.is_symlink() and user_md.parent.resolve() not in user_md.resolve().parents:
        ctx.degraded.append("USER.md links outside the workspace: directives not restated")
        return  # the one symlink policy (bootstrap and index refuse it too)
    try:
        with user_md.open(encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_FILE_CHARS)
    except FileNotFoundError:
        return
    directives = parse(text)
    if not directives:
        return
    from .restate import render_block, select  # (a USER.md without directives: not needed)

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
