"""What the facade is built from (only :mod:`reverie.engine` imports this package):
the adapters and the index's upkeep (:mod:`.adapters`), the one wait policy of every
lock (:data:`WAITS`), and the dreaming doors (:mod:`.doors`)."""

from __future__ import annotations

from .adapters import (
    UNSET,
    WAITS,
    Adapters,
    Projects,
    Refresh,
    Unset,
    Waits,
    sealed,
)
from .doors import DreamDoor, UserDoor
from .sync_door import SyncDoor

__all__ = [
    "UNSET",
    "WAITS",
    "Adapters",
    "DreamDoor",
    "Projects",
    "Refresh",
    "SyncDoor",
    "Unset",
    "UserDoor",
    "Waits",
    "sealed",
]
