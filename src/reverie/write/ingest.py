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
from ..storage.files import atomic_write
from ..storage.tombstones import Tombstones
from ..storage.workspace import Workspace
from .journal import clean_lines
from .transcript import is_sealed, load, message_day

CORPUS = SESSION_CORPUS.rstrip("/")


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
) -> IngestResult:
    """Ingest ``transcript``; ``trust``: the owner vouches for a transcript the session
    API did not write (its header then counts as if it had)."""
    state = load(transcript)
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
        by_day: dict[str, list[str]] = {}
        forgotten = Tombstones(ws.tombstones_path)
        last = done
        for msg in state.messages:
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
                by_day.setdefault(day, []).append(
                    render_marker(f"- {item}", origin, kind, key=key, info=info, project=project)
                )
        for day, lines in sorted(by_day.items()):
            rel = f"{folder}/{day}.md"
            path = ws.root / rel
            old = (
                path.read_text(encoding="utf-8") if path.exists() else f"# Session corpus {day}\n\n"
            )
            if old and not old.endswith("\n"):
                old += "\n"
            present = set(old.splitlines())  # a crash before the checkpoint: no doubles
            lines = [ln for ln in lines if ln not in present]
            if not lines:
                continue
            atomic_write(path, old + "\n".join(lines) + "\n")
            result.lines_written += len(lines)
            result.files.append(rel)
        if last > done:
            atomic_write(checkpoint, json.dumps({"seq": last, "transcript": str(transcript)}))
    if not result.lines_written and result.status == "ingested":
        result.status = "nothing-new"
    return result


__all__ = ["CORPUS", "IngestResult", "ingest", "strip_injected"]
