"""What one ``reverie serve`` session did."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Summary:
    """The session's result (``reverie serve --json`` prints it)."""

    syncs: int = 0
    sync_errors: int = 0
    sync_interrupted: bool = False
    dreams: int = 0
    dream_errors: int = 0
    dreams_skipped: int = 0
    next_dream: str | None = None
    git_syncs: int = 0  # ``--sync-every``: git syncs run, and those that failed
    git_sync_errors: int = 0
    state_dir_lost: bool = False  # the state dir (its lock) vanished: the daemon stopped

    @property
    def failed(self) -> bool:
        return bool(self.sync_errors or self.dream_errors or self.state_dir_lost)


__all__ = ["Summary"]
