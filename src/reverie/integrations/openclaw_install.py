"""``reverie install openclaw``: Reverie as OpenClaw's memory plugin (issue 42).

OpenClaw (``openclaw`` on npm) loads native plugins from the folders ``plugins.load.paths``
names and gives its memory slot (``plugins.slots.memory``) to one of them. This writes
the plugin folder (:file:`openclaw_plugin/index.js` and ``package.json`` as they are, a
manifest declaring the four memory tools it registers, and ``tools.json``: their schemas
from the one definition, :mod:`reverie.provenance.agent_tools`) and returns the config
changes that load it, give it the slot, let it read the conversation (its hooks), name
the ``reverie`` command it calls and switch off OpenClaw's built-in memory tools (the
same names); :func:`apply` makes them with OpenClaw's own ``openclaw
config`` command, so its config file keeps its format and comments.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..provenance.agent_tools import TOOLS
from ..storage.files import atomic_write
from .hermes_install import tool_schemas

PLUGIN = "reverie"
BUILT_IN = "memory-core"  # OpenClaw's own memory tools (memory_search, memory_get)
SOURCE = Path(__file__).with_name("openclaw_plugin")


@dataclass(frozen=True)
class OpenClawInstall:
    """What an install (or uninstall) wrote, and the config it set (or would set)."""

    folder: str
    action: str
    files: list[str] = field(default_factory=list)
    config: list[list[str]] = field(default_factory=list)  # `openclaw config ...` argvs
    config_result: str = ""
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def manifest() -> dict[str, Any]:
    return {
        "id": PLUGIN,
        "name": "Reverie",
        "description": "Durable, inspectable, poisoning-resistant memory in Markdown files.",
        "kind": "memory",
        "activation": {"onStartup": True},
        "configSchema": {
            "type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}},
            "required": ["command"],
            "additionalProperties": False,
        },
        "contracts": {"tools": list(TOOLS)},
    }


def plugin_files() -> dict[str, str]:
    """File name -> text of the plugin folder."""
    return {
        "index.js": (SOURCE / "index.js").read_text(encoding="utf-8"),
        "package.json": (SOURCE / "package.json").read_text(encoding="utf-8"),
        "openclaw.plugin.json": json.dumps(manifest(), indent=2) + "\n",
        "tools.json": json.dumps(tool_schemas(), ensure_ascii=False, indent=2) + "\n",
    }


def config_changes(
    folder: Path,
    command: Sequence[str],
    paths: Sequence[str],
    *,
    uninstall: bool = False,
    slot: str = PLUGIN,
) -> list[list[str]]:
    """The ``openclaw config`` argvs that load the plugin from ``folder`` (``paths``:
    ``plugins.load.paths`` as it is), give it the memory slot and its command; on
    uninstall, the slot and the built-in tools go back only if the slot (``slot``, as
    it is) is still ours."""
    others = [p for p in paths if p != str(folder)]
    if uninstall:
        ours = [["unset", "plugins.slots.memory"], ["unset", f"plugins.entries.{BUILT_IN}.enabled"]]
        return [
            ["set", "plugins.load.paths", json.dumps(others), "--strict-json"],
            ["unset", f"plugins.entries.{PLUGIN}"],
            *(ours if slot == PLUGIN else []),
        ]
    entry = {
        "enabled": True,
        "hooks": {"allowConversationAccess": True},
        "config": {"command": list(command)},
    }
    return [
        ["set", "plugins.load.paths", json.dumps([*others, str(folder)]), "--strict-json"],
        ["set", f"plugins.entries.{PLUGIN}", json.dumps(entry), "--strict-json"],
        ["set", "plugins.slots.memory", PLUGIN],
        # its tools have the same names: the memory slot's tools are Reverie's
        ["set", f"plugins.entries.{BUILT_IN}.enabled", "false", "--strict-json"],
    ]


def config_value(openclaw: str, key: str, env: Mapping[str, str]) -> Any:
    """A config value as OpenClaw reads it (None when unset or unreadable)."""
    got = subprocess.run(
        [openclaw, "config", "get", key, "--json"],
        env=dict(env), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    try:
        return json.loads(got.stdout) if got.returncode == 0 else None
    except ValueError:
        return None


def load_paths(openclaw: str, env: Mapping[str, str]) -> list[str]:
    """``plugins.load.paths`` as OpenClaw reads it ([] when unset)."""
    value = config_value(openclaw, "plugins.load.paths", env)
    return [str(v) for v in value] if isinstance(value, list) else []


def apply(openclaw: str, changes: Sequence[Sequence[str]], env: Mapping[str, str]) -> str:
    """Run each change with ``openclaw config``; "set", or the first failure in words."""
    for change in changes:
        done = subprocess.run(
            [openclaw, "config", *change],
            env=dict(env), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if done.returncode != 0 and change[0] != "unset":
            why = (done.stderr or done.stdout).strip().splitlines()[-1:]
            return f"failed: openclaw config {' '.join(change[:2])}: {' '.join(why)}"
    return "set"


def install_openclaw(
    folder: Path, *, uninstall: bool = False, dry_run: bool = False
) -> OpenClawInstall:
    """Write (or remove) the plugin folder; the config is the caller's (module doc)."""
    if uninstall:
        gone = sorted(str(p) for p in folder.glob("*")) if folder.is_dir() else []
        if not dry_run:
            shutil.rmtree(folder, ignore_errors=True)
        return OpenClawInstall(str(folder), "uninstall", gone, dry_run=dry_run)
    files = plugin_files()
    if not dry_run:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            atomic_write(folder / name, text)
    return OpenClawInstall(
        str(folder), "install", sorted(str(folder / n) for n in files), dry_run=dry_run
    )


__all__ = [
    "PLUGIN",
    "OpenClawInstall",
    "apply",
    "config_changes",
    "config_value",
    "install_openclaw",
    "load_paths",
    "manifest",
    "plugin_files",
]
