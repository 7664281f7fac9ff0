"""``reverie ui``: the local review page (see :mod:`reverie.ui.app`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from .common import Ctx, handles_errors, json_option

if TYPE_CHECKING:
    from ..ui.app import ReviewApp


@click.command()
@click.option(
    "--port", type=int, default=0, show_default=True, help="Port on 127.0.0.1 (0: any free one)."
)
@json_option
@click.pass_obj
@handles_errors
def ui(obj: Ctx, port: int | None, as_json: bool) -> None:
    """Serve the review page on 127.0.0.1 and print its URL (with its secret token)."""
    from ..ui.serve import serve  # starlette and uvicorn come with the mcp dependency

    engine = obj.engine
    engine.workspace.require()

    def ready(review: ReviewApp) -> None:
        url = review.url()
        if as_json:
            click.echo(json.dumps({"url": url}))
        else:
            click.echo(f"review page: {url}\n(only this machine; Ctrl-C stops it)")

    serve(engine, port=engine.settings.ui_port if port is None else port, ready=ready)
