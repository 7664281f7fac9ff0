"""Standing intents (R-INTENT-1..3): "remember to do" compiled out of the model.

The service loads on first use: a one-shot hook where no intent was ever added (no
table at ``Workspace.intents_db_path``) has nothing to fire and never imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Fired, Intent
    from .service import Intents
    from .turn import add_intents

_HOME = {"Fired": ".model", "Intent": ".model", "Intents": ".service", "add_intents": ".turn"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Fired", "Intent", "Intents", "add_intents"]
