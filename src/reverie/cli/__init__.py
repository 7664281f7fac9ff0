"""The ``reverie`` command line. Every command takes ``--json``; errors exit non-zero
with a message on stderr (exit codes: 1 general, 2 config, 3 workspace, 4 index,
5 provider).

``reverie hook EVENT`` runs on every prompt of a Claude Code session, so :func:`main`
dispatches it before the click application (and every command module) is imported;
so are ``reverie search`` and ``reverie context`` while ``reverie serve`` runs (they are
answered by the daemon: :mod:`.client`), and ``reverie mcp`` over stdio is relayed to
that daemon (:mod:`.relay`) or, without one, imports only its own command.
"""

from __future__ import annotations

import sys


def main() -> None:
    from .fast import run_hook_fast

    if run_hook_fast(sys.argv[1:]):
        return
    from .client import run_warm

    if run_warm(sys.argv[1:]):
        return
    from .relay import run_mcp_relay

    if run_mcp_relay(sys.argv[1:]):
        return
    from .fast import run_mcp_fast

    if run_mcp_fast(sys.argv[1:]):
        return
    from .app import main as app_main

    app_main()


__all__ = ["main"]
