"""The store of requests waiting for the owner (``<state>/<agent>/curation/pending.json``).

An agent's forget or correction (MCP ``memory_forget`` / ``memory_correct``) and a
session's directive that its cited owner message does not hold all of
(:func:`reverie.provenance.grounding.faithful`) are kept here, with their text and the
reason, until the owner confirms or rejects them (:class:`.pending.Pending`). Recording
a request changes nothing else. The file lives in the state dir, never the workspace.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime

from filelock import FileLock

from ..errors import ReverieError
from ..storage.files import atomic_write
from ..storage.tombstone_hash import tokens
from ..storage.workspace import Workspace, lock_beside
from .correct import clean_new_text
from .select import Selector

MAX_PENDING = 200  # an agent looping on requests cannot grow the file without bound
MAX_TEXT = 4000
KINDS = ("forget", "correct", "directive")


@dataclass
class Request:
    """One request waiting for the owner (``intent``: a pending standing intent, kept in
    the intents table and only shown here)."""

    id: str
    kind: str  # forget | correct | directive | intent
    text: str
    new_text: str | None
    at: str
    by: str
    status: str = "pending"  # pending | confirmed | rejected
    decided: str | None = None
    key: str | None = None  # a directive's USER.md key
    reason: str | None = None  # why it was not done on the asker's word

    @classmethod
    def of(cls, raw: dict[str, object]) -> Request:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})  # type: ignore[arg-type]


class Requests:
    """Load, add and decide requests; every change under one file lock."""

    def __init__(
        self, ws: Workspace, *, now: Callable[[], datetime], max_pending: int = MAX_PENDING
    ) -> None:
        self.now, self.max_pending = now, max_pending
        self.path = ws.pending_path

    def load(self) -> list[Request]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise ReverieError(f"{self.path}: corrupt pending requests ({exc})") from None
        return [Request.of(r) for r in raw]

    def save(self, items: list[Request]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(
            self.path, json.dumps([asdict(r) for r in items], ensure_ascii=False, indent=1)
        )

    def lock(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock_beside(self.path)), timeout=60)

    def add(
        self,
        kind: str,
        text: str,
        new_text: str | None = None,
        *,
        by: str,
        key: str | None = None,
        reason: str | None = None,
    ) -> Request:
        """Record a request; nothing else changes."""
        if kind not in KINDS:
            raise ReverieError(f"unknown request kind {kind!r}")
        if kind != "directive":
            Selector.of(text)  # the same rules as the owner's forget TEXT
        elif not text.strip():
            raise ReverieError("a directive needs its text")
        if kind == "correct" and not clean_new_text(new_text or ""):
            raise ReverieError("a correction needs the new text")
        if kind == "correct" and tokens(clean_new_text(new_text or "")) == tokens(text):
            raise ReverieError("a correction must change at least one word")
        if len(text) > MAX_TEXT or len(new_text or "") > MAX_TEXT:
            raise ReverieError(f"a request holds at most {MAX_TEXT} characters per text")
        with self.lock():
            items = self.load()
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
                key=key,
                reason=reason,
            )
            self.save([*items, req])
        return req

    def take(self, rid: str) -> Request | None:
        """The request ``rid`` if it is still pending (None: no such request)."""
        for r in self.load():
            if r.id == rid:
                if r.status != "pending":
                    raise ReverieError(f"request {rid} is already {r.status}")
                return r
        return None

    def decide(self, rid: str, status: str) -> None:
        items = self.load()
        for r in items:
            if r.id == rid:
                r.status, r.decided = status, self.now().isoformat(timespec="seconds")
        self.save(items)


__all__ = ["KINDS", "MAX_PENDING", "MAX_TEXT", "Request", "Requests"]
