"""The owner's trusted folders (``reverie trust PATH``), a small JSON list in the state
dir: never in the workspace, so no text the agent or a page writes can change it."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ParseError
from .files import atomic_write


def load_trusted(path: Path) -> frozenset[str]:
    """The trusted folders (workspace-relative POSIX paths); none when absent."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return frozenset()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"corrupt trusted-folder list ({exc})", path=str(path)) from None
    if not isinstance(data, list):
        raise ParseError("the trusted-folder list is not a JSON list", path=str(path))
    return frozenset(str(f) for f in data)


def save_trusted(path: Path, folders: frozenset[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(sorted(folders), indent=1))


__all__ = ["load_trusted", "save_trusted"]
