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
@json_option
@click.pass_obj
@handles_errors
def demo(obj: Ctx, directory: Path | None, as_json: bool) -> None:
    """Build a demo workspace, index it, search, build a turn context, run a scripted
    session and dream. Offline, on the default embedder."""
    target = directory or Path(tempfile.mkdtemp(prefix="reverie-demo-"))
    summary = run_demo(
        target, embedder=obj.flags.get("embedder"), say=(lambda _m: None) if as_json else click.echo
    )
    if as_json:
        emit(summary, True)
    else:
        click.echo(f"demo workspace kept at {target / 'workspace'}")
