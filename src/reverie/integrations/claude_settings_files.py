"""Claude Code's JSON settings files read and written for ``reverie install``: loaded
with their indentation, dumped in it, and given back as they were on uninstall (see
:func:`uninstalled`)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..storage import reader

Strip = Callable[..., None]  # strip(data, prune=True): remove our entries in place


def load(path: Path) -> tuple[str | None, dict[str, Any], str | int]:
    """(text, data, indent) of a JSON settings file (absent: None, {}, 2)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}, 2
    if (bad := reader.undecodable(raw, str(path))) is not None:
        raise ConfigError(f"{bad}; fix or move it first")
    text = raw.decode("utf-8")
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


def dump(data: dict[str, Any], indent: str | int, like: str | None) -> str:
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if like is None or like.endswith("\n") else text


def _backups(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The backups an earlier install or uninstall made of ``path``, newest first."""
    out = []
    for backup in sorted(path.parent.glob(f"{path.name}.reverie-*.bak"), reverse=True):
        try:
            text = backup.read_text(encoding="utf-8")
            data = json.loads(text) if text.strip() else {}
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            out.append((text, data))
    return out


def uninstalled(
    path: Path, before: str, data: dict[str, Any], strip: Strip, indent: str | int
) -> str | None:
    """The text of ``path`` without our entries, as it was before the install when it
    can be: a backup holding exactly what is left is given back byte for byte (so
    install then uninstall is the identity). Otherwise the entries are removed and a
    container the install emptied goes too, unless the last backup shows it was there
    before (an empty ``"mcpServers": {}`` of yours stays). None: delete the file (the
    install created it and nothing else is in it)."""
    kept = copy.deepcopy(data)
    strip(kept, prune=False)
    if kept == data:
        return before  # nothing of ours in it
    pruned = copy.deepcopy(data)
    strip(pruned)
    backups = _backups(path)
    for text, previous in backups:
        if previous in (kept, pruned):
            return text
    if not backups and not pruned:
        return None
    result = pruned
    if backups:
        previous = copy.deepcopy(backups[0][1])
        strip(previous)  # a container that held only ours came from an earlier install
        result = _keep_containers(pruned, kept, previous)
    if result == data:
        return before
    return dump(result, indent, before)


def _keep_containers(
    pruned: dict[str, Any], kept: dict[str, Any], previous: dict[str, Any]
) -> dict[str, Any]:
    """``pruned`` with the empty containers of ``kept`` that ``previous`` also had."""
    out = copy.deepcopy(pruned)
    for key in ("hooks", "mcpServers"):
        if key in kept and key in previous and key not in out:
            out[key] = {}
    hooks, was = kept.get("hooks"), previous.get("hooks")
    if isinstance(hooks, dict) and isinstance(was, dict) and isinstance(out.get("hooks"), dict):
        for event in hooks:
            if event in was and event not in out["hooks"]:
                out["hooks"][event] = []
    return out


__all__ = ["Strip", "dump", "load", "uninstalled"]
