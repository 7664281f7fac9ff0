"""The dream state (``<state>/<agent>/dreaming/state.json``), typed.

What dreaming remembers across nights: how often each candidate was staged by light
sleep and gathered by REM, what was promoted (by a dream or by the owner), what the
owner rejected (by key and by a hash of its content, so it stays rejected when its
line moves), the last run and which ``MEMORY.md`` the index holds.

The file stays plain JSON a person can read; keys this version does not know are kept
as they are (a newer version's state is never thrown away by an older one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import ReverieError
from ..storage.files import atomic_write
from ..timewords import cron_in_words
from .memory_file import clean_snippet, normalise

KEEP_DAYS = 30  # a promoted entry stays this long unless superseded (issue 39, point 4)

_KNOWN = ("light_hits", "rem_hits", "promoted", "rejected", "last_run", "indexed_memory")


def content_hash(snippet: str) -> str:
    """The identity of a candidate's content (whitespace and markup aside)."""
    return hashlib.sha256(normalise(clean_snippet(snippet)).encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Promoted:
    """One promotion: when, which source anchor, and ``by`` the owner or a dream."""

    at: str
    source: str
    by: str = "dream"

    def as_json(self) -> dict[str, str]:
        out = {"at": self.at, "source": self.source}
        return out if self.by == "dream" else {**out, "by": self.by}


@dataclass(frozen=True)
class OwnerRejection:
    """The owner's ``reverie dream reject``: never promoted, by key or by content."""

    at: str
    source: str
    content: str

    def as_json(self) -> dict[str, str]:
        return {"at": self.at, "source": self.source, "content": self.content}


def _counts(raw: object) -> dict[str, int]:
    if not isinstance(raw, dict):
        return {}
    out: dict[str, int] = {}
    for k, v in raw.items():
        try:
            out[str(k)] = int(v)
        except (TypeError, ValueError):
            continue
    return out


def _text(raw: object) -> str | None:
    return raw if isinstance(raw, str) else None


@dataclass
class DreamState:
    """The dream state in memory; :class:`StateFile` reads and writes it."""

    light_hits: dict[str, int] = field(default_factory=dict)
    rem_hits: dict[str, int] = field(default_factory=dict)
    promoted: dict[str, Promoted] = field(default_factory=dict)
    rejected: dict[str, OwnerRejection] = field(default_factory=dict)
    last_run: str | None = None
    indexed_memory: str | None = None
    unknown: dict[str, Any] = field(default_factory=dict)

    def recent(self, now: datetime, days: int = KEEP_DAYS) -> dict[str, float]:
        """The source anchors promoted in the last ``days``, each needed in full: a
        promoted entry does not leave MEMORY.md within a month unless superseded."""

        def utc(t: datetime) -> datetime:  # (a naive stamp is UTC, as dreams write them)
            return t if t.tzinfo else t.replace(tzinfo=UTC)

        out: dict[str, float] = {}
        for p in self.promoted.values():
            with contextlib.suppress(ValueError):
                if utc(now) - utc(datetime.fromisoformat(p.at)) <= timedelta(days=days):
                    out[p.source] = 1.0
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DreamState:
        promoted = {
            str(k): Promoted(
                str(v.get("at", "")), str(v.get("source", "")), str(v.get("by", "dream"))
            )
            for k, v in (data.get("promoted") or {}).items()
            if isinstance(v, dict)
        }
        rejected = {
            str(k): OwnerRejection(
                str(v.get("at", "")), str(v.get("source", "")), str(v.get("content", ""))
            )
            for k, v in (data.get("rejected") or {}).items()
            if isinstance(v, dict)
        }
        return cls(
            light_hits=_counts(data.get("light_hits")),
            rem_hits=_counts(data.get("rem_hits")),
            promoted=promoted,
            rejected=rejected,
            last_run=_text(data.get("last_run")),
            indexed_memory=_text(data.get("indexed_memory")),
            unknown={k: v for k, v in data.items() if k not in _KNOWN},
        )

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.unknown,
            "light_hits": dict(self.light_hits),
            "rem_hits": dict(self.rem_hits),
            "promoted": {k: v.as_json() for k, v in self.promoted.items()},
        }
        if self.rejected:
            out["rejected"] = {k: v.as_json() for k, v in self.rejected.items()}
        if self.last_run is not None:
            out["last_run"] = self.last_run
        if self.indexed_memory is not None:
            out["indexed_memory"] = self.indexed_memory
        return out

    def owner_rejected(self, key: str, snippet: str) -> bool:
        """The owner rejected this candidate (by key, or its content on another line)."""
        if key in self.rejected:
            return True
        h = content_hash(snippet)
        return any(r.content == h for r in self.rejected.values())


@dataclass(frozen=True)
class DreamStatus:
    """``reverie dream status``: on or off, the schedule, the last run, how many
    candidates were promoted so far and the pre-images kept (oldest first)."""

    enabled: bool
    schedule: str
    last_run: str | None
    promoted: int
    preimages: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "schedule": self.schedule,
            "schedule_in_words": cron_in_words(self.schedule),
            "last_run": self.last_run,
            "promoted": self.promoted,
            "preimages": list(self.preimages),
        }


class StateFile:
    """Reads and atomically rewrites the dream state; a corrupt file is an error that
    names it (never silently reset: the owner's rejections live there)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> DreamState:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return DreamState()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReverieError(f"{self.path}: corrupt dreaming state ({exc})") from None
        if not isinstance(data, dict):
            raise ReverieError(f"{self.path}: corrupt dreaming state (not a JSON object)")
        return DreamState.from_json(data)

    def save(self, state: DreamState) -> None:
        text = json.dumps(state.as_json(), ensure_ascii=False, indent=1, sort_keys=True)
        atomic_write(self.path, text)


__all__ = ["DreamState", "DreamStatus", "OwnerRejection", "Promoted", "StateFile", "content_hash"]
