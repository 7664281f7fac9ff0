"""Registers the command groups of later features (each in its own module)."""

from __future__ import annotations

import contextlib
import importlib

for _name in ("recall", "mcp", "write", "dream", "serve", "demo"):
    with contextlib.suppress(ModuleNotFoundError):
        importlib.import_module(f"{__package__}.{_name}")
