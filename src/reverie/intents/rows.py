"""The intents table's row, on every backend: its columns (:data:`COLUMNS`), how an
intent is stored (:func:`to_row`: times as UTC ISO strings, which sort as they compare;
triggers as JSON) and read back (:func:`from_row`), and the stamps of a time."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any

from .model import Intent, Kind, Status

COLUMNS = [
    "id",
    "kind",
    "status",
    "text",
    "origin",
    "proposed_by",
    "created",
    "confirmed",
    "ended",
    "at",
    "cron",
    "tz",
    "triggers",
    "review_by",
    "expires",
    "cooldown_s",
    "budget",
    "fired",
    "last_fired",
    "next_turn",
    "next_notify",
]
_TIMES = {"created", "confirmed", "ended", "at", "review_by", "expires", "last_fired"}
_TIMES |= {"next_turn", "next_notify"}


def utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


def stamp(moment: datetime) -> str:
    """``moment`` as stored (UTC, seconds)."""
    return utc(moment) or ""


def local(moment: datetime | None, zone: tzinfo) -> str:
    """``moment`` in ``zone``, to the minute, for people ("" for none)."""
    return moment.astimezone(zone).isoformat(timespec="minutes") if moment else ""


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def to_row(intent: Intent) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for c in COLUMNS:
        v = getattr(intent, c)
        if c in _TIMES:
            v = utc(v)
        elif c == "triggers":
            v = json.dumps([list(t) for t in v], ensure_ascii=False)
        elif c in ("kind", "status"):
            v = v.value
        row[c] = v
    return row


def from_row(row: Sequence[Any]) -> Intent:
    d = dict(zip(COLUMNS, row, strict=True))
    for c in _TIMES:
        d[c] = _time(d[c])
    d["triggers"] = tuple(tuple(t) for t in json.loads(d["triggers"]))
    d["kind"], d["status"] = Kind(d["kind"]), Status(d["status"])
    return Intent(**d)


__all__ = ["COLUMNS", "from_row", "local", "stamp", "to_row", "utc"]
