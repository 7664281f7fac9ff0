"""``reverie install claude-code``: our hooks and MCP server in Claude Code's settings.

Where Claude Code reads them (its settings and MCP documentation):

- hooks: ``~/.claude/settings.json`` (user; ``$CLAUDE_CONFIG_DIR`` moves ``~/.claude``)
  or ``<project>/.claude/settings.json`` (project), under ``"hooks"``: per event a list
  of matcher groups ``{"matcher": ..., "hooks": [{"type": "command", "command": ...,
  "timeout": seconds}]}``; with the daemon (user installs), UserPromptSubmit is
  ``{"type": "http", "url": ..., "headers": {"Authorization": "Bearer ..."},
  "timeout": seconds}`` instead (Claude Code POSTs the hook's JSON and reads the answer
  as a command hook's stdout; a refused connection, a timeout or a non-2xx answer is a
  non-blocking error: the prompt goes on without memory);
- MCP servers: ``~/.claude.json`` (user scope, what ``claude mcp add --scope user``
  writes; inside ``$CLAUDE_CONFIG_DIR`` when that is set) or ``<project>/.mcp.json`` (project scope), under ``"mcpServers"``:
  ``{"reverie": {"type": "stdio", "command": ..., "args": [...], "env": {}}}``.

A user install names the absolute path of the installed ``reverie`` (a GUI-started
client does not see a virtualenv's ``PATH``). A project install writes files that are
usually committed, so it names ``reverie`` on ``PATH`` and paths relative to
``$CLAUDE_PROJECT_DIR`` (hooks run in a shell that has it; ``.mcp.json`` expands
``${VAR:-default}``) or ``$HOME``; any other absolute path is refused. Ours are
recognised by their command (the ``reverie`` program running ``hook <event>``) and by
the server name ``reverie``; every other entry is left as it was. Idempotent: a second
install changes nothing and writes nothing. Each write first copies the file to
``<file>.reverie-<time>.bak``, and writes atomically. Uninstall gives back the file as it
was before the install, byte for byte, when what is left equals that backup; otherwise
it removes our entries, and the containers the install created (never one that was
there before, such as an empty ``"mcpServers": {}``).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..storage.files import atomic_write
from .claude_settings_files import dump, load, uninstalled

SERVER = "reverie"
# (Claude Code event, our hook command, timeout in seconds)
HOOKS = (
    ("SessionStart", "session-start", 15),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("PreCompact", "pre-compact", 120),
    ("SessionEnd", "session-end", 120),
)
_OURS = re.compile(
    r"(?:^|[/\\'\"\s])reverie(?:\.exe|\.cli)?['\"]?(?:\s.*)?\shook\s+(?:"
    + "|".join(h[1] for h in HOOKS)
    + r")\s*$"
)
# our HTTP hook: the daemon's loopback route (reverie.cli.warm)
_OUR_URL = re.compile(r"^http://127\.0\.0\.1:\d+/reverie/hook/[a-z-]+$")
HTTP_EVENTS = {"UserPromptSubmit": "user-prompt-submit"}  # answered by the daemon


@dataclass(frozen=True)
class HttpHook:
    """The daemon's endpoint, for a user install's per-prompt hook (``reverie serve``
    answers it; a daemon that is down fails open: Claude Code goes on without it)."""

    port: int
    token: str

    def entry(self, name: str, timeout: int) -> dict[str, Any]:
        return {
            "type": "http",
            "url": f"http://127.0.0.1:{self.port}/reverie/hook/{name}",
            "headers": {"Authorization": f"Bearer {self.token}"},
            "timeout": timeout,
        }


def reverie_program() -> list[str]:
    """The absolute command that starts this ``reverie``: the script that is running,
    else the one beside this interpreter, else on ``PATH``, else ``python -m``."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("reverie", "reverie.exe") and argv0.is_file():
        return [str(argv0.resolve())]
    beside = Path(sys.executable).parent / ("reverie.exe" if os.name == "nt" else "reverie")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("reverie")
    if found:
        return [str(Path(found).resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "reverie.cli"]


def claude_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def user_mcp_path() -> Path:
    """``~/.claude.json`` (inside ``$CLAUDE_CONFIG_DIR`` when that is set)."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(moved).expanduser() if moved else Path.home()) / ".claude.json"


@dataclass
class FileChange:
    """One settings file: its text before and after (None: it does not exist)."""

    path: Path
    before: str | None
    after: str | None
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        a = (self.before or "").splitlines(keepends=True)
        b = (self.after or "").splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, str(self.path), str(self.path)))


@dataclass
class InstallResult:
    """What ``reverie install claude-code`` did (or would do), per file."""

    action: str  # install | uninstall
    scope: str  # user | project
    dry_run: bool
    command: list[str]
    files: list[FileChange] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "scope": self.scope,
            "dry_run": self.dry_run,
            "command": self.command,
            "files": [
                {
                    "path": str(f.path),
                    "changed": f.changed,
                    "backup": str(f.backup) if f.backup else None,
                    "diff": f.diff(),
                }
                for f in self.files
            ],
        }


def is_ours(hook: Any) -> bool:
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "http":
        return bool(_OUR_URL.match(str(hook.get("url", ""))))
    return bool(_OURS.search(str(hook.get("command", ""))))


def _strip_hooks(data: dict[str, Any], prune: bool = True) -> None:
    """Remove our hook entries (and the groups that held only ours); ``prune``: also
    the event lists and the ``hooks`` object left empty."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in [e for e, _, _ in HOOKS if isinstance(hooks.get(e), list)]:
        groups = []
        for group in hooks[event]:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not is_ours(h)]
                if not kept and len(kept) != len(group["hooks"]):
                    continue  # a group that held only ours goes with it
                group = {**group, "hooks": kept}
            groups.append(group)
        if groups or not prune:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and prune:
        del data["hooks"]


def _strip_server(data: dict[str, Any], prune: bool = True) -> None:
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and _is_our_server(servers.get(SERVER)):
        del servers[SERVER]
        if not servers and prune:
            del data["mcpServers"]


def _add_hooks(data: dict[str, Any], program: str, http: HttpHook | None = None) -> None:
    """Add our hooks; ``program``: the shell words that start ``reverie``; ``http``:
    the per-prompt hook goes to the daemon instead."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('"hooks" in the settings is not an object; fix it first')
    for event, name, timeout in HOOKS:
        entry = {"type": "command", "command": f"{program} hook {name}", "timeout": timeout}
        if http is not None and event in HTTP_EVENTS:
            entry = http.entry(name, timeout)
        hooks.setdefault(event, []).append({"hooks": [entry]})


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    parts = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return any(Path(p).name in ("reverie", "reverie.exe") or p == "reverie.cli" for p in parts)


def _portable(path: str, project: Path, *, shell: bool) -> str:
    """``path`` as a project's shared files can name it: under the project as
    ``$CLAUDE_PROJECT_DIR/...``, under your home as ``$HOME/...`` (the same place for
    each person who clones it). Anything else is a personal path: refused."""
    where = Path(path)
    home = Path.home().resolve()
    for root, var, mcp_var in (
        (project, "CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR:-.}"),
        (home, "HOME", "${HOME}"),
    ):
        if where == root or where.is_relative_to(root):
            rel = where.relative_to(root).as_posix()
            if not shell:
                return mcp_var if rel == "." else f"{mcp_var}/{rel}"
            return f'"${var}"' if rel == "." else f'"${var}"/{shlex.quote(rel)}'
    raise ConfigError(
        f"{path} is outside the project and your home: a project install is shared "
        "(.claude/settings.json and .mcp.json are usually committed), so it cannot name "
        "it. Move it under the project or your home, set REVERIE_WORKSPACE / "
        "REVERIE_STATE_DIR in your environment instead, or install for your user only."
    )


class ClaudeCodeInstaller:
    """Plans and applies the change to the two files of one scope.

    A user install names the absolute ``program``. A project install is shared with
    whoever clones the project, so it names ``reverie`` on ``PATH`` and the options'
    paths relative to ``$CLAUDE_PROJECT_DIR`` or ``$HOME`` (see :func:`_portable`)."""

    def __init__(
        self,
        *,
        project: Path | None,
        program: Sequence[str],
        now: datetime,
        options: Sequence[str] = (),
        http: HttpHook | None = None,
    ) -> None:
        self.project = project
        self.now = now
        if http is not None and project is not None:
            raise ConfigError(
                "the daemon's HTTP hook is for a user install only: a project's shared "
                "settings cannot carry this machine's port and token"
            )
        self.http = http
        if project is None:
            self.program = [*program, *options]
            self.hook_program = shlex.join(self.program)
        else:
            mcp, shell = list(program), [shlex.quote(p) for p in program]
            for n, option in enumerate(options):
                is_path = n % 2 == 1  # --flag PATH pairs
                mcp.append(_portable(option, project, shell=False) if is_path else option)
                shell.append(_portable(option, project, shell=True) if is_path else option)
            self.program, self.hook_program = mcp, " ".join(shell)
        if project is None:
            self.settings_path = claude_dir() / "settings.json"
            self.mcp_path = user_mcp_path()
        else:
            self.settings_path = project / ".claude" / "settings.json"
            self.mcp_path = project / ".mcp.json"

    def _settings(self, uninstall: bool) -> FileChange:
        before, data, indent = load(self.settings_path)
        if uninstall and before is not None:
            after = uninstalled(self.settings_path, before, data, _strip_hooks, indent)
            return FileChange(self.settings_path, before, after)
        original = json.dumps(data, sort_keys=True)
        _strip_hooks(data)
        if not uninstall:
            _add_hooks(data, self.hook_program, self.http)
        after = (
            before if json.dumps(data, sort_keys=True) == original else dump(data, indent, before)
        )
        if after is not None and not data and before is None:
            after = None
        return FileChange(self.settings_path, before, after)

    def _mcp(self, uninstall: bool) -> FileChange:
        before, data, indent = load(self.mcp_path)
        original = json.dumps(data, sort_keys=True)
        servers = data.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            raise ConfigError(f'{self.mcp_path}: "mcpServers" is not an object; fix it first')
        if uninstall:
            if before is not None:
                after = uninstalled(self.mcp_path, before, data, _strip_server, indent)
                return FileChange(self.mcp_path, before, after)
        else:
            entry = {
                "type": "stdio",
                "command": self.program[0],
                "args": [*self.program[1:], "mcp"],
            }
            data.setdefault("mcpServers", {})[SERVER] = {"env": {}, **entry}
        same = json.dumps(data, sort_keys=True) == original
        after = before if same else dump(data, indent, before)
        return FileChange(self.mcp_path, before, after)

    def plan(self, *, uninstall: bool) -> list[FileChange]:
        return [self._settings(uninstall), self._mcp(uninstall)]

    def apply(self, changes: list[FileChange]) -> None:
        stamp = self.now.strftime("%Y%m%dT%H%M%S")
        for change in changes:
            if not change.changed:
                continue
            if change.before is not None:
                change.backup = change.path.with_name(f"{change.path.name}.reverie-{stamp}.bak")
                # owner-only, as the file it copies: settings.json may hold the daemon's
                # bearer token (the HTTP hook's header)
                atomic_write(change.backup, change.before)
            change.path.parent.mkdir(parents=True, exist_ok=True)
            if change.after is None:
                change.path.unlink(missing_ok=True)
            else:
                atomic_write(change.path, change.after)


def install_claude_code(
    *,
    project: Path | None = None,
    uninstall: bool = False,
    dry_run: bool = False,
    options: Sequence[str] = (),
    program: Sequence[str] | None = None,
    http: HttpHook | None = None,
) -> InstallResult:
    """Install (or remove) our hooks and MCP server for Claude Code. ``options``: global
    options (``--workspace PATH``, ``--state-dir PATH`` pairs, absolute paths) every
    command is to carry; ``http``: the per-prompt hook is the daemon's HTTP hook. A
    project install names ``reverie`` on ``PATH``."""
    scope = "user" if project is None else "project"
    if program is None:
        program = reverie_program() if project is None else [SERVER]
    installer = ClaudeCodeInstaller(
        project=project.resolve() if project else None,
        program=program,
        now=datetime.now(UTC),
        options=options,
        http=http,
    )
    result = InstallResult(
        "uninstall" if uninstall else "install", scope, dry_run, installer.program
    )
    result.files = installer.plan(uninstall=uninstall)
    if not dry_run:
        installer.apply(result.files)
    return result


__all__ = [
    "HOOKS",
    "HttpHook",
    "InstallResult",
    "claude_dir",
    "install_claude_code",
    "is_ours",
    "reverie_program",
    "user_mcp_path",
]
