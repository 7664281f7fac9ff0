"""Transcript ingestion (R-WRITE-3, R-PROV-3, R-PROV-4): a finished session's
transcript becomes dreaming evidence in ``memory/.dreams/session-corpus/<day>.md``.

- Only interactive sessions qualify; cron, heartbeat and sub-agent sessions never do.
- Memory the runtime injected (``source: recalled`` messages, and any injected block
  quoted inside a message) is stripped, so a recalled fact never comes back as new.
- PII is redacted before anything is written.
- A group conversation's lines go to ``session-corpus/group/<agent>/<session>/``, which
  search leaves out: no other conversation, and no dream, ever sees them (R-LANE2-2).
- Each line keeps its origin (computed when the message was recorded, signed so the
  text cannot raise it), a source anchor ``<session id>#<seq>`` and the project the
  session worked in when the message came in (R-SCOPE-1), its channel and agent; tool,
  web and non-owner turns stay ``untrusted``.
- Incremental and idempotent: a checkpoint per transcript records the last message
  ingested; ingesting again appends nothing.
- A transcript file is input, so it cannot vouch for itself (issue 14): its header
  (kind, sender, owner) counts only when the file lies in the state dir's sessions
  folder *and* its header carries the seal the session API made with the origin key
  (:func:`reverie.write.transcript.is_sealed`). Any other transcript (downloaded,
  copied in, hand-edited) is ingested with every line capped at ``untrusted``, unless
  the owner vouches for it (``trust=True``, ``reverie ingest --trust-transcript``).
- A malformed record (see :func:`reverie.write.transcript.load`) stops the ingestion
  before anything is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..errors import ParseError
from ..provenance.frames import strip_injected
from ..provenance.markers import render_marker
from ..provenance.origin import Channel, Origin, SessionKind, Source, lowest, origin_for
from ..provenance.paths import SESSION_CORPUS, group_corpus
from ..provenance.redact import redact
from ..scope.remote import is_valid_key
from ..storage import reader
from ..storage.files import atomic_write, atomic_write_bytes
from ..storage.tombstones import Tombstones
from ..storage.workspace import Workspace
from .journal import clean_lines
from .transcript import is_sealed, iter_messages, load, message_day

CORPUS = SESSION_CORPUS.rstrip("/")
CORPUS_CAP = 8 * 1024 * 1024  # a corpus day file stops here (under the index's max_file_bytes)
BATCH_BYTES = 2 * 1024 * 1024  # new lines held before they are written out


@dataclass
class IngestResult:
    """What ingesting one transcript did (``status``: ingested | skipped | nothing-new)."""

    transcript: str
    session_id: str
    status: str  # ingested | skipped | nothing-new
    reason: str = ""
    trusted: bool = True  # False: not proven written by the session API, capped at untrusted
    lines_written: int = 0
    recalled_stripped: int = 0
    forgotten: int = 0  # lines withheld: the owner forgot them (``reverie forget``)
    redactions: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _origin(msg: dict[str, Any], header: dict[str, Any], kind: SessionKind) -> Origin:
    """The recorded origin, never above what the record's source allows in this
    session (a transcript file is input too: it cannot raise its own trust)."""
    recorded = Origin.parse(msg.get("origin")) or Origin.UNTRUSTED
    try:
        source = Source(str(msg.get("source")))
        channel = Channel(str(header.get("channel", "direct")))
    except ValueError:
        return Origin.UNTRUSTED
    allowed = origin_for(
        source,
        session_kind=kind,
        channel=channel,
        sender=msg.get("sender"),
        owner=header.get("owner"),
    )
    return lowest(recorded, allowed)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "_"


def _in_sessions_dir(ws: Workspace, transcript: Path) -> bool:
    try:
        return transcript.resolve().is_relative_to(ws.sessions_dir.resolve())
    except OSError:
        return False


def _checkpoint(path: Path) -> int:
    """The last message ingested from a transcript (0: none)."""
    if not path.exists():
        return 0
    try:
        seq = json.loads(path.read_text(encoding="utf-8"))["seq"]
    except (ValueError, KeyError, TypeError):
        seq = None
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise ParseError("not an ingestion checkpoint (delete it to ingest again)", path=str(path))
    return seq


def ingest(
    ws: Workspace,
    transcript: Path,
    *,
    now: datetime,
    session_kind: SessionKind | None = None,
    trust: bool = False,
    cap: int = CORPUS_CAP,
) -> IngestResult:
    """Ingest ``transcript``; ``trust``: the owner vouches for a transcript the session
    API did not write (its header then counts as if it had). Bounded memory (issue
    22.12): the messages are streamed and written ``BATCH_BYTES`` at a time, and a
    corpus day file stops at ``cap`` bytes (the lines left out are counted in a
    warning; the transcript still holds them)."""
    state = load(transcript, keep_messages=False)  # validates every record, keeps none
    header = state.header
    sid = str(header.get("id") or transcript.stem)
    result = IngestResult(str(transcript), sid, "ingested")
    key = ws.origin_key()
    if not trust and not (_in_sessions_dir(ws, transcript) and is_sealed(header, key)):
        result.trusted = False
        result.warnings.append(
            "not a transcript the session API wrote (outside its sessions folder, or no valid "
            "seal): every line is capped at untrusted; --trust-transcript vouches for it"
        )
    try:
        kind = SessionKind(str(header.get("kind", "")))
    except ValueError:
        kind = SessionKind.SUBAGENT  # unknown kind fails closed: never evidence
    if session_kind is not None and not session_kind.promotable:
        kind = session_kind  # the caller may only make a session less eligible
    if not kind.promotable:
        result.status, result.reason = "skipped", f"{kind.value} sessions are never evidence"
        return result
    channel = str(header.get("channel") or "unknown")
    # a group conversation's lines go to a folder of their own, which no other
    # conversation is shown (and neither is an unknown channel's)
    folder = CORPUS if channel == Channel.DIRECT.value else group_corpus(ws.agent, _safe(sid))
    checkpoint_dir = ws.ingest_checkpoints_dir
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = ws.ingest_checkpoint(sid)
    with FileLock(str(ws.ingest_lock), timeout=120):
        done = _checkpoint(checkpoint)
        batch = _Batch(ws, folder, cap, result)
        forgotten = Tombstones(ws.tombstones_path)
        last = done
        for msg in iter_messages(transcript):
            seq = int(msg["seq"])  # validated by load
            if seq <= done:
                continue
            last = max(last, seq)
            if msg.get("source") == Source.RECALLED.value:
                result.recalled_stripped += 1
                continue
            text, n = strip_injected(msg["text"])
            result.recalled_stripped += n
            red = redact(text)
            for k, v in red.counts.items():
                result.redactions[k] = result.redactions.get(k, 0) + v
            origin = _origin(msg, header, kind) if result.trusted else Origin.UNTRUSTED
            day = message_day(msg, now)  # a validated date: never a path
            info = {
                "role": str(msg.get("role", "")),
                "anchor": f"{sid}#{seq}",
                "channel": channel,
                "agent": ws.agent,
            }
            project = state.projects.get(seq)  # R-SCOPE-1: the repository it was said in
            project = project if project and is_valid_key(project) else None
            for item in clean_lines(red.text):
                if forgotten.blocks(item):
                    result.forgotten += 1
                    continue
                batch.add(
                    day,
                    render_marker(f"- {item}", origin, kind, key=key, info=info, project=project),
                )
        batch.write()
        if last > done:
            atomic_write(checkpoint, json.dumps({"seq": last, "transcript": str(transcript)}))
    for day, n in sorted(batch.over_cap.items()):
        result.warnings.append(
            f"{folder}/{day}.md is at its cap of {cap} bytes: {n} line(s) of {transcript} "
            "not added to the session corpus (the transcript keeps them)"
        )
    if not result.lines_written and result.status == "ingested":
        result.status = "nothing-new"
    return result


class _Batch:
    """New corpus lines by day, written out (old bytes + new lines, atomically) every
    ``BATCH_BYTES``; a day file never grows past ``cap``. Bytes, never decoded: a line
    of the corpus a person edited keeps its bytes, bad ones included."""

    def __init__(self, ws: Workspace, folder: str, cap: int, result: IngestResult) -> None:
        self.ws, self.folder, self.cap, self.result = ws, folder, cap, result
        self.by_day: dict[str, list[bytes]] = {}
        self.pending = 0
        self.over_cap: dict[str, int] = {}

    def add(self, day: str, line: str) -> None:
        data = line.encode("utf-8")
        self.by_day.setdefault(day, []).append(data)
        self.pending += len(data) + 1
        if self.pending >= BATCH_BYTES:
            self.write()

    def write(self) -> None:
        for day, lines in sorted(self.by_day.items()):
            rel = f"{self.folder}/{day}.md"
            path = self.ws.root / rel
            try:
                old = (
                    reader.read(path, self.ws.root, limit=self.cap).data
                    if path.exists()
                    else f"# Session corpus {day}\n\n".encode()
                )
            except reader.Refused:  # over the cap already (or not a file we open): kept
                self.over_cap[day] = self.over_cap.get(day, 0) + len(lines)
                continue
            if old and not old.endswith(b"\n"):
                old += b"\n"
            present = set(old.split(b"\n"))  # a crash before the checkpoint: no doubles
            new: list[bytes] = []
            size = len(old)
            for ln in lines:
                if ln in present:
                    continue
                if size + len(ln) + 1 > self.cap:
                    self.over_cap[day] = self.over_cap.get(day, 0) + 1
                    continue
                present.add(ln)
                new.append(ln)
                size += len(ln) + 1
            if not new:
                continue
            atomic_write_bytes(path, old + b"\n".join(new) + b"\n")
            self.result.lines_written += len(new)
            if rel not in self.result.files:
                self.result.files.append(rel)
        self.by_day.clear()
        self.pending = 0


__all__ = ["CORPUS", "CORPUS_CAP", "IngestResult", "ingest", "strip_injected"]
