"""Agent requests to forget or correct memory: pending until the owner decides.

An MCP client (the agent, or a poisoned tool output speaking through it) may *ask*
for a forget (``memory_forget``) or a correction (``memory_correct``: old text, new
text). A request is recorded in the state dir and changes nothing else; only the owner
(``reverie pending confirm ID`` or the review page) carries it out, as a forget by the
owner. ``reverie pending reject ID`` drops it. Requests keep their text (the owner must
read what is asked), in the state dir, never in the workspace.

A confirmed correction forgets the lines holding the old text (line tombstones only, so
the new text may reuse its words) and writes the new text where the old one was: in
place in MEMORY.md / USER.md (the entry keeps its trailers), otherwise as one journal
line written by the agent (the text is the agent's, whoever confirmed it).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from filelock import FileLock

from ..dreaming.safe_write import MemoryFile, sha
from ..errors import ReverieError
from ..provenance.paths import CURATED_FILES
from ..storage.files import atomic_write
from ..storage.tombstone_hash import contains, tokens
from ..storage.trailers import Trailers, parse_line, render
from ..storage.workspace import Workspace
from ..write.journal import clean_lines
from .forget import ForgetReport, Forgetter
from .select import Selector

MAX_PENDING = 200  # an agent looping on requests cannot grow the file without bound
MAX_TEXT = 4000


@dataclass
class Request:
    """One agent request."""

    id: str
    kind: str  # forget | correct
    text: str
    new_text: str | None
    at: str
    by: str
    status: str = "pending"  # pending | confirmed | rejected
    decided: str | None = None


class Pending:
    """The pending-request store (``<state>/<agent>/curation/pending.json``)."""

    def __init__(
        self,
        ws: Workspace,
        forgetter: Forgetter,
        *,
        now: Callable[[], datetime],
        preimages_kept: int,
        journal: Callable[[str], object],
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.ws, self.forgetter, self.now = ws, forgetter, now
        self.max_pending = max_pending
        self.preimages_kept = preimages_kept
        self.journal = journal  # appends one line as the agent (the engine's write)
        self.path = ws.pending_path

    def _load(self) -> list[Request]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise ReverieError(f"{self.path}: corrupt pending requests ({exc})") from None
        return [Request(**r) for r in raw]

    def _save(self, items: list[Request]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(
            self.path, json.dumps([asdict(r) for r in items], ensure_ascii=False, indent=1)
        )

    def _lock(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path) + ".lock", timeout=60)

    def request(self, kind: str, text: str, new_text: str | None = None, *, by: str) -> Request:
        """Record a request; nothing else changes."""
        if kind not in ("forget", "correct"):
            raise ReverieError(f"unknown request kind {kind!r}")
        Selector.of(text)  # the same rules as the owner's forget TEXT
        if kind == "correct" and not (new_text or "").strip():
            raise ReverieError("a correction needs the new text")
        if len(text) > MAX_TEXT or len(new_text or "") > MAX_TEXT:
            raise ReverieError(f"a request holds at most {MAX_TEXT} characters per text")
        with self._lock():
            items = self._load()
            if sum(r.status == "pending" for r in items) >= self.max_pending:
                raise ReverieError(
                    f"{self.max_pending} requests are already waiting for the owner (pending_max)"
                )
            req = Request(
                id=secrets.token_hex(4),
                kind=kind,
                text=text.strip(),
                new_text=new_text.strip() if new_text else None,
                at=self.now().isoformat(timespec="seconds"),
                by=by,
            )
            self._save([*items, req])
        return req

    def requests(self, *, all_: bool = False) -> list[Request]:
        return [r for r in self._load() if all_ or r.status == "pending"]

    def _take(self, rid: str) -> Request:
        for r in self._load():
            if r.id == rid:
                if r.status != "pending":
                    raise ReverieError(f"request {rid} is already {r.status}")
                return r
        raise ReverieError(f"no pending request {rid!r}; see `reverie pending list`")

    def _decide(self, rid: str, status: str) -> None:
        items = self._load()
        for r in items:
            if r.id == rid:
                r.status, r.decided = status, self.now().isoformat(timespec="seconds")
        self._save(items)

    def reject(self, rid: str) -> Request:
        with self._lock():
            req = self._take(rid)
            self._decide(rid, "rejected")
        req.status = "rejected"
        return req

    def confirm(self, rid: str) -> dict[str, Any]:
        """Carry the request out as the owner's own forget (or correction)."""
        with self._lock():
            req = self._take(rid)
            by = f"owner confirmed agent request {req.id}"
            if req.kind == "forget":
                report = self.forgetter.forget(Selector.of(req.text), by=by)
                written: list[str] = []
            else:
                places = self._curated_places(req.text)
                report = self.forgetter.forget(Selector.of(req.text), by=by, phrase_stone=False)
                written = self._write_correction(req, places, report)
            self._decide(rid, "confirmed")
        return {
            "request": asdict(req) | {"status": "confirmed"},
            "forget": report.as_dict(),
            "written": written,
        }

    # -- corrections ---------------------------------------------------------------------
    def _curated_places(self, old: str) -> dict[str, tuple[int, Trailers]]:
        """Where the old text stands in each curated file: first line and its trailers."""
        want, out = tokens(old), {}
        for name in CURATED_FILES:
            path = self.ws.root / name
            if not path.exists():
                continue
            for n, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
                if contains(tokens(raw), want) and not raw.lstrip().startswith("#"):
                    out[name] = (n, parse_line(raw).trailers)
                    break
        return out

    def _write_correction(
        self, req: Request, places: dict[str, tuple[int, Trailers]], report: ForgetReport
    ) -> list[str]:
        new = " ".join(clean_lines(req.new_text or ""))  # no trailer or marker can ride in
        written = []
        for name, (line, trailers) in places.items():
            mf = MemoryFile(self.ws, preimages_kept=self.preimages_kept, name=name)
            for _ in range(5):
                old = mf.read()
                rows = old.split("\n")
                rows.insert(min(line - 1, len(rows)), render(f"- {new}", trailers))
                if mf.replace_if_unchanged(sha(old), "\n".join(rows)):
                    written.append(name)
                    break
        if written:
            mf.append_dreams(
                f"## Correction {self.now().isoformat(timespec='seconds')}\n\n"
                f"- owner confirmed agent request {req.id}: an entry of "
                f"{', '.join(written)} rewritten in place\n"
            )
        else:
            self.journal(new)
            written.append("journal")
        self.forgetter.p.reindex()
        return written


__all__ = ["MAX_PENDING", "Pending", "Request"]
