"""``reverie install hermes``: Reverie as Hermes Agent's memory provider (issue 42).

Hermes loads a user's memory provider from ``$HERMES_HOME/plugins/<name>/__init__.py``
and activates the one ``memory.provider`` names in its ``config.yaml``. This writes
``plugins/reverie/``: the provider (:mod:`reverie.integrations.hermes_plugin`, copied as
it is), a ``plugin.yaml`` Hermes lists it by, and ``config.json``: the command that
starts this ``reverie`` with its workspace and state folder (absolute), the memory
tools' schemas in Hermes's function format (one definition,
:mod:`reverie.provenance.agent_tools`) and the platform ids that are the owner's.
Installing again rewrites the three files; ``uninstall`` removes the folder and nothing
else.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..provenance.agent_tools import TOOLS
from ..storage.files import atomic_write
from . import hermes_plugin

PLUGIN = "reverie"


@dataclass(frozen=True)
class HermesInstall:
    """What an install (or uninstall) wrote (or removed), in which folder."""

    folder: str
    action: str  # install | uninstall
    files: list[str] = field(default_factory=list)
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def tool_schemas() -> list[dict[str, Any]]:
    """The memory tools as Hermes's providers declare them (OpenAI function format)."""
    return [
        {"name": s.name, "description": s.description, "parameters": s.schema()}
        for s in TOOLS.values()
    ]


def plugin_files(command: Sequence[str], owner_ids: Mapping[str, str]) -> dict[str, str]:
    """File name -> text of the plugin folder."""
    config = {"command": list(command), "tools": tool_schemas(), "owner_ids": dict(owner_ids)}
    meta = {
        "name": PLUGIN,
        "description": "Reverie: durable, inspectable, poisoning-resistant memory in "
        "Markdown files (search, dreaming, provenance, forget).",
        "pip_dependencies": [],
    }
    return {
        "__init__.py": Path(hermes_plugin.__file__).read_text(encoding="utf-8"),
        "plugin.yaml": "".join(f"{k}: {json.dumps(v)}\n" for k, v in meta.items()),
        "config.json": json.dumps(config, ensure_ascii=False, indent=2) + "\n",
    }


def install_hermes(
    home: Path,
    command: Sequence[str],
    *,
    owner_ids: Mapping[str, str] | None = None,
    uninstall: bool = False,
    dry_run: bool = False,
) -> HermesInstall:
    """Write (or remove) ``home/plugins/reverie/`` (module doc)."""
    folder = home.expanduser() / "plugins" / PLUGIN
    if uninstall:
        gone = sorted(str(p) for p in folder.glob("*")) if folder.is_dir() else []
        if not dry_run:
            shutil.rmtree(folder, ignore_errors=True)
        return HermesInstall(str(folder), "uninstall", gone, dry_run)
    files = plugin_files(command, owner_ids or {})
    if not dry_run:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            atomic_write(folder / name, text)
    return HermesInstall(str(folder), "install", sorted(str(folder / n) for n in files), dry_run)


__all__ = ["PLUGIN", "HermesInstall", "install_hermes", "plugin_files", "tool_schemas"]
