"""``reverie doctor``: what is wrong and the command that fixes it (the checks are in
:mod:`reverie.integrations.doctor`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..integrations.doctor import DoctorPorts, diagnose
from ..llm.factory import make_llm
from ..settings import load_settings
from ..storage.embedders.factory import make_embedder
from .common import Ctx, emit, handles_errors, json_option

MARK = {"ok": "ok   ", "info": "info ", "warn": "WARN ", "error": "ERROR"}


def _render(d: dict[str, Any]) -> str:
    out = []
    for f in d["findings"]:
        out.append(f"{MARK[f['status']]} {f['check']}: {f['message']}")
        if f["fix"] and f["status"] != "ok":
            out.append(f"      fix: {f['fix']}")
    out.append("healthy" if d["healthy"] else "not healthy: fix the errors above")
    return "\n".join(out)


@click.command()
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also check this project's Claude Code install (default: the current folder "
    "when it has .claude/ or .mcp.json).",
)
@json_option
@click.pass_obj
@handles_errors
def doctor(obj: Ctx, project: Path | None, as_json: bool) -> None:
    """Check the workspace, the state dir and its key, the index against the files, the
    embedder, the model provider, the daemon and the Claude Code hooks and MCP server;
    say what is wrong and the command that fixes it. Exits 1 when something is."""
    settings = load_settings({k: v for k, v in obj.flags.items() if v is not None})
    here = Path.cwd()
    if project is None and ((here / ".claude").is_dir() or (here / ".mcp.json").is_file()):
        project = here
    ports = DoctorPorts(
        settings=settings,
        make_embedder=lambda ws: make_embedder(settings, models_dir=ws.models_dir),
        make_llm=lambda: make_llm(settings),
        project=project.resolve() if project else None,
    )
    report = diagnose(ports)
    emit(report.as_dict(), as_json, _render)
    if not report.healthy:
        sys.exit(1)
