"""Storage commands: init, index, status, settings."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..settings import SETTINGS
from .common import Ctx, emit, handles_errors, json_option


@click.command()
@json_option
@click.pass_obj
@handles_errors
def init(obj: Ctx, as_json: bool) -> None:
    """Create the workspace layout (never overwrites existing files)."""
    created = obj.engine.init()
    ws = obj.engine.workspace
    data = {"workspace": str(ws.root), "state_dir": str(ws.state_dir), "created": created}
    emit(
        data,
        as_json,
        lambda d: (
            f"workspace {d['workspace']}\n"
            + (
                "created: " + ", ".join(d["created"])
                if d["created"]
                else "nothing to create; all present"
            )
        ),
    )


def _render_sync(s: dict[str, Any]) -> str:
    lines = [
        f"scanned {s['files_scanned']} files: {s['files_changed']} changed, "
        f"{s['files_unchanged']} unchanged, {s['files_deleted']} deleted, {s['files_skipped']} skipped",
        f"chunks written {s['chunks_written']}; embeddings computed {s['embeddings_computed']}, "
        f"cached {s['embeddings_cached']}, failed {s['embeddings_failed']}",
    ]
    if s["vectors_missing"]:
        lines.append(
            f"{s['vectors_missing']} chunks are keyword-only for now "
            "(vectors are filled in by a later sync)"
        )
    lines.append(f"{s['seconds']:.2f} s")
    lines += [f"warning: {w}" for w in s["warnings"]]
    return "\n".join(lines)


@click.command()
@click.option("--force", is_flag=True, help="Rebuild every file (resumable if interrupted).")
@json_option
@click.pass_obj
@handles_errors
def index(obj: Ctx, force: bool, as_json: bool) -> None:
    """Sync the index with the workspace files."""
    engine = obj.engine
    if sys.stderr.isatty() and not as_json:
        console = Console(stderr=True)
        with Progress(
            TextColumn("indexing"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("", total=None)

            def progress(done: int, total: int, path: str) -> None:
                bar.update(task, completed=done, total=total, description=path)

            stats = engine.index(force=force, progress=progress)
    else:
        stats = engine.index(force=force)
    data = stats.as_dict()
    for w in data["warnings"]:
        if as_json:
            click.echo(f"warning: {w}", err=True)
    emit(data, as_json, _render_sync)


@click.command()
@json_option
@click.pass_obj
@handles_errors
def status(obj: Ctx, as_json: bool) -> None:
    """Files, chunks, vectors, embedder identity, tokenizer, last sync, dirty."""
    data = obj.engine.status()
    emit(data, as_json, lambda d: "\n".join(f"{k}: {v}" for k, v in d.items()))


def _secret(name: str) -> bool:
    """Keys, and the PostgreSQL DSN (it may hold a password), are never printed."""
    return "key" in name or name == "index_dsn"


@click.command("settings")
@json_option
@click.pass_obj
@handles_errors
def settings_cmd(obj: Ctx, as_json: bool) -> None:
    """Every setting with its value, default, environment variable and help."""
    s = obj.engine.settings
    data = [
        {
            "name": d.name,
            "value": s[d.name] if not _secret(d.name) else ("***" if s[d.name] else ""),
            "default": d.default,
            "source": s.source(d.name),
            "env": d.env,
            "help": d.help,
        }
        for d in SETTINGS
    ]
    emit(
        data,
        as_json,
        lambda rows: "\n".join(
            f"{r['name']} = {r['value']!r}  ({r['source']}; {r['env']})" for r in rows
        ),
    )
