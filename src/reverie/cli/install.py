"""``reverie install claude-code``: hooks and the MCP server in Claude Code's settings
(see :mod:`reverie.integrations.claude_install`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError
from ..integrations.claude_install import HttpHook, install_claude_code
from ..settings import load_settings
from .client import ask, endpoint_for
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
@click.option(
    "--hook",
    "form",
    type=click.Choice(["auto", "http", "command"]),
    default="auto",
    show_default=True,
    help="The per-prompt hook: http (answered by `reverie serve`, no process per "
    "prompt), command (one-shot), or auto (http when the daemon answers now, user "
    "installs only).",
)
@json_option
@click.pass_obj
@handles_errors
def claude_code(
    obj: Ctx, project: Path | None, uninstall: bool, dry_run: bool, form: str, as_json: bool
) -> None:
    """Add the SessionStart, UserPromptSubmit, PreCompact and SessionEnd hooks and the
    `reverie` MCP server to Claude Code, with the absolute path of this `reverie`.
    Idempotent; other entries are left alone; each changed file is backed up first."""
    options: list[str] = []
    flags = {k: v for k, v in obj.flags.items() if v is not None}
    http = None if uninstall else _http_hook(flags, form, project)
    s = load_settings(flags)
    for flag, name in (("--workspace", "workspace"), ("--state-dir", "state_dir")):
        if s.source(name) != "default":  # a flag, the environment or the config file
            options += [flag, str(Path(s[name]).expanduser().resolve())]
    result = install_claude_code(
        project=project, uninstall=uninstall, dry_run=dry_run, options=options, http=http
    )
    emit(result.as_dict(), as_json, _render)


def _http_hook(flags: dict[str, str], form: str, project: Path | None) -> HttpHook | None:
    """The daemon's HTTP hook when asked for (``http``) or when, for a user install, a
    daemon serving this workspace answers now (``auto``)."""
    if form == "command" or (form == "auto" and project is not None):
        return None
    endpoint = endpoint_for(flags)
    if form == "auto":
        alive = endpoint is not None and ask(endpoint, "/reverie/ping", b"{}", 5.0) is not None
        return HttpHook(endpoint.port, endpoint.token) if alive else None
    if endpoint is None:
        raise ConfigError(
            "--hook http: no daemon has served this workspace yet; start `reverie serve` "
            "first (it keeps its port and token in the state dir)"
        )
    return HttpHook(endpoint.port, endpoint.token)
