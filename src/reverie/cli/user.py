"""The user model at the command line (R-USER-1): ``reverie user add|list|retire``.

The person at the CLI is the owner, so these are the direct way to state a preference;
every change goes through the safe write (pre-image, DREAMS.md summary) and a changed
preference replaces the old directive of its key in place.
"""

from __future__ import annotations

import click

from ..errors import ReverieError
from ..results import Accepted, Rejected
from ..user.directives import Change
from .common import Ctx, emit, handles_errors, json_option


def _done(obj: Ctx, outcome: Accepted[Change] | Rejected, as_json: bool, no_index: bool) -> None:
    if isinstance(outcome, Rejected):
        raise ReverieError(f"USER.md: {outcome.reason}")
    c = outcome.value
    warnings: list[str] = []
    if c.action != "unchanged" and not no_index:
        try:
            obj.engine.mark_dirty()
            obj.engine.index()
        except Exception as exc:  # the change landed; only the index lags (P5)
            warnings.append(f"USER.md written, but the index was not updated: {exc}")
    data = {
        "action": c.action,
        "directive": c.directive.as_dict(),
        "replaced": c.replaced.as_dict() if c.replaced else None,
        "warnings": warnings,
    }
    emit(
        data,
        as_json,
        lambda d: (
            f"{d['action']}: [{d['directive']['key']}] {d['directive']['text']}"
            + (f"\n  (was: {d['replaced']['text']})" if d["replaced"] else "")
            + "".join(f"\nwarning: {w}" for w in d["warnings"])
        ),
    )


@click.group()
def user() -> None:
    """USER.md: the owner's standing directives (Always..., Never..., Prefer...)."""


@user.command("add")
@click.argument("text")
@click.option("--key", help="Supersede key: a new directive replaces the active one of its key.")
@click.option("--always", is_flag=True, help="Restate it beside every message.")
@click.option("--no-index", is_flag=True, help="Do not sync the index after writing.")
@json_option
@click.pass_obj
@handles_errors
def add(obj: Ctx, text: str, key: str | None, always: bool, no_index: bool, as_json: bool) -> None:
    """Add the directive TEXT (or replace the one of its --key in place)."""
    outcome = obj.engine.user.add(text, key=key, always=always, by="owner at the CLI")
    _done(obj, outcome, as_json, no_index)


@user.command("retire")
@click.argument("key")
@click.option("--no-index", is_flag=True, help="Do not sync the index after writing.")
@json_option
@click.pass_obj
@handles_errors
def retire_cmd(obj: Ctx, key: str, no_index: bool, as_json: bool) -> None:
    """Remove the active directive of KEY (the old USER.md is kept as a pre-image)."""
    outcome = obj.engine.user.retire(key, by="owner at the CLI")
    _done(obj, outcome, as_json, no_index)


@user.command("list")
@click.option("--all", "show_all", is_flag=True, help="Superseded directives too.")
@json_option
@click.pass_obj
@handles_errors
def list_cmd(obj: Ctx, show_all: bool, as_json: bool) -> None:
    """The directives of USER.md (active ones unless --all)."""
    items = [d for d in obj.engine.user.directives() if show_all or d.active]
    emit(
        {"directives": [d.as_dict() for d in items]},
        as_json,
        lambda _: (
            "\n".join(
                f"[{d.key or '-'}] {d.text}"
                + (f" (observed {d.observed.isoformat()})" if d.observed else "")
                + (" [always]" if d.always else "")
                + ("" if d.active else f" [{d.status}]")
                for d in items
            )
            or "USER.md holds no directives"
        ),
    )


__all__ = ["user"]
