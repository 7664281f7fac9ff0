"""Recall commands: search, get, context."""

from __future__ import annotations

import click

from ..errors import ReverieError
from ..recall.search import Lanes
from ..scope import key_from_text, project_key
from .common import Ctx, emit, handles_errors, json_option

cwd_option = click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    help="Work as if in DIR: its git project is active for this call (R-SCOPE-1).",
)


def active_projects(projects: tuple[str, ...], cwd: str | None) -> tuple[str, ...]:
    """The active set for one call: ``--project`` keys (or remote URLs), normalised,
    plus the project of ``--cwd``."""
    keys = []
    for raw in projects:
        key = key_from_text(raw)
        if key is None:
            raise ReverieError(f"--project {raw!r}: not a project key or git remote URL")
        keys.append(key)
    here = project_key(cwd) if cwd else None
    return tuple(dict.fromkeys([*([here] if here else []), *keys]))


@click.command()
@click.argument("query")
@click.option(
    "-n",
    "--max-results",
    type=click.IntRange(min=1),
    help="Results to return [search_max_results].",
)
@click.option(
    "--budget-tokens",
    type=click.IntRange(min=1),
    help="As many hits as fit in this many tokens (instead of --max-results).",
)
@click.option("--project", "projects", multiple=True, help="An active project key (repeatable).")
@cwd_option
@click.option("--lanes", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid")
@click.option("--no-decay", is_flag=True, help="Switch journal decay off.")
@click.option("--explain", is_flag=True, help="Show the whole score chain per hit.")
@click.option(
    "--record", is_flag=True, help="Record the hits in the recall log (as an agent's search)."
)
@json_option
@click.pass_obj
@handles_errors
def search(
    obj: Ctx,
    query: str,
    max_results: int | None,
    budget_tokens: int | None,
    projects: tuple[str, ...],
    cwd: str | None,
    lanes: Lanes,
    no_decay: bool,
    explain: bool,
    record: bool,
    as_json: bool,
) -> None:
    """memory_search: hybrid vector + keyword search over the workspace (files changed
    since the last sync, hand edits included, are synced first)."""
    unsynced = obj.refresh()  # P5: a failed sync never fails the search
    response = obj.engine.search(
        query,
        max_results=max_results,
        active_projects=active_projects(projects, cwd),
        lanes=lanes,
        decay=not no_decay,
        record=record,
        budget_tokens=budget_tokens,
    )
    if unsynced:
        response.notes.append(unsynced)
    emit(response.as_dict(), as_json, lambda _: response.render(explain))


@click.command()
@click.argument("path")
@click.option(
    "--from", "from_line", type=click.IntRange(min=1), default=1, help="First line (1-based)."
)
@click.option("--lines", type=click.IntRange(min=1), help="How many lines (at most get_max_lines).")
@json_option
@click.pass_obj
@handles_errors
def get(obj: Ctx, path: str, from_line: int, lines: int | None, as_json: bool) -> None:
    """memory_get: read lines of a workspace file."""
    result = obj.engine.get(path, from_line=from_line, lines=lines)
    emit(result.as_dict(), as_json, lambda _: result.render())


@click.command()
@click.argument("message")
@click.option("--project", "projects", multiple=True, help="An active project key (repeatable).")
@click.option("--explain", is_flag=True, help="Also show each escalation gate's decision.")
@cwd_option
@json_option
@click.pass_obj
@handles_errors
def context(
    obj: Ctx,
    message: str,
    projects: tuple[str, ...],
    cwd: str | None,
    explain: bool,
    as_json: bool,
) -> None:
    """The context to inject for MESSAGE: bootstrap files, fired triggers, the USER.md
    directives that bear on it, fired intents, and the escalation lane's summary when
    it runs (setting escalation)."""
    ctx = obj.engine.context(message, active_projects=active_projects(projects, cwd))
    from ..recall.escalation import explain as explain_escalation  # (lane 2's report)

    shown = ctx.text + ("\n\n" + explain_escalation(ctx.escalation) if explain else "")
    emit(ctx.as_dict(), as_json, lambda _: shown)
