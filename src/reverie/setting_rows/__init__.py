"""The settings table: every setting's name, default, help, type and bounds.

Pure data (the machinery that resolves them is :mod:`reverie.settings`).
"""

from __future__ import annotations

from .base import Setting
from .capabilities import CURATION, ESCALATION, INTEGRATIONS, INTENTS, SCOPE, USER
from .core import CORE

SETTINGS: tuple[Setting, ...] = (
    *CORE,
    *SCOPE,
    *USER,
    *INTENTS,
    *ESCALATION,
    *INTEGRATIONS,
    *CURATION,
)


__all__ = ["SETTINGS", "Setting"]
