"""``reverie backend move``: carry this agent's memory to the other index backend."""

from __future__ import annotations

import os
from typing import Any

import click
from rich.console import Console

from ..backends import BACKENDS
from ..settings import config_path
from .common import Ctx, emit, handles_errors, json_option


@click.group("backend")
def backend() -> None:
    """Where the derived stores live (SQLite in the state folder, or PostgreSQL)."""


def _render(d: dict[str, Any]) -> str:
    verb = "would move" if d["dry_run"] else "moved"
    lines = [f"{verb} from {d['source']} to {d['target']}"]
    width = max(len(k) for k in d["counts"])
    for store, (before, after) in d["counts"].items():
        lines.append(f"  {store:<{width}}  {before}" + ("" if d["dry_run"] else f" -> {after}"))
    if d["config"]:
        lines.append(f"set in {d['config']}: " + ", ".join(d["settings"]))
    elif not d["dry_run"]:
        lines.append(
            "set these settings: " + ", ".join(f"{k} = {v!r}" for k, v in d["settings"].items())
        )
    lines += [f"note: {n}" for n in d["notes"]]
    lines += [f"removed {r}" for r in d["removed"]]
    return "\n".join(lines)


@backend.command("move")
@click.option("--to", "to", type=click.Choice(list(BACKENDS)), required=True, help="The backend.")
@click.option("--dsn", default="", help="PostgreSQL's connection string [index_dsn].")
@click.option("--dry-run", is_flag=True, help="Count what would move; change nothing.")
@json_option
@click.pass_obj
@handles_errors
def move(obj: Ctx, to: str, dsn: str, dry_run: bool, as_json: bool) -> None:
    """Carry the intents, pending requests, recall log and embedding cache to the other
    backend and rebuild the index there from the files; every store is counted on both
    sides, then the config file is set to the new backend and the old copies are
    deleted. Stop `reverie serve` first."""
    config = config_path(os.environ)
    console = Console(stderr=True, quiet=as_json)
    with console.status(f"moving to {to}"):
        report = obj.engine.move_backend(to, dsn=dsn, config=config, dry_run=dry_run)
    emit(report.as_dict(), as_json, _render)
