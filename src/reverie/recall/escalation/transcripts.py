"""Live transcripts as a source: the direct conversations of this agent that have not
ended yet (so are not in the session corpus), searched and read by the lane.

A transcript is input (a file anyone could edit), so it is read the way ingestion reads
it: its sessions must pass the privacy rules (:mod:`.privacy`, via the caller's
``refusal``), each message's origin is the recorded one never above what its source
allows in that session (:func:`reverie.provenance.origin_for`), memory the runtime
injected (``recalled``) and scaffolding are never shown, and injected blocks quoted
inside a message are stripped. Anchors are ``sessions/<id>.jsonl#L<a>-L<b>``, the
JSONL line numbers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...provenance.frames import strip_injected
from ...provenance.origin import Channel, Origin, SessionKind, Source, lowest, origin_for
from ...storage.workspace import transcript_name
from ...tokens import token_set
from .protocol import Line, Segment, runs

PREFIX = "sessions/"
MAX_FILES = 64  # the most recently changed transcripts
MAX_BYTES = 4 << 20
LINE_CHARS = 600
_PATH = re.compile(r"sessions/([A-Za-z0-9_.-]{1,64})\.jsonl")
_HIDDEN = {Source.RECALLED.value, Source.SCAFFOLD.value}


def session_of(path: str) -> str | None:
    """The session id of a transcript anchor path ``sessions/<id>.jsonl``, else None."""
    m = _PATH.fullmatch(path)
    return m.group(1) if m and set(m.group(1)) != {"."} else None


def _origin(msg: dict[str, Any], header: dict[str, Any]) -> Origin:
    recorded = Origin.parse(msg.get("origin") if isinstance(msg.get("origin"), str) else None)
    try:
        source = Source(str(msg.get("source")))
        kind = SessionKind(str(header.get("kind")))
        channel = Channel(str(header.get("channel")))
    except ValueError:
        return Origin.UNTRUSTED
    sender = msg.get("sender") if isinstance(msg.get("sender"), str) else None
    owner = header.get("owner") if isinstance(header.get("owner"), str) else None
    allowed = origin_for(source, session_kind=kind, channel=channel, sender=sender, owner=owner)
    return lowest(recorded or Origin.UNTRUSTED, allowed)


def _lines(path: Path) -> tuple[list[Line], bool]:
    """The messages of a transcript as lines (hidden ones left out), and whether it
    ended. Unreadable or malformed files give nothing."""
    try:
        if path.is_symlink() or path.stat().st_size > MAX_BYTES:
            return [], False
        raw = path.read_bytes().split(b"\n")
    except OSError:
        return [], False
    header: dict[str, Any] | None = None
    out: list[Line] = []
    ended = False
    for number, data in enumerate(raw, start=1):
        try:
            rec = json.loads(data) if data.strip() else None
        except ValueError:
            continue  # a torn line
        if not isinstance(rec, dict):
            continue
        if header is None:
            if rec.get("type") != "session":
                return [], False
            header = rec
            continue
        ended = ended or rec.get("type") == "end"
        text = rec.get("text")
        if rec.get("type") != "message" or not isinstance(text, str):
            continue
        if rec.get("source") in _HIDDEN:
            continue
        origin = _origin(rec, header)
        if origin is Origin.SYSTEM:
            continue
        body = " ".join(strip_injected(text)[0].split())[:LINE_CHARS]
        if body:
            out.append(Line(number, f"{rec.get('role', '?')}: {body}", origin))
    return out, ended


class LiveTranscripts:
    """Search and read the live direct conversations that pass ``refusal``."""

    def __init__(
        self, sessions_dir: Path, refusal: Callable[[str], str | None], skip: frozenset[str]
    ) -> None:
        self.dir = sessions_dir
        self._refusal = refusal
        # texts already in the lane's prompt (the latest turns), as lines show them
        self._skip = frozenset(" ".join(t.split())[:LINE_CHARS] for t in skip)

    def _files(self) -> list[Path]:
        try:
            found = [p for p in self.dir.glob("*.jsonl") if p.is_file()]
        except OSError:
            return []
        found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return found[:MAX_FILES]

    def search(self, query: str, limit: int) -> list[Segment]:
        """The ``limit`` messages sharing the rarest words with ``query`` (IDF-weighted
        overlap over the messages scanned), one segment each."""
        want = token_set(query)
        if not want:
            return []
        docs: list[tuple[str, Line, frozenset[str]]] = []
        for path in self._files():
            sid = session_of(f"{PREFIX}{path.name}")
            if sid is None:
                continue
            lines, ended = _lines(path)
            if ended or not lines or self._refusal(sid) is not None:
                continue  # ended: its lines are in the session corpus already
            for ln in lines:
                if ln.text.split(": ", 1)[-1] not in self._skip:
                    docs.append((sid, ln, token_set(ln.text)))
        df: dict[str, int] = {}
        for _, _, toks in docs:
            for t in toks & want:
                df[t] = df.get(t, 0) + 1
        n = len(docs)
        scored = [
            (sum(math.log(1 + n / df[t]) for t in toks & want), i)
            for i, (_, _, toks) in enumerate(docs)
            if toks & want
        ]
        scored.sort(key=lambda x: (-x[0], x[1]))
        out: list[Segment] = []
        for _, i in scored[:limit]:
            sid, ln, _ = docs[i]
            out += runs(PREFIX + transcript_name(sid), [ln])
        return out

    def read(self, session_id: str, first: int, last: int) -> list[Segment]:
        """The shown lines ``first..last`` of a transcript that passes the rules."""
        why = self._refusal(session_id)
        if why is not None:
            raise PermissionError(why)
        lines, _ = _lines(self.dir / transcript_name(session_id))
        keep = [ln for ln in lines if first <= ln.number <= last]
        return runs(PREFIX + transcript_name(session_id), keep)


__all__ = ["PREFIX", "LiveTranscripts", "session_of"]
