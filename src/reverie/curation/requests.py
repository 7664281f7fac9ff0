"""The requests waiting for the owner, on every backend: what one is (:class:`Request`),
the rules every one meets (:func:`checked`), and the store's interface
(:class:`RequestStore`), which adds by those rules on every backend.

An agent's forget, link or correction (MCP ``memory_forget`` / ``memory_correct`` /
``memory_link``) and a session's directive that its cited owner message does not hold
all of (:func:`reverie.provenance.grounding.faithful`) are kept with their text and
the reason, until the owner confirms or rejects them (:class:`.pending.Pending`).
Recording a request changes nothing else. Each backend of :mod:`reverie.backends`
keeps them its own way (SQLite's: ``curation/pending.json`` in the state dir, never
the workspace, :mod:`reverie.backends.sqlite.requests`; PostgreSQL's: one tenant's
rows of a shared table, :mod:`reverie.backends.postgres.requests`).
"""

from __future__ import annotations

import re
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import datetime

from ..errors import ReverieError
from ..storage.tombstone_hash import tokens
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


class RequestStore(ABC):
    """What :class:`.pending.Pending`, a session and a forget call on the requests. A
    backend's store gives the abstract methods; :meth:`add` is the same on every one."""

    now: Callable[[], datetime]
    max_pending: int

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
        """Record a request; nothing else changes (refused unless it meets
        :func:`checked`, or when ``max_pending`` already wait)."""
        checked(kind, text, new_text)
        at = self.now().isoformat(timespec="seconds")
        req = new_request(kind, text, new_text, at, by=by, key=key, reason=reason)
        self._append(req)
        return req

    def room(self, waiting: int) -> None:
        """Refuse one more request when ``waiting`` (counted under the store's lock)
        already fill ``max_pending``."""
        if waiting >= self.max_pending:
            raise ReverieError(
                f"{self.max_pending} requests are already waiting for the owner (pending_max)"
            )

    @abstractmethod
    def _append(self, req: Request) -> None:
        """Keep ``req``, under the store's lock, once :meth:`room` let it in."""

    @abstractmethod
    def load(self) -> list[Request]: ...

    @abstractmethod
    def lock(self) -> AbstractContextManager[object]:
        """Held while a request is taken, carried out and decided."""

    @abstractmethod
    def take(self, rid: str) -> Request | None:
        """The request ``rid`` if it is still pending (None: no such request)."""

    @abstractmethod
    def decide(self, rid: str, status: str) -> None: ...

    @abstractmethod
    def adopt(self, items: list[Request]) -> int:
        """Requests another backend kept, as they were (ids, states and dates); one
        already here is not added twice. How many were added."""

    @abstractmethod
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


__all__ = [
    "FORGOTTEN",
    "KINDS",
    "MAX_PENDING",
    "MAX_TEXT",
    "Request",
    "RequestStore",
    "checked",
    "forgotten",
    "new_request",
]
