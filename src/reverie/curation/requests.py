"""The store of requests waiting for the owner (``<state>/<agent>/curation/pending.json``).

An agent's forget or correction (MCP ``memory_forget`` / ``memory_correct``) and a
session's directive that its cited owner message does not hold all of
(:func:`reverie.provenance.grounding.faithful`) are kept here, with their text and the
reason, until the owner confirms or rejects them (:class:`.pending.Pending`). Recording
a request changes nothing else. The file lives in the state dir, never the workspace;
with ``index_backend = "postgres"`` the requests are one tenant's rows of a shared
table instead (:mod:`reverie.backends.postgres.requests`), behind the same port (:class:`RequestStore`).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Protocol

from filelock import FileLock

from ..errors import ReverieError
from ..storage.files import atomic_write
from ..storage.tombstone_hash import tokens
from ..storage.workspace import Workspace, lock_beside
from .correct import clean_new_text
from .select import Selector

FORGOTTEN = "(forgotten by the owner)"
MAX_PENDING = 200  # an agent looping on requests cannot grow the file without bound
MAX_TEXT = 4000
KINDS = ("forget", "correct", "directive", "link")
LINE_REF = r"[\w./-]+\.md#L\d+"  # a journal line, as a link request names it


@dataclass
class Request:
    """One request waiting for the owner (``intent``: a pending standing intent, kept in
    the intents table and only shown here)."""

    id: str
    kind: str  # forget | correct | directive | link | intent
    text: str
    new_text: str | None
    at: str
    by: str
    status: str = "pending"  # pending | confirmed | rejected
    decided: str | None = None
    key: str | None = None  # a directive's USER.md key; a link's two line keys
    reason: str | None = None  # why it was not done on the asker's word

    @classmethod
    def of(cls, raw: dict[str, object]) -> Request:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})  # type: ignore[arg-type]


class RequestStore(Protocol):
    """What :class:`.pending.Pending`, a session and a forget call on the requests."""

    def load(self) -> list[Request]: ...

    def lock(self) -> AbstractContextManager[object]:
        """Held while a request is taken, carried out and decided."""

    def add(
        self,
        kind: str,
        text: str,
        new_text: str | None = None,
        *,
        by: str,
        key: str | None = None,
        reason: str | None = None,
    ) -> Request: ...

    def take(self, rid: str) -> Request | None: ...

    def decide(self, rid: str, status: str) -> None: ...

    def adopt(self, items: list[Request]) -> int:
        """Requests another backend kept, as they were; how many were added."""
        ...

    def forget(self, blocked: Callable[[str], bool], at: str, *, dry_run: bool) -> int:
        """Requests whose text was forgotten: the text goes; a waiting forget is done
        (the owner forgot it), a waiting correction is dropped (how many)."""


def checked(kind: str, text: str, new_text: str | None) -> None:
    """The rules every request meets before it is recorded."""
    if kind not in KINDS:
        raise ReverieError(f"unknown request kind {kind!r}")
    if kind == "link":  # text: the newer line, new_text: the older (path#Ln each)
        if not re.fullmatch(LINE_REF, text) or not re.fullmatch(LINE_REF, new_text or ""):
            raise ReverieError("a link request names two lines as path#Ln")
        return
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


def forgotten(r: Request, blocked: Callable[[str], bool], at: str) -> bool:
    """``r`` scrubbed in place if its text holds forgotten text (True)."""
    if r.text == FORGOTTEN or not any(blocked(ln) for ln in r.text.split("\n")):
        return False
    r.text = FORGOTTEN
    if r.status == "pending":
        r.status = "confirmed" if r.kind == "forget" else "rejected"
        r.decided = at
    return True


def new_request(kind: str, text: str, new_text: str | None, at: str, **more: str | None) -> Request:
    return Request(
        id=secrets.token_hex(4),
        kind=kind,
        text=text.strip(),
        new_text=new_text.strip() if new_text else None,
        at=at,
        **more,  # type: ignore[arg-type]
    )


class Requests:
    """Load, add and decide requests; every change under one file lock
    (:class:`RequestStore` in the state dir)."""

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

    def adopt(self, items: list[Request]) -> int:
        """Requests another backend kept, as they were (ids, states and dates); one
        already here is not added twice. How many were added."""
        with self.lock():
            have = self.load()
            known = {r.id for r in have}
            new = [r for r in items if r.id not in known]
            if new:
                self.save(have + new)
        return len(new)

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
        checked(kind, text, new_text)
        with self.lock():
            items = self.load()
            if sum(r.status == "pending" for r in items) >= self.max_pending:
                raise ReverieError(
                    f"{self.max_pending} requests are already waiting for the owner (pending_max)"
                )
            at = self.now().isoformat(timespec="seconds")
            req = new_request(kind, text, new_text, at, by=by, key=key, reason=reason)
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

    def forget(self, blocked: Callable[[str], bool], at: str, *, dry_run: bool) -> int:
        """``pending confirm`` holds the request lock while it forgets, so the lock is
        not taken again here (the write is atomic); a record that is not a request
        stays as it is."""
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return 0
        n = 0
        for raw in items if isinstance(items, list) else []:
            if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
                continue
            blank: dict[str, object] = {"id": "", "kind": "", "new_text": None, "at": ""}
            blank |= {"by": "", "status": None}
            r = Request.of(blank | raw)
            if forgotten(r, blocked, at):
                n += 1
                raw["text"] = r.text
                if raw.get("status") == "pending":
                    raw["status"], raw["decided"] = r.status, r.decided
        if n and not dry_run:
            atomic_write(self.path, json.dumps(items, ensure_ascii=False, indent=1))
        return n


__all__ = [
    "FORGOTTEN",
    "KINDS",
    "MAX_PENDING",
    "MAX_TEXT",
    "Request",
    "RequestStore",
    "Requests",
    "checked",
    "forgotten",
    "new_request",
]
