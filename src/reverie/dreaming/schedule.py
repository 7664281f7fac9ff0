"""When the nightly dream is due: cron expressions read in local wall-clock time (pure).

Why these rules:

- **Wall-clock slots.** ``0 3 * * *`` means 03:00 on the kitchen clock, summer and
  winter alike, so slots are computed as naive local times and only then placed in the
  zone. On the spring-forward day a slot inside the skipped hour (``30 2 * * *`` in
  Europe/Berlin) still runs once, placed with the pre-transition offset, i.e. one hour
  later by the wall clock; on the fall-back day a slot in the repeated hour runs once, at
  its first occurrence.
- **Catch up once, never twice.** :func:`due_run` returns only the *latest* slot at or
  before ``now``, and only if it is after ``last_run``. A machine that slept through
  three nights runs one dream on wake; the caller then records that slot as
  ``last_run`` and no later tick finds anything until the next slot.
- **No history, nothing missed.** With ``last_run=None`` nothing is due: a daemon
  started for the first time at 10:00 does not replay the 03:00 slot it never saw.
  The caller records its first start as the baseline ``last_run`` instead, so a slot
  that passes while it runs (or while it is stopped, afterwards) is caught.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from croniter import croniter

from ..errors import ConfigError
from ..storage.files import atomic_write

log = logging.getLogger("reverie.daemon")

# Daylight-saving changes move wall time by at most a couple of hours; near one, look
# this far beyond ``now``'s wall time for slots whose real time lies on the other side.
_DST_WINDOW = timedelta(hours=3)
# A fuse on the candidates examined (a per-second cron over two windows stays below it).
_MAX_STEPS = 100_000


def validate(cron_expr: str) -> str:
    """``cron_expr`` stripped, or :class:`ConfigError` if it is not a cron expression."""
    expr = cron_expr.strip()
    if not expr or not croniter.is_valid(expr):
        raise ConfigError(f"dream_schedule: not a cron expression: {cron_expr!r}")
    return expr


def _place(naive: datetime, zone: tzinfo) -> datetime:
    """A naive wall-clock time as an aware time in ``zone`` (fold=0: the earlier
    reading of a repeated hour; in a skipped hour, the pre-transition offset)."""
    return naive.replace(tzinfo=zone, fold=0)


def _utc(moment: datetime) -> datetime:
    """Compare in UTC: aware datetimes sharing one tzinfo compare by wall time and
    ignore ``fold``, which is wrong in a repeated or skipped hour."""
    return moment.astimezone(UTC)


def _wall(now: datetime, zone: tzinfo) -> datetime:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    return now.astimezone(zone).replace(tzinfo=None, fold=0)


def _near_transition(wall: datetime, zone: tzinfo) -> bool:
    return zone.utcoffset(wall - _DST_WINDOW) != zone.utcoffset(wall + _DST_WINDOW)


def latest_slot(cron_expr: str, now: datetime, tz: tzinfo | None = None) -> datetime:
    """The latest scheduled time at or before ``now`` (aware, in ``tz``)."""
    zone = tz or now.tzinfo
    assert zone is not None
    wall = _wall(now, zone)
    # croniter's get_prev is strictly before its start; slots are whole seconds.
    start = wall.replace(microsecond=0) + timedelta(seconds=1)
    near = _near_transition(wall, zone)
    if near:  # a later wall time can be an earlier real time (the repeated hour)
        start += _DST_WINDOW
    it = croniter(validate(cron_expr), start)
    best: datetime | None = None
    for _ in range(_MAX_STEPS):
        naive = it.get_prev(datetime)
        if best is not None and (not near or naive < wall - _DST_WINDOW):
            return best
        slot = _place(naive, zone)
        if _utc(slot) <= _utc(now) and (best is None or _utc(slot) > _utc(best)):
            best = slot
    if best is not None:
        return best
    raise ConfigError(f"dream_schedule: no slot found before {now.isoformat()}")


def due_run(
    cron_expr: str, *, now: datetime, last_run: datetime | None, tz: tzinfo | None = None
) -> datetime | None:
    """The slot to run now, or None: the latest slot <= ``now`` if it is after
    ``last_run``. ``tz`` is the zone the expression is read in (default: ``now``'s);
    give an IANA zone (``zoneinfo``) for correct daylight-saving behaviour."""
    if last_run is None:
        return None
    slot = latest_slot(cron_expr, now, tz)
    return slot if _utc(slot) > _utc(last_run) else None


def next_run(cron_expr: str, now: datetime, tz: tzinfo | None = None) -> datetime:
    """The first scheduled time strictly after ``now`` (aware, in ``tz``)."""
    zone = tz or now.tzinfo
    assert zone is not None
    wall = _wall(now, zone)
    near = _near_transition(wall, zone)
    # An earlier wall time can be a later real time (a slot in the skipped hour).
    it = croniter(validate(cron_expr), wall - _DST_WINDOW if near else wall)
    best: datetime | None = None
    for _ in range(_MAX_STEPS):
        naive = it.get_next(datetime)
        if best is not None and (not near or naive > wall + _DST_WINDOW):
            return best
        slot = _place(naive, zone)
        if _utc(slot) > _utc(now) and (best is None or _utc(slot) < _utc(best)):
            best = slot
    if best is not None:
        return best
    raise ConfigError(f"dream_schedule: no slot found after {now.isoformat()}")


@dataclass
class DaemonState:
    """What survives restarts (the dream schedule) plus the current session's counters."""

    last_slot: str | None = None  # ISO time of the last dream slot handled (or the baseline)
    dream_runs: int = 0  # dreams started by a daemon, all sessions
    last_dream: dict[str, Any] | None = None
    pid: int | None = None
    started: str | None = None
    stopped: str | None = None
    syncs: int = 0  # this session
    sync_errors: int = 0
    last_sync: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> DaemonState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("%s unreadable (%s); starting a fresh schedule", path, exc)
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {k: data.pop(k) for k in list(data) if k in cls.__dataclass_fields__}
        known.pop("extra", None)
        try:
            return cls(**known, extra=data)
        except TypeError:
            return cls()

    def save(self, path: Path) -> None:
        data = asdict(self)
        data.update(data.pop("extra"))
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")

    def last_slot_time(self) -> datetime | None:
        if not self.last_slot:
            return None
        try:
            value = datetime.fromisoformat(self.last_slot)
        except (TypeError, ValueError):
            return None
        return value if value.tzinfo is not None else value.astimezone()


__all__ = ["DaemonState", "due_run", "latest_slot", "next_run", "validate"]
