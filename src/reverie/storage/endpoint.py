"""The daemon's loopback endpoint on disk: its port and bearer token.

``reverie serve`` writes it (mode 0600) into the agent's state dir
(:func:`reverie.storage.workspace.daemon_endpoint_path`) and keeps it across restarts,
so an installed HTTP hook's URL and header stay valid; the CLI and the installer read
it to reach the daemon. Light on purpose: the CLI's warm path imports it before
anything else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Endpoint:
    """Where the daemon listens, the token it asks for, and the workspace it serves."""

    port: int
    token: str
    workspace: str = ""

    @classmethod
    def load(cls, path: Path) -> Endpoint | None:
        """The endpoint kept at ``path``; None when absent or unreadable."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(int(data["port"]), str(data["token"]), str(data.get("workspace", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, path: Path) -> None:
        from .files import atomic_write  # the daemon writes; the CLI's warm path only reads

        text = json.dumps({"port": self.port, "token": self.token, "workspace": self.workspace})
        atomic_write(path, text + "\n")  # through a temp file made 0600, then renamed
        path.chmod(0o600)

    def url(self, route: str) -> str:
        return f"http://{HOST}:{self.port}{route}"


__all__ = ["HOST", "Endpoint"]
