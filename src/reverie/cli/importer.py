"""``reverie import FORMAT PATH``: other assistants' memories and conversations
(see :mod:`reverie.integrations.importer`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..integrations.importer import FORMATS, Importer
from .common import Ctx, emit, handles_errors, json_option


def _render(d: dict[str, Any]) -> str:
    verb = "would import" if d["dry_run"] else "imported"
    origins = ", ".join(f"{n} {o}" for o, n in sorted(d["origins"].items())) or "nothing new"
    lines = [
        f"{verb} {d['new']} of {d['items']} items from {d['conversations']} "
        f"conversation(s)/file(s) ({d['already']} already imported): {origins}"
    ]
    lines += [f"  {f}" for f in d["files"]]
    lines += [f"warning: {w}" for w in d["warnings"]]
    if not d["as_owner"] and d["new"]:
        lines.append(
            "Imported text is untrusted: found by search, never promoted or injected. "
            "Pass --as-owner to vouch for it."
        )
    return "\n".join(lines)


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice([*FORMATS, "openclaw"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--as-owner",
    is_flag=True,
    help="Vouch for it: the person's turns and memory notes count as yours (owner), the "
    "other assistant's as agent; tool output stays untrusted. Recorded on every line.",
)
@click.option("--dry-run", is_flag=True, help="Parse and count; write nothing.")
@json_option
@click.pass_obj
@handles_errors
def import_cmd(
    obj: Ctx, fmt: str, path: Path, as_owner: bool, dry_run: bool, as_json: bool
) -> None:
    """Import PATH in FORMAT: claude-code (CLAUDE.md memory files and transcripts, a file
    or a folder such as ~/.claude), chatgpt (conversations.json or the export zip, with
    the custom instructions and browsing results it holds), claude-ai (conversations.json,
    or the export's folder or zip, which adds its memories.json and projects.json), mcp-memory
    (the memory server's memory.json), openclaw (an OpenClaw workspace folder, every file
    kept as it is). Idempotent and resumable: importing again adds nothing."""
    console = Console(stderr=True)
    with Progress(
        TextColumn("importing {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=as_json or not console.is_terminal,
    ) as bar:
        task = bar.add_task(fmt, total=None)

        def progress(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{fmt}: {what[:40]}")

        if fmt == "openclaw":
            from ..integrations.openclaw_import import import_openclaw

            report = import_openclaw(
                obj.engine, path, as_owner=as_owner, dry_run=dry_run, progress=progress
            )
        else:
            importer = Importer(
                obj.engine, fmt, as_owner=as_owner, dry_run=dry_run, progress=progress
            )
            report = importer.run(path)
    emit(report.as_dict(), as_json, _render)
