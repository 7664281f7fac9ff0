"""The global options every fast path reads before click (``--workspace``,
``--state-dir``, ``--embedder``), split off the command line with no import: the
per-prompt hook (:mod:`.fast`) reads them before anything else loads, and the daemon's
client (:mod:`.client`) and the MCP relay (:mod:`.relay`) read them the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

GLOBAL_OPTIONS = {"--workspace": "workspace", "--state-dir": "state_dir", "--embedder": "embedder"}


def split_globals(argv: Sequence[str]) -> tuple[dict[str, str], list[str]] | None:
    """(global flags, the rest) of ``argv``; None when a leading option is not one of
    ours (click gives the error)."""
    flags: dict[str, str] = {}
    args = list(argv)
    while args and args[0].startswith("--"):
        name, eq, value = args.pop(0).partition("=")
        if name not in GLOBAL_OPTIONS:
            return None
        if not eq:
            if not args:
                return None
            value = args.pop(0)
        flags[GLOBAL_OPTIONS[name]] = value
    return flags, args


__all__ = ["GLOBAL_OPTIONS", "split_globals"]
