"""The one symlink policy of every reader and writer: where a path really is, and the
trust its content reads with when it is a link (a link never raises trust)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from ..errors import PathEscapeError
from ..provenance.origin import lowest
from ..provenance.paths import PathClass, classify


def resolve_inside(root: Path, path: Path, *, shown: str | None = None) -> Path:
    """The real path of ``path`` (every symlink followed) if it stays inside ``root``
    (a resolved path); :class:`PathEscapeError` when it leaves. The one symlink policy
    of every reader and writer: a link whose target resolves inside the workspace is
    followed, a link that leaves it is refused."""
    real = path.resolve()
    if real != root and root not in real.parents:
        if shown is None:
            shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        raise PathEscapeError(f"{shown}: resolves outside the workspace")
    return real


def link_class(relpath: str, real: str | None, trusted: Collection[str] = ()) -> PathClass:
    """How the content at ``relpath`` is classified: a symlink to ``real`` reads with
    the lower trust of its own path and its target's (a link never raises trust)."""
    own = classify(relpath, trusted)
    if real is None or real == relpath:
        return own
    target = classify(real, trusted)
    default_origin = lowest(own.default_origin, target.default_origin)
    ceiling = lowest(own.ceiling, target.ceiling)
    return PathClass(own.kind, default_origin, ceiling, own.markers, own.day)
