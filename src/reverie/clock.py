"""A clock that tests can set: ``REVERIE_NOW=2026-05-01T09:00:00`` (local time).

``REVERIE_NOW`` alone freezes time, which suits one-shot commands. A long-running
process (the daemon) needs time to pass, so ``REVERIE_CLOCK=advance`` makes the clock
start at ``REVERIE_NOW`` and move on with real elapsed (monotonic) time: a test can
start a daemon two seconds before 03:00 and watch the nightly dream happen.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Final

from .errors import ConfigError

CLOCK_MODES = ("fixed", "advance")


class Clock:
    """The time Reverie runs on: real, or fixed for tests and demos (``REVERIE_NOW``).
    With ``fixed`` and ``advance``: it starts there and advances with real elapsed time.
    Immutable; two clocks are equal when they read the same ``fixed`` and ``advance``."""

    __slots__ = ("advance", "fixed", "started")

    def __init__(self, fixed: datetime | None = None, advance: bool = False) -> None:
        self.fixed: Final = fixed
        self.advance: Final = advance
        self.started: Final = time.monotonic()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Clock):
            return NotImplemented
        return (self.fixed, self.advance) == (other.fixed, other.advance)

    def __hash__(self) -> int:
        return hash((self.fixed, self.advance))

    def __repr__(self) -> str:
        return f"Clock(fixed={self.fixed!r}, advance={self.advance!r})"

    def now(self) -> datetime:
        """Aware local time."""
        if self.fixed is not None:
            if self.advance:
                return self.fixed + timedelta(seconds=time.monotonic() - self.started)
            return self.fixed
        return datetime.now().astimezone()

    def today(self) -> date:
        return self.now().date()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Clock:
        env = os.environ if environ is None else environ
        raw = env.get("REVERIE_NOW", "").strip()
        mode = env.get("REVERIE_CLOCK", "").strip().lower() or "fixed"
        if mode not in CLOCK_MODES:
            raise ConfigError(f"REVERIE_CLOCK: expected one of {', '.join(CLOCK_MODES)}: {mode!r}")
        if not raw:
            return cls()
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise ConfigError(f"REVERIE_NOW: not an ISO date-time: {raw!r}") from None
        if value.tzinfo is None:
            value = value.astimezone()
        return cls(value, advance=mode == "advance")


def local_zone(environ: Mapping[str, str] | None = None) -> tzinfo:
    """The machine's time zone with its daylight-saving rules (an IANA zone).

    ``datetime.now().astimezone()`` only gives today's fixed offset, which is wrong for
    a schedule that crosses a DST change, so look the zone up by name: ``TZ``, then the
    ``/etc/localtime`` link, then ``/etc/timezone``. If none names a known zone (some
    containers, Windows without tzdata) fall back to the current fixed offset.
    """
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # (only when a zone is asked for)

    env = os.environ if environ is None else environ
    tz = env.get("TZ", "").strip().lstrip(":")
    names = [tz] if tz else _system_zone_names()  # a TZ the C library obeys wins
    for name in names:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
    fallback = datetime.now().astimezone().tzinfo
    assert fallback is not None
    return fallback


def _system_zone_names() -> list[str]:
    names: list[str] = []
    target = os.path.realpath("/etc/localtime")
    if "/zoneinfo/" in target:
        names.append(target.split("/zoneinfo/", 1)[1])
    with contextlib.suppress(OSError):
        names.append(Path("/etc/timezone").read_text(encoding="utf-8", errors="replace").strip())
    return names


__all__ = ["CLOCK_MODES", "Clock", "local_zone"]
