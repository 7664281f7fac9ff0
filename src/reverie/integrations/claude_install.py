"""``reverie install claude-code``: our hooks and MCP server in Claude Code's settings.

Where Claude Code reads them (its settings and MCP documentation):

- hooks: ``~/.claude/settings.json`` (user; ``$CLAUDE_CONFIG_DIR`` moves ``~/.claude``)
  or ``<project>/.claude/settings.json`` (project), under ``"hooks"``: per event a list
  of matcher groups ``{"matcher": ..., "hooks": [{"type": "command", "command": ...,
  "timeout": seconds}]}``;
- MCP servers: ``~/.claude.json`` (user scope, what ``claude mcp add --scope user``
  writes; inside ``$CLAUDE_CONFIG_DIR`` when that is set) or ``<project>/.mcp.json`` (project scope), under ``"mcpServers"``:
  ``{"reverie": {"type": "stdio", "command": ..., "args": [...], "env": {}}}``.

The commands name the absolute path of the installed ``reverie`` (a GUI-started client
does not see a virtualenv's ``PATH``). Ours are recognised by their command (the
``reverie`` program running ``hook <event>``) and by the server name ``reverie``; every
other entry is left as it was. Idempotent: a second install changes nothing and writes
nothing. Each write first copies the file to ``<file>.reverie-<time>.bak``, and writes
atomically. A file is rewritten in its own indentation, so other entries keep their
bytes; uninstalling removes the containers the install created, so install then
uninstall gives back the same file.
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


def _load(path: Path) -> tuple[str | None, dict[str, Any], str | int]:
    """(text, data, indent) of a JSON settings file (absent: None, {}, 2)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}, 2
    if not text.strip():
        return text, {}, 2
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(f"{where}: not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a JSON object")
    m = re.search(r"\n([ \t]+)\S", text)
    indent: str | int = 2
    if m:
        ws = m.group(1)
        indent = ws if "\t" in ws else len(ws)
    return text, data, indent


def _dump(data: dict[str, Any], indent: str | int, like: str | None) -> str:
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if like is None or like.endswith("\n") else text


def is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and bool(_OURS.search(str(hook.get("command", ""))))


def _strip_hooks(data: dict[str, Any]) -> None:
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
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]


def _add_hooks(data: dict[str, Any], program: Sequence[str]) -> None:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('"hooks" in the settings is not an object; fix it first')
    for event, name, timeout in HOOKS:
        command = shlex.join([*program, "hook", name])
        entry = {"type": "command", "command": command, "timeout": timeout}
        hooks.setdefault(event, []).append({"hooks": [entry]})


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    parts = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return any(Path(p).name in ("reverie", "reverie.exe") or p == "reverie.cli" for p in parts)


class ClaudeCodeInstaller:
    """Plans and applies the change to the two files of one scope."""

    def __init__(self, *, project: Path | None, program: Sequence[str], now: datetime) -> None:
        self.project = project
        self.program = list(program)
        self.now = now
        if project is None:
            self.settings_path = claude_dir() / "settings.json"
            moved = os.environ.get("CLAUDE_CONFIG_DIR")  # then .claude.json lives in it too
            self.mcp_path = (Path(moved).expanduser() if moved else Path.home()) / ".claude.json"
        else:
            self.settings_path = project / ".claude" / "settings.json"
            self.mcp_path = project / ".mcp.json"

    def _settings(self, uninstall: bool) -> FileChange:
        before, data, indent = _load(self.settings_path)
        original = json.dumps(data, sort_keys=True)
        _strip_hooks(data)
        if not uninstall:
            _add_hooks(data, self.program)
        after = (
            before if json.dumps(data, sort_keys=True) == original else _dump(data, indent, before)
        )
        if after is not None and not data and before is None:
            after = None
        return FileChange(self.settings_path, before, after)

    def _mcp(self, uninstall: bool) -> FileChange:
        before, data, indent = _load(self.mcp_path)
        original = json.dumps(data, sort_keys=True)
        servers = data.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            raise ConfigError(f'{self.mcp_path}: "mcpServers" is not an object; fix it first')
        if uninstall:
            if isinstance(servers, dict) and _is_our_server(servers.get(SERVER)):
                del servers[SERVER]
                if not servers:
                    del data["mcpServers"]
        else:
            entry = {
                "type": "stdio",
                "command": self.program[0],
                "args": [*self.program[1:], "mcp"],
            }
            data.setdefault("mcpServers", {})[SERVER] = {"env": {}, **entry}
        same = json.dumps(data, sort_keys=True) == original
        after = before if same else _dump(data, indent, before)
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
                change.backup.write_text(change.before, encoding="utf-8")
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
) -> InstallResult:
    """Install (or remove) our hooks and MCP server for Claude Code. ``options``: global
    options (``--workspace``, ``--state-dir``) every command is to carry."""
    base = [*(program or reverie_program()), *options]
    scope = "user" if project is None else "project"
    installer = ClaudeCodeInstaller(
        project=project.resolve() if project else None, program=base, now=datetime.now(UTC)
    )
    result = InstallResult("uninstall" if uninstall else "install", scope, dry_run, base)
    result.files = installer.plan(uninstall=uninstall)
    if not dry_run:
        installer.apply(result.files)
    return result


__all__ = ["HOOKS", "InstallResult", "install_claude_code", "is_ours", "reverie_program"]
