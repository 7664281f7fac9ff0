"""The ``reverie`` command line. Every command takes ``--json``; errors exit non-zero
with a message on stderr (exit codes: 1 general, 2 config, 3 workspace, 4 index,
5 provider)."""

from __future__ import annotations

from .app import main

__all__ = ["main"]
