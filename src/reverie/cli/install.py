"""``reverie install claude-code``: hooks and the MCP server in Claude Code's settings
(see :mod:`reverie.integrations.claude_install`); ``reverie install hermes``: Reverie as
Hermes Agent's memory provider (:mod:`reverie.integrations.hermes_install`)."""

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
    data = result.as_dict()
    if not uninstall and not dry_run:
        data["mcp_answers_kept"] = _keep_mcp_answers(obj)
    emit(data, as_json, _render)


def _keep_mcp_answers(obj: Ctx) -> int | None:
    """The MCP server's answers to every handshake, kept in the state folder, so that
    its first start answers at once (:mod:`.mcp_primed`): how many were new or changed;
    None when they could not be made (no SDK, settings that cannot be read)."""
    from .mcp_primed import Primed, kept_path

    path = kept_path(obj.flags)
    try:
        from .mcp import keep_handshakes

        return keep_handshakes(obj.engine, Primed(b"", path).load()) if path else None
    except Exception:  # the install is done; the server's first start asks the SDK
        return None


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


@install.command("hermes")
@click.option(
    "--hermes-home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HERMES_HOME",
    default="~/.hermes",
    show_default=True,
    help="Hermes's home folder (HERMES_HOME).",
)
@click.option(
    "--owner-id",
    "owner_ids",
    multiple=True,
    metavar="PLATFORM:ID",
    help="Your id on a Hermes gateway platform (telegram:12345): your messages there count "
    "as the owner's. At Hermes's own terminal you are the owner without it.",
)
@click.option("--hermes", "hermes_bin", default="hermes", help="The hermes command [hermes].")
@click.option("--uninstall", is_flag=True, help="Remove the provider folder, nothing else.")
@click.option("--dry-run", is_flag=True, help="Show the files; write nothing.")
@json_option
@click.pass_obj
@handles_errors
def hermes(
    obj: Ctx,
    hermes_home: Path,
    owner_ids: tuple[str, ...],
    hermes_bin: str,
    uninstall: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Make Reverie Hermes Agent's memory provider: write $HERMES_HOME/plugins/reverie/
    (the provider, with the absolute command of this `reverie`, its workspace and state
    folder) and set memory.provider with `hermes config set`."""
    import os
    import shutil
    import subprocess

    from ..integrations.hermes_install import install_hermes

    ids = dict(i.split(":", 1) for i in owner_ids if ":" in i)
    if len(ids) != len(owner_ids):
        raise ConfigError("--owner-id takes PLATFORM:ID, e.g. telegram:12345")
    command = _reverie_command(obj)
    home = hermes_home.expanduser()
    done = install_hermes(home, command, owner_ids=ids, uninstall=uninstall, dry_run=dry_run)
    data = done.as_dict()
    value = "" if uninstall else "reverie"
    setting = (
        ["config", "unset", "memory.provider"]
        if uninstall
        else ["config", "set", "memory.provider", value]
    )
    found = shutil.which(hermes_bin)
    data["memory_provider"] = "not changed (dry run)" if dry_run else ""
    if not dry_run and found:
        env = {**os.environ, "HERMES_HOME": str(home)}
        now = subprocess.run(
            [found, "config", "get", "memory.provider"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if uninstall and now.stdout.strip() != "reverie":  # another provider's: left alone
            data["memory_provider"] = f"left as it is ({now.stdout.strip() or 'unset'})"
        else:
            ran = subprocess.run(
                [found, *setting], env=env, capture_output=True, text=True, timeout=120
            )
            ok = ran.returncode == 0
            data["memory_provider"] = "set" if ok else f"failed: {ran.stderr.strip()}"
    elif not dry_run:
        data["memory_provider"] = f"run: HERMES_HOME={home} hermes {' '.join(setting)}"

    def render(d: dict[str, Any]) -> str:
        verb = (
            "would write"
            if d["dry_run"]
            else ("removed" if d["action"] == "uninstall" else "wrote")
        )
        lines = [f"{verb} {f}" for f in d["files"]]
        lines.append(f"memory.provider: {d['memory_provider']}")
        return "\n".join(lines)

    emit(data, as_json, render)


def _reverie_command(obj: Ctx) -> list[str]:
    """This ``reverie``, absolute, with this workspace and state folder (a runtime that
    calls it by command: Hermes's provider, OpenClaw's plugin)."""
    from ..integrations.claude_install import reverie_program

    s = load_settings({k: v for k, v in obj.flags.items() if v is not None})
    return [
        *reverie_program(),
        "--workspace",
        str(Path(s.workspace).expanduser().resolve()),
        "--state-dir",
        str(Path(s.state_dir).expanduser().resolve()),
    ]


@install.command("openclaw")
@click.option(
    "--plugin-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the plugin folder goes [$OPENCLAW_STATE_DIR/extensions/reverie, or "
    "~/.openclaw/extensions/reverie].",
)
@click.option("--openclaw", "openclaw_bin", default="openclaw", help="The openclaw command.")
@click.option("--uninstall", is_flag=True, help="Remove the plugin and its config, nothing else.")
@click.option("--dry-run", is_flag=True, help="Show the files and config; change nothing.")
@json_option
@click.pass_obj
@handles_errors
def openclaw(
    obj: Ctx,
    plugin_dir: Path | None,
    openclaw_bin: str,
    uninstall: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Make Reverie OpenClaw's memory plugin: write the plugin folder (it calls this
    `reverie` with its workspace and state folder) and, with `openclaw config`, load it,
    give it the memory slot and let its hooks read the conversation."""
    import os
    import shlex
    import shutil
    from dataclasses import replace

    from ..integrations import openclaw_install as oc

    state = Path(os.environ.get("OPENCLAW_STATE_DIR") or "~/.openclaw").expanduser()
    folder = (plugin_dir or state / "extensions" / oc.PLUGIN).expanduser().resolve()
    done = oc.install_openclaw(folder, uninstall=uninstall, dry_run=dry_run)
    found = shutil.which(openclaw_bin)
    paths = oc.load_paths(found, os.environ) if found else []
    slot = oc.config_value(found, "plugins.slots.memory", os.environ) if found else oc.PLUGIN
    changes = oc.config_changes(
        folder, _reverie_command(obj), paths, uninstall=uninstall, slot=str(slot)
    )
    if dry_run:
        result = "not changed (dry run)"
    elif found:
        result = oc.apply(found, changes, os.environ)
    else:
        result = "run: " + "; ".join(f"openclaw config {shlex.join(c)}" for c in changes)
    done = replace(done, config=changes, config_result=result)

    def render(d: dict[str, Any]) -> str:
        verb = (
            "would write"
            if d["dry_run"]
            else ("removed" if d["action"] == "uninstall" else "wrote")
        )
        return "\n".join([*(f"{verb} {f}" for f in d["files"]), f"config: {d['config_result']}"])

    emit(done.as_dict(), as_json, render)
