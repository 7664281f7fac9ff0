"""Session transcripts: JSONL files in ``<state>/<agent>/sessions/<id>.jsonl``.

One JSON object per line, appended (one ``write`` per record, O_APPEND)::

    {"type": "session", "version": 1, "id": "...", "kind": "interactive",
     "channel": "direct", "sender": "alice", "owner": "alice", "started": "<iso>"}
    {"type": "message", "seq": 1, "ts": "<iso>", "source": "owner", "role": "user",
     "sender": "alice", "origin": "owner", "text": "..."}
    {"type": "compaction", "cycle": 1, "ts": "<iso>"}
    {"type": "flush", "cycle": 0, "ts": "<iso>", "status": "written"}
    {"type": "end", "ts": "<iso>"}

``origin`` is computed by code from the session context when the message is recorded
(:func:`reverie.provenance.origin_for`); a message whose ``source`` is ``recalled``
is memory the runtime injected and is never evidence.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParseError

VERSION = 1


def append_record(path: Path, record: dict[str, Any]) -> int:
    """Append one record; returns the file size afterwards."""
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs; a malformed line raises ParseError naming it,
    except a torn last line (a crash mid-append), which is skipped."""
    for number, _end, record in _records(path):
        yield number, record


def _records(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset after the line, record)."""
    with path.open("rb") as fh:
        lines = fh.read().split(b"\n")
    offset = 0
    for number, raw in enumerate(lines, start=1):
        offset += len(raw) + 1
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                continue
            raise ParseError(f"not a JSON record ({exc})", path=str(path), line=number) from None
        if not isinstance(record, dict) or "type" not in record:
            raise ParseError("record without a type", path=str(path), line=number)
        yield number, offset, record


@dataclass
class TranscriptState:
    """A transcript file replayed: header, messages, cycle and flush state."""

    header: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    cycle: int = 0
    flushed_cycle: int = -1
    tokens_in_cycle: int = 0
    ended: bool = False
    cycle_start_bytes: int = 0  # transcript size when the current cycle began
    cycle_start_message: int = 0  # index into messages where the current cycle began


def load(path: Path) -> TranscriptState:
    from ..tokens import count_tokens

    state: TranscriptState | None = None
    for number, offset, rec in _records(path):
        kind = rec["type"]
        if kind == "session":
            state = TranscriptState(header=rec)
            continue
        if state is None:
            raise ParseError(
                "transcript does not start with a session record", path=str(path), line=number
            )
        if kind == "message":
            state.messages.append(rec)
            state.tokens_in_cycle += count_tokens(str(rec.get("text", "")))
        elif kind == "compaction":
            state.cycle = int(rec.get("cycle", state.cycle + 1))
            state.tokens_in_cycle = 0
            state.cycle_start_bytes = offset
            state.cycle_start_message = len(state.messages)
        elif kind == "flush":
            state.flushed_cycle = max(state.flushed_cycle, int(rec.get("cycle", -1)))
        elif kind == "end":
            state.ended = True
    if state is None:
        raise ParseError("empty transcript", path=str(path))
    return state


__all__ = ["VERSION", "TranscriptState", "append_record", "load", "read_records"]
