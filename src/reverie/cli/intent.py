"""``reverie intent``: standing intents (R-INTENT-1..3), add / list / confirm / cancel.

A person at the CLI is the owner: what they add is armed at once, and only they
confirm what the agent proposed (pending intents never fire until confirmed).
"""

from __future__ import annotations

from typing import Any

import click

from ..intents.model import Intent
from .common import Ctx, emit, handles_errors, json_option


def _line(d: dict[str, Any]) -> str:
    fired = f", fired {d['fired']}/{d['budget']}" if d["kind"] == "event" else ""
    return f"{d['id']}  {d['status']:<9} {d['kind']:<5} {d['when']}{fired}\n    {d['text']}"


def _show(intent: Intent, as_json: bool, said: str) -> None:
    emit(intent.as_dict(), as_json, lambda d: f"{said} {_line(d)}")


@click.group()
def intent() -> None:
    """Standing intents: reminders at a time, on an event, or wishes (INTENTS.md shows them)."""


@intent.command("add")
@click.argument("text")
@click.option(
    "--at", "at", metavar="WHEN", help='One time: ISO or words ("friday 9:00", "明天下午三点").'
)
@click.option(
    "--every", metavar="CRON", help='A schedule: cron ("0 9 * * 1") or words ("monday 9:00").'
)
@click.option("--on", "on", metavar="TERMS", help='Event triggers: "term, term; other term".')
@click.option("--review-by", metavar="DATE", help="A wish, reviewed on DATE.")
@json_option
@click.pass_obj
@handles_errors
def add(
    obj: Ctx,
    text: str,
    at: str | None,
    every: str | None,
    on: str | None,
    review_by: str | None,
    as_json: bool,
) -> None:
    """Add a standing intent, armed at once. Without an option the kind is read from
    TEXT: "when Alice mentions the release, ..." is an event, "every Monday at 9 ..."
    a schedule, "remind me Friday at 9 ..." a time, anything else a wish."""
    obj.engine.workspace.require()
    added = obj.engine.intents.add(
        text, proposer="owner", proposed_by="cli", at=at, every=every, on=on, review_by=review_by
    )
    _show(added, as_json, "added")


@intent.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also cancelled, done and expired ones.")
@json_option
@click.pass_obj
@handles_errors
def list_cmd(obj: Ctx, show_all: bool, as_json: bool) -> None:
    """The live (armed and pending) intents."""
    obj.engine.workspace.require()
    found = [i.as_dict() for i in obj.engine.intents.listing(all=show_all)]
    emit(found, as_json, lambda rows: "\n".join(map(_line, rows)) or "no intents")


@intent.command("cancel")
@click.argument("intent_id", metavar="ID")
@json_option
@click.pass_obj
@handles_errors
def cancel(obj: Ctx, intent_id: str, as_json: bool) -> None:
    """Cancel intent ID (it never fires again)."""
    obj.engine.workspace.require()
    _show(obj.engine.intents.cancel(intent_id), as_json, "cancelled")


@intent.command("confirm")
@click.argument("intent_id", metavar="ID")
@json_option
@click.pass_obj
@handles_errors
def confirm(obj: Ctx, intent_id: str, as_json: bool) -> None:
    """Arm intent ID, which the agent proposed (pending until now)."""
    obj.engine.workspace.require()
    _show(obj.engine.intents.confirm(intent_id), as_json, "armed")


__all__ = ["intent"]
