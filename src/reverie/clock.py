"""A clock that tests can set: ``REVERIE_NOW=2026-05-01T09:00:00`` (local time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from .errors import ConfigError


@dataclass(frozen=True)
class Clock:
    fixed: datetime | None = None

    def now(self) -> datetime:
        """Aware local time."""
        if self.fixed is not None:
            return self.fixed
        return datetime.now().astimezone()

    def today(self) -> date:
        return self.now().date()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Clock:
        env = os.environ if environ is None else environ
        raw = env.get("REVERIE_NOW", "").strip()
        if not raw:
            return cls()
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise ConfigError(f"REVERIE_NOW: not an ISO date-time: {raw!r}") from None
        if value.tzinfo is None:
            value = value.astimezone()
        return cls(value)


__all__ = ["Clock"]
