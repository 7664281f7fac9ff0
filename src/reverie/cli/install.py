"""``reverie install claude-code``: hooks and the MCP server in Claude Code's settings
(see :mod:`reverie.integrations.claude_install`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..integrations.claude_install import install_claude_code
from ..settings import load_settings
from .common import Ctx, emit, handles_errors, json_option


@click.group()
def install() -> None:
    """Plug Reverie into an agent harness."""


def _render(d: dict[str, Any]) -> str:
    out = []
    for f in d["files"]:
        if not f["changed"]:
            out.append(f"{f['path']}: unchanged")
            continue
        verb = "would change" if d["dry_run"] else "changed"
        backup = f" (backup: {f['backup']})" if f["backup"] else ""
        out.append(f"{f['path']}: {verb}{backup}")
        if d["dry_run"]:
            out.append(f["diff"].rstrip("\n"))
    if not d["dry_run"] and d["action"] == "install":
        out.append("Restart Claude Code to load the hooks and the memory tools.")
    return "\n".join(out)


@install.command("claude-code")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Install into this project's .claude/settings.json and .mcp.json "
    "(default: your user settings, ~/.claude/settings.json and ~/.claude.json).",
)
@click.option("--uninstall", is_flag=True, help="Remove Reverie's hooks and server, nothing else.")
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@json_option
@click.pass_obj
@handles_errors
def claude_code(
    obj: Ctx, project: Path | None, uninstall: bool, dry_run: bool, as_json: bool
) -> None:
    """Add the SessionStart, UserPromptSubmit, PreCompact and SessionEnd hooks and the
    `reverie` MCP server to Claude Code, with the absolute path of this `reverie`.
    Idempotent; other entries are left alone; each changed file is backed up first."""
    options: list[str] = []
    s = load_settings({k: v for k, v in obj.flags.items() if v is not None})
    for flag, name in (("--workspace", "workspace"), ("--state-dir", "state_dir")):
        if s.source(name) != "default":  # a flag, the environment or the config file
            options += [flag, str(Path(s[name]).expanduser().resolve())]
    result = install_claude_code(
        project=project, uninstall=uninstall, dry_run=dry_run, options=options
    )
    emit(result.as_dict(), as_json, _render)
