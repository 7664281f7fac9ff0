"""Agent requests to forget or correct memory: pending until the owner decides.

An MCP client (the agent, or a poisoned tool output speaking through it) may *ask*
for a forget (``memory_forget``) or a correction (``memory_correct``: old text, new
text). A request is recorded in the state dir and changes nothing else; only the owner
(``reverie pending confirm ID`` or the review page) carries it out, as a forget by the
owner. ``reverie pending reject ID`` drops it. Requests keep their text (the owner must
read what is asked), in the state dir, never in the workspace.

A confirmed correction edits, in every file the forget of its old text would touch,
the words it names and nothing else (:mod:`.correct`): the rest of the line, its
origin marker (re-signed for the new words: the line keeps its trust, no more) and its
trailers stay. The old lines get line tombstones (so the old wording cannot come back
from a copy), never a phrase tombstone (the new text may reuse its words). Before you
confirm, :meth:`Pending.diff` shows each line as it is and as it will be.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from filelock import FileLock

from ..errors import ReverieError
from ..storage.files import atomic_write
from ..storage.tombstone_hash import tokens
from ..storage.workspace import Workspace, lock_beside
from .correct import clean_new_text, planner
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
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.ws, self.forgetter, self.now = ws, forgetter, now
        self.max_pending = max_pending
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
        return FileLock(str(lock_beside(self.path)), timeout=60)

    def request(self, kind: str, text: str, new_text: str | None = None, *, by: str) -> Request:
        """Record a request; nothing else changes."""
        if kind not in ("forget", "correct"):
            raise ReverieError(f"unknown request kind {kind!r}")
        Selector.of(text)  # the same rules as the owner's forget TEXT
        if kind == "correct" and not clean_new_text(new_text or ""):
            raise ReverieError("a correction needs the new text")
        if kind == "correct" and tokens(clean_new_text(new_text or "")) == tokens(text):
            raise ReverieError("a correction must change at least one word")
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
                report = self._correct(req, by=by, dry_run=False)
                written = sorted(
                    rel for rel, hits in report.files.items() if any(h.get("new") for h in hits)
                )
            self._decide(rid, "confirmed")
        return {
            "request": asdict(req) | {"status": "confirmed"},
            "forget": report.as_dict(),
            "written": written,
        }

    # -- corrections ---------------------------------------------------------------------
    def _correct(self, req: Request, *, by: str, dry_run: bool) -> ForgetReport:
        edit = planner(req.text, req.new_text or "", self.ws.origin_key())
        return self.forgetter.forget(
            Selector.of(req.text), by=by, phrase_stone=False, edit=edit, dry_run=dry_run
        )

    def diff(self, req: Request) -> list[dict[str, Any]]:
        """What confirming ``req`` changes, line by line: ``path``, ``line``, ``old``
        and ``new`` (None: the line goes). Nothing is written."""
        if req.kind == "forget":
            report = self.forgetter.forget(Selector.of(req.text), dry_run=True)
        else:
            report = self._correct(req, by="preview", dry_run=True)
        return [
            {"path": rel, "line": h["line"], "old": h["text"], "new": h.get("new")}
            for rel, hits in sorted(report.files.items())
            for h in hits
        ]


__all__ = ["MAX_PENDING", "Pending", "Request"]
