"""What the lane may search and read, with privacy enforced in the query (R-LANE2-2).

The lane searches through lane 1's search (a port the facade hands in) and reads with
``memory_get``, but only journals and the session corpus, plus the live (not yet ended)
direct conversations of :mod:`.transcripts`; every line passes two filters before the
model sees it:

- its origin is not ``system``: scaffolding (cron preambles, heartbeats, sub-agent
  output, recalled memory) is never a source;
- a session-corpus line must carry the anchor of the session it came from, and that
  session must pass :func:`.privacy.source_refusal`: a direct conversation of this
  agent, sealed by the session API, not archived. Group chats, other agents, unsealed,
  archived or unknown sessions: the line is dropped, and the refusal is reported.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ...errors import ReverieError
from ...provenance.markers import MARKER_RE, strip_markers
from ...provenance.origin import Origin
from ...provenance.paths import SourceKind, classify, in_group_corpus
from ...storage.workspace import Workspace
from ..search import Hit, SearchResponse, memory_get
from .privacy import SessionMeta, source_refusal
from .protocol import Line, Segment, parse_anchor, runs
from .transcripts import LiveTranscripts, session_of

SEARCHABLE = (SourceKind.JOURNAL, SourceKind.TRANSCRIPT)
READ_MAX_LINES = 40
_ANCHOR = re.compile(r"\banchor\s*:\s*([A-Za-z0-9_.-]{1,64})#\d+")
_ARCHIVED = re.compile(rb'"type"\s*:\s*"archived"')
_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class SearchUnavailable(ReverieError):
    """Lane-1 search failed (a broken index, a provider error while embedding)."""


class SearchPort(Protocol):
    """Lane 1's search, as the facade offers it (never recorded as agent recall)."""

    def __call__(self, query: str, max_results: int) -> SearchResponse: ...


Sealed = Callable[[Mapping[str, Any]], bool]


def read_meta(ws: Workspace, session_id: str, sealed: Sealed) -> SessionMeta:
    """What the transcript of ``session_id`` in this agent's sessions folder says."""
    if not _SESSION_ID.fullmatch(session_id) or set(session_id) == {"."}:
        return SessionMeta(session_id)
    path = ws.session_transcript(session_id)
    try:
        if path.is_symlink() or not path.is_file():
            return SessionMeta(session_id)
        data = path.read_bytes()
        header = json.loads(data.split(b"\n", 1)[0])
    except (OSError, ValueError):
        return SessionMeta(session_id)
    if not isinstance(header, dict) or header.get("type") != "session":
        return SessionMeta(session_id)

    def text(name: str) -> str | None:
        value = header.get(name)
        return value if isinstance(value, str) and value else None

    archived = bool(header.get("archived")) or _ARCHIVED.search(data) is not None
    return SessionMeta(
        session_id,
        found=header.get("id") == session_id,
        sealed=sealed(header),
        kind=text("kind"),
        channel=text("channel"),
        agent=text("agent"),
        archived=archived,
    )


class Sources:
    """One lane run's view of memory: privacy-filtered search and read, with the
    refusals it made (``refused``) and the session facts it looked up (cached)."""

    def __init__(
        self,
        workspace: Workspace,
        search: SearchPort,
        sealed: Sealed,
        *,
        max_results: int = 6,
        skip: frozenset[str] = frozenset(),
    ) -> None:
        self.ws = workspace
        self._search = search
        self._sealed = sealed
        self.max_results = max_results
        self.refused: dict[str, str] = {}  # session id -> why its lines were dropped
        self._meta: dict[str, str | None] = {}
        self.live = LiveTranscripts(workspace.sessions_dir, self.refusal, skip)

    def refusal(self, session_id: str | None) -> str | None:
        """Why lines of ``session_id`` are not shown (None: they may be)."""
        if session_id is None:
            missing = "a session-corpus line without a session anchor (missing metadata)"
            self.refused["(no anchor)"] = missing
            return missing
        if session_id not in self._meta:
            meta = read_meta(self.ws, session_id, self._sealed)
            self._meta[session_id] = source_refusal(meta, agent=self.ws.agent)
        why = self._meta[session_id]
        if why is not None:
            self.refused[session_id] = why
        return why

    def search(self, query: str) -> tuple[list[Segment], SearchResponse]:
        """Segments of the journal and session-corpus hits of ``query`` that pass."""
        try:
            response = self._search(query, self.max_results)
        except Exception as exc:
            raise SearchUnavailable(f"{type(exc).__name__}: {exc}") from exc
        out: list[Segment] = []
        for hit in response.hits:
            if hit.kind in SEARCHABLE:
                try:
                    out += self.lines(hit.path, hit.start_line, hit.end_line, hit)
                except ReverieError:  # the file changed or went since it was indexed
                    continue
        with contextlib.suppress(OSError, ValueError):  # live talks; a broken one is left out
            out += self.live.search(query, self.max_results)
        return out, response

    def read(self, anchor: str) -> list[Segment]:
        """The passing lines of ``anchor`` (at most :data:`READ_MAX_LINES`)."""
        parsed = parse_anchor(anchor)
        if parsed is None:
            raise ReverieError(f"{anchor[:80]!r}: not an anchor path#La-Lb")
        path, a, b = parsed
        b = min(b, a + READ_MAX_LINES - 1)
        sid = session_of(path)
        if sid is not None:
            try:
                return self.live.read(sid, a, b)
            except PermissionError as exc:
                raise ReverieError(f"{path}: {exc}") from None
        if ".." in path.split("/") or classify(path).kind not in SEARCHABLE:
            raise ReverieError(f"{path}: the lane reads journals and the session corpus only")
        if in_group_corpus(path):  # memory_get refuses it too; say whose lines they were
            parts = path.split("/")
            self.refusal(parts[-2] if len(parts) > 1 else None)
            raise ReverieError(f"{path}: a group conversation's lines are never a source")
        return self.lines(path, a, b)

    def lines(self, path: str, first: int, last: int, hit: Hit | None = None) -> list[Segment]:
        got = memory_get(self.ws, path, from_line=first, lines=last - first + 1)
        if classify(got.path).kind not in SEARCHABLE:  # a link or a path that led elsewhere
            raise ReverieError(f"{path}: the lane reads journals and the session corpus only")
        origin_of: dict[int, Origin] = {}
        for a, b, o in got.segments:
            origin_of.update(dict.fromkeys(range(a, b + 1), o))
        corpus = classify(got.path).kind is SourceKind.TRANSCRIPT
        keep: list[Line] = []
        for number, raw in enumerate(got.raw.split("\n"), start=got.start_line):
            origin = origin_of.get(number, Origin.UNTRUSTED)
            if origin is Origin.SYSTEM or not raw.strip():
                continue
            if corpus:  # a heading carries no content; every other line names its session
                if raw.lstrip().startswith("#"):
                    continue
                marker = MARKER_RE.search(raw)
                found = _ANCHOR.search(marker.group(0)) if marker else None
                if self.refusal(found.group(1) if found else None) is not None:
                    continue
            keep.append(Line(number, strip_markers(raw), origin))
        day = hit.day.isoformat() if hit is not None and hit.day else None
        return runs(got.path, keep, day)


__all__ = ["SEARCHABLE", "SearchPort", "SearchUnavailable", "Sources", "read_meta"]
