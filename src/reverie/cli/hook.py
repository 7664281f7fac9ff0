"""``reverie hook EVENT``: the Claude Code hooks (see :mod:`reverie.integrations.hooks`).

Normally dispatched by :func:`reverie.cli.fast.run_hook_fast` before click loads; this
command is the same thing for ``--help`` and for option orders the fast path leaves.
"""

from __future__ import annotations

import sys

import click

from ..integrations.hooks import EVENTS
from .common import Ctx
from .fast import emit_hook


@click.command()
@click.argument("event", type=click.Choice(list(EVENTS)))
@click.option("--json", "as_json", is_flag=True, help="Print what the hook did, not its output.")
@click.pass_obj
def hook(obj: Ctx, event: str, as_json: bool) -> None:
    """Run the Claude Code hook EVENT: reads the hook's JSON on stdin, prints the
    context to inject (session-start, user-prompt-submit) and records and ingests the
    transcript (pre-compact, session-end). Always exits 0: errors go to hooks.log in
    the state dir, never to the prompt."""
    flags = {k: v for k, v in obj.flags.items() if v is not None}
    emit_hook(event, sys.stdin.buffer.read(), flags, as_json=as_json)
