"""A Claude Code session mirrored into a Reverie session, then ingested (R-WRITE-3).

Claude Code writes its own transcript; Reverie's ingestion trusts only transcripts the
session API wrote (sealed, in the state dir). So the turns of the Claude Code file are
*recorded* through :class:`reverie.session.Session` with their declared sources
(:mod:`.claude_transcript`): the session computes every origin (the owner at the
terminal, tool output untrusted, a reply after tool output tainted), and the existing
ingestion (its redaction, its R-PROV-4 stripping, its per-transcript checkpoint) turns
the mirror into dreaming evidence. Sub-agent (sidechain) turns go to a second session of
kind ``subagent``, which ingestion never takes as evidence (R-PROV-3).

Incremental: a checkpoint (``<state>/<agent>/integrations/claude-code/<id>.json``) holds
the byte offset of the Claude Code transcript read so far, the line number there and the
session's ``cwd`` (the project the session ran in, for project scope). Pre-compact reads
up to the end and ingests; session-end does the same and ends the session. Nothing is
recorded, or ingested, twice.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock

from ..engine import Reverie
from ..errors import ReverieError
from ..provenance.origin import SessionKind, Source
from ..session import Session
from ..storage import reader
from ..storage.files import atomic_write
from ..storage.workspace import checkpoint_paths
from .claude_transcript import Turn, parse, parse_ts

# The person at the terminal of a Claude Code session is the owner, on a direct channel.
OWNER = "owner"
RECALLED_KEPT = 400
"""A recalled record (a hook's injected context, a compaction summary: stripped at
ingestion, R-PROV-4) keeps only this many characters in the mirror: each turn's whole
injected context would otherwise be stored again, tens of KB a turn (issue 40, 11)."""
CHUNK_BYTES = 4 * 1024 * 1024
"""A pass reads the transcript this much at a time (checkpointed after each chunk), so
a 150 MB transcript costs one chunk of memory, not the whole file; a single record
longer than a chunk is skipped with a warning naming its line."""


@dataclass
class MirrorResult:
    """What one pass over a Claude Code transcript did."""

    session_id: str
    recorded: int = 0
    sidechain: int = 0
    scaffold: int = 0
    lines_read: int = 0
    lines_written: int = 0
    recalled_stripped: int = 0
    origins: dict[str, int] = field(default_factory=dict)
    cwd: str | None = None
    ended: bool = False
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def session_key(claude_session_id: str) -> str:
    """Our session id for a Claude Code session id (letters, digits, ``_.-``; <= 64)."""
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", claude_session_id)[:56] or "unknown"
    return f"cc-{clean}"


def checkpoint_dir(engine: Reverie) -> Path:
    return engine.workspace.integration_dir("claude-code")


def _read_checkpoint(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:
        raise ReverieError(
            f"{path}: not a checkpoint (delete it to read the transcript again)"
        ) from None
    return data if isinstance(data, dict) else {}


class Mirror:
    """Records a Claude Code transcript into Reverie sessions, incrementally.

    ``owner``: the person's turns count as the owner's (a live session on this machine).
    An import of someone's old transcripts passes ``owner=False``: every turn is then
    recorded as imported (``untrusted``) unless the owner vouches for it.
    """

    def __init__(self, engine: Reverie, claude_session_id: str, *, owner: bool = True) -> None:
        self.engine = engine
        self.key = session_key(claude_session_id)
        self.owner = owner
        self.dir = checkpoint_dir(engine)
        self._main: Session | None = None
        self._side: Session | None = None
        self._cwd: str | None = None  # where the session works: its project (R-SCOPE-1)

    @property
    def main(self) -> Session:
        if self._main is None:
            who = OWNER if self.owner else None
            self._main = self.engine.open_session(
                session_id=self.key,
                kind="interactive",
                channel="direct",
                sender=who,
                owner=who,
                cwd=self._cwd,
            )
        return self._main

    @property
    def side(self) -> Session:
        if self._side is None:
            self._side = self.engine.open_session(
                session_id=f"{self.key}-sub", kind="subagent", channel="direct", cwd=self._cwd
            )
        return self._side

    def _record(self, turn: Turn, result: MirrorResult) -> None:
        if turn.compaction:
            self.main.compacted()
            return
        source = turn.source
        if source is Source.SCAFFOLD:  # command echoes, caveats, reminders: no statement
            result.scaffold += 1
            return
        if not self.owner and source in (Source.OWNER, Source.ASSISTANT):
            source = Source.IMPORT  # not vouched for: external text
        session = self.side if turn.sidechain else self.main
        who = OWNER if self.owner else None
        text = turn.text
        if source is Source.RECALLED and len(text) > RECALLED_KEPT:
            cut = len(text) - RECALLED_KEPT
            text = f"{text[:RECALLED_KEPT]} [{cut} more characters of recalled context not kept]"
        rec = session.record(text, source=source, sender=who, at=parse_ts(turn.ts))
        result.recorded += 1
        result.sidechain += int(turn.sidechain)
        name = SessionKind.SUBAGENT.value if turn.sidechain else rec.origin.value
        result.origins[name] = result.origins.get(name, 0) + 1

    def _checkpoint(
        self, point: Path, transcript: Path, offset: int, line: int, cwd: str | None
    ) -> None:
        record = {
            "offset": offset,
            "line": line,
            "transcript": str(transcript),
            "cwd": cwd,
            "session": self.key,
        }
        atomic_write(point, json.dumps(record, ensure_ascii=False))

    def sync(self, transcript: Path, *, end: bool = False, cwd: str | None = None) -> MirrorResult:
        """Record what ``transcript`` gained since the last pass, then ingest the mirror
        (``end``: end the session too)."""
        result = MirrorResult(self.key, cwd=cwd)
        if not transcript.is_file():
            raise ReverieError(f"{transcript}: no such transcript; nothing recorded")
        self.dir.mkdir(parents=True, exist_ok=True)
        point, lock = checkpoint_paths(self.dir, self.key)
        with FileLock(str(lock), timeout=60):
            state = _read_checkpoint(point)
            start, line = int(state.get("offset", 0)), int(state.get("line", 1))
            size = transcript.stat().st_size
            if start > size:  # the file was replaced: read it again (ingestion dedupes)
                result.warnings.append(f"{transcript} is shorter than read before; reread")
                start, line = 0, 1
            cwd_seen = state.get("cwd")
            self._cwd = cwd or cwd_seen
            try:
                fh = reader.open_checked(transcript, None)  # never a FIFO
            except reader.Refused as exc:
                raise ReverieError(f"{exc}; nothing recorded") from None
            with fh:
                while True:  # bounded: one chunk of the transcript in memory at a time
                    fh.seek(start)
                    data = fh.read(CHUNK_BYTES)
                    if not data:
                        break
                    at_end = len(data) < CHUNK_BYTES
                    parsed = parse(data, first_line=line, path=str(transcript))
                    if parsed.end == 0 and not at_end:  # one record longer than a chunk
                        start = _next_line(fh, start + len(data))
                        result.warnings.append(
                            f"{transcript}:{line}: a record over {CHUNK_BYTES} bytes; skipped"
                        )
                        line += 1
                        continue
                    self._cwd = cwd or parsed.cwd or cwd_seen
                    cwd_seen = parsed.cwd or cwd_seen
                    for turn in parsed.turns:
                        self._record(turn, result)
                    result.lines_read += parsed.lines
                    start, line = start + parsed.end, line + parsed.lines
                    self._checkpoint(point, transcript, start, line, cwd or cwd_seen)
                    if at_end or parsed.end == 0:
                        break
            result.cwd = cwd or cwd_seen
            self._checkpoint(point, transcript, start, line, result.cwd)
            if end:
                ingested = self.main.end()
                if (
                    self._side is not None
                    or self.engine.workspace.session_transcript(f"{self.key}-sub").exists()
                ):
                    self.side.end()  # a sub-agent session: ended, never evidence
                result.ended = True
            else:
                ingested = self.engine.ingest(self.main.path)
            result.lines_written = ingested.lines_written
            result.recalled_stripped = ingested.recalled_stripped
            result.warnings += ingested.warnings
        return result


def _next_line(fh: BinaryIO, offset: int) -> int:
    """The offset just after the next newline at or after ``offset`` (or the end)."""
    fh.seek(offset)
    while True:
        block = fh.read(1 << 20)
        if not block:
            return fh.tell()
        nl = block.find(b"\n")
        if nl >= 0:
            return offset + nl + 1
        offset += len(block)


__all__ = ["Mirror", "MirrorResult", "checkpoint_dir", "session_key"]
