"""Session transcripts: JSONL files in ``<state>/<agent>/sessions/<id>.jsonl``.

One JSON object per line, appended (one ``write`` per record, O_APPEND)::

    {"type": "session", "version": 1, "id": "...", "kind": "interactive",
     "channel": "direct", "sender": "alice", "owner": "alice", "started": "<iso>"}
    {"type": "message", "seq": 1, "ts": "<iso>", "source": "owner", "role": "user",
     "sender": "alice", "origin": "owner", "text": "..."}
    {"type": "compaction", "cycle": 1, "ts": "<iso>"}
    {"type": "flush", "cycle": 0, "ts": "<iso>", "status": "written"}
    {"type": "scope", "projects": ["github.com/acme/x"], "current": "github.com/acme/x"}
    {"type": "end", "ts": "<iso>"}

``origin`` is computed by code from the session context when the message is recorded
(:func:`reverie.provenance.origin_for`); a message whose ``source`` is ``recalled``
is memory the runtime injected and is never evidence.

The header written by the session API carries a ``seal``: an HMAC (origin key, state
dir) over its identity fields. It is the proof that Reverie wrote the header: a file
copied in from elsewhere, or whose header was edited (say, to name its own sender as
the owner), has no valid seal, and ingestion caps every line of it at ``untrusted``
(:mod:`reverie.write.ingest`).

:func:`load` validates every record before anything uses it: a ``seq`` that is no
positive integer, a ``ts`` that is no ISO date-time, a ``text`` that is no string, a
``cycle`` that is no integer, each is a :class:`ParseError` naming the file and line.
Each record is appended whole or not at all (:func:`reverie.write.journal.append_whole`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import ParseError, WriteError
from .journal import append_whole

VERSION = 1
SEALED_FIELDS = ("type", "version", "id", "kind", "channel", "sender", "owner", "started")


def _encode(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def append_record(path: Path, record: dict[str, Any]) -> int:
    """Append one record (whole or not at all); returns the file size afterwards."""
    data = _encode(record)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"{path.parent}: cannot create ({exc.strerror or exc})") from None
    return append_whole(path, data, mode=0o600) + len(data)


def seal(header: Mapping[str, Any], key: bytes) -> str:
    """The HMAC that proves the session API wrote ``header``."""
    body = json.dumps([header.get(k) for k in SEALED_FIELDS], ensure_ascii=False)
    return hmac.new(key, b"transcript\x00" + body.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def is_sealed(header: Mapping[str, Any], key: bytes) -> bool:
    """True when ``header`` carries a seal made with ``key`` over its current fields."""
    claimed = header.get("seal")
    return isinstance(claimed, str) and hmac.compare_digest(claimed, seal(header, key))


def create(path: Path, header: dict[str, Any], *, key: bytes | None) -> bool:
    """Write a new transcript holding ``header`` (sealed when ``key`` is given); False,
    writing nothing, when ``path`` already exists."""
    if key is not None:
        header = {**header, "seal": seal(header, key)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        append_whole(path, _encode(header), mode=0o600, exclusive=True)
    except FileExistsError:
        return False
    except OSError as exc:
        raise WriteError(f"{path}: cannot create ({exc.strerror or exc})") from None
    return True


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs; a malformed line raises ParseError naming it,
    except a torn last line (a crash mid-append), which is skipped."""
    for number, _end, record in _records(path):
        yield number, record


def _records(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset after the line, record), one line in memory at a time
    (issue 22.12: a session's own transcript can be far larger than memory should be)."""
    with path.open("rb") as fh:
        offset = 0
        number = 0
        for raw in fh:
            number += 1
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except RecursionError:
                raise ParseError(
                    "not a JSON record: nested too deeply", path=str(path), line=number
                ) from None
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                if not raw.endswith(b"\n") or not fh.read(1):  # a torn last line: skipped
                    continue
                raise ParseError(
                    f"not a JSON record ({exc})", path=str(path), line=number
                ) from None
            if not isinstance(record, dict) or "type" not in record:
                raise ParseError("record without a type", path=str(path), line=number)
            yield number, offset, record


def iter_messages(path: Path) -> Iterator[dict[str, Any]]:
    """The message records of ``path`` in order, streamed (validated as :func:`load`
    validates them; call :func:`load` first for the header and the structure)."""
    for number, _offset, rec in _records(path):
        if rec["type"] == "message":
            _check_message(rec, path, number)
            yield rec


def _kept_text(text: str, blocked: Callable[[str], bool]) -> str:
    """``text`` without the lines ``blocked`` selects, read raw and as ingestion reads
    them (injected blocks stripped, redacted, cleaned), so whatever a forget removed from
    the session corpus goes from the transcript it came from too."""
    from ..provenance.frames import strip_injected
    from ..provenance.redact import redact
    from .journal import clean_lines

    def gone(line: str) -> bool:
        items = clean_lines(redact(strip_injected(line)[0]).text)
        return blocked(line) or any(blocked(i) for i in items)

    return "\n".join(ln for ln in text.split("\n") if not gone(ln))


def forget_in(path: Path, blocked: Callable[[str], bool], *, dry_run: bool = False) -> int:
    """Remove the lines ``blocked`` selects from every record of transcript ``path`` but
    its header (whose seal covers only identity fields, so it stays valid). Each record
    is rewritten in place, padded with spaces to its old length: line numbers (the
    lane's anchors) and byte offsets stay, a session appending meanwhile loses nothing,
    and the old bytes are overwritten. Returns how many records changed (``dry_run``:
    would change; nothing is written)."""
    changed = 0
    with path.open("rb" if dry_run else "r+b") as fh:
        offset = 0
        while line := fh.readline():  # one record in memory at a time (issue 22.12)
            start, offset = offset, offset + len(line)
            raw = line.rstrip(b"\n")
            try:
                rec = json.loads(raw) if raw.strip() else None
            except (ValueError, UnicodeDecodeError):
                continue  # a torn last line: nothing to keep it from
            if not isinstance(rec, dict) or rec.get("type") == "session":
                continue
            new = {
                k: _kept_text(v, blocked) if isinstance(v, str) and k not in _IDENTITY else v
                for k, v in rec.items()
            }
            if new == rec:
                continue
            changed += 1
            if dry_run:
                continue
            body = _encode(new).rstrip(b"\n")
            if len(body) > len(raw):  # written with other spacing or escapes
                body = json.dumps(new, separators=(",", ":")).encode("ascii")
            if len(body) > len(raw):  # cannot happen for what Reverie wrote: blank it
                body = b""
            fh.seek(start)
            fh.write(body.ljust(len(raw), b" "))
            fh.seek(offset)
        if not dry_run:
            fh.flush()
            os.fsync(fh.fileno())
    return changed


_IDENTITY = frozenset({"type", "source", "role", "sender", "origin", "ts", "id", "kind"})


@dataclass
class TranscriptState:
    """A transcript file replayed: header, messages, cycle and flush state."""

    header: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)  # empty unless kept
    message_count: int = 0
    last_seq: int = 0
    cycle: int = 0
    flushed_cycle: int = -1
    tokens_in_cycle: int = 0
    ended: bool = False
    cycle_start_bytes: int = 0  # transcript size when the current cycle began
    cycle_start_message: int = 0  # index into messages where the current cycle began
    scope: dict[str, Any] | None = None  # the last "scope" record: the active projects
    projects: dict[int, str] = field(default_factory=dict)  # message seq -> its project


def _int(rec: Mapping[str, Any], name: str, path: Path, number: int, *, minimum: int) -> int:
    value = rec.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParseError(
            f"{name} must be an integer >= {minimum}, not {value!r}", path=str(path), line=number
        )
    return value


def _check_message(rec: Mapping[str, Any], path: Path, number: int) -> None:
    _int(rec, "seq", path, number, minimum=1)
    if not isinstance(rec.get("text"), str):
        raise ParseError(
            f"text must be a string, not {rec.get('text')!r}", path=str(path), line=number
        )
    ts = rec.get("ts")
    if ts is not None:
        try:
            datetime.fromisoformat(ts if isinstance(ts, str) else "")
        except ValueError:
            raise ParseError(
                f"ts must be an ISO date-time, not {ts!r}", path=str(path), line=number
            ) from None
    for name in ("source", "role", "sender", "origin"):
        if rec.get(name) is not None and not isinstance(rec[name], str):
            raise ParseError(f"{name} must be a string", path=str(path), line=number)


def message_day(msg: Mapping[str, Any], default: datetime) -> str:
    """The calendar day (``YYYY-MM-DD``) of a message validated by :func:`load`."""
    ts = msg.get("ts")
    return (datetime.fromisoformat(ts) if isinstance(ts, str) else default).date().isoformat()


def load(path: Path, *, keep_messages: bool = True) -> TranscriptState:
    """Replay ``path``; every record is validated first (:class:`ParseError` names the
    file and line of the first bad one). ``keep_messages=False``: the messages are
    counted, not kept (stream them with :func:`iter_messages`: bounded memory)."""
    from ..tokens import count_tokens

    state: TranscriptState | None = None
    for number, offset, rec in _records(path):
        kind = rec["type"]
        if kind == "message":
            _check_message(rec, path, number)
        elif kind in ("compaction", "flush") and "cycle" in rec:
            _int(rec, "cycle", path, number, minimum=-1)
        if kind == "session":
            state = TranscriptState(header=rec)
            continue
        if state is None:
            raise ParseError(
                "transcript does not start with a session record", path=str(path), line=number
            )
        if kind == "message":
            state.message_count += 1
            state.last_seq = max(state.last_seq, int(rec["seq"]))
            if keep_messages:
                state.messages.append(rec)
            current = (state.scope or {}).get("current")
            if isinstance(current, str):  # where the agent worked when it came in
                state.projects[int(rec["seq"])] = current
            state.tokens_in_cycle += count_tokens(str(rec.get("text", "")))
        elif kind == "compaction":
            state.cycle = rec.get("cycle", state.cycle + 1)
            state.tokens_in_cycle = 0
            state.cycle_start_bytes = offset
            state.cycle_start_message = state.message_count
        elif kind == "flush":
            state.flushed_cycle = max(state.flushed_cycle, rec.get("cycle", -1))
        elif kind == "end":
            state.ended = True
        elif kind == "scope":
            state.scope = rec
    if state is None:
        raise ParseError("empty transcript", path=str(path))
    return state


__all__ = [
    "VERSION",
    "TranscriptState",
    "append_record",
    "create",
    "forget_in",
    "is_sealed",
    "iter_messages",
    "load",
    "message_day",
    "read_records",
    "seal",
]
