"""Agent requests to forget or correct memory: pending until the owner decides.

An MCP client (the agent, or a poisoned tool output speaking through it) may *ask*
for a forget (``memory_forget``) or a correction (``memory_correct``: old text, new
text). A request is recorded in the state dir and changes nothing else; only the owner
(``reverie pending confirm ID`` or the review page) carries it out, as a forget by the
owner. ``reverie pending reject ID`` drops it. Requests keep their text (the owner must
read what is asked), in the state dir, never in the workspace.

A session's directive that its cited owner message does not hold all of is kept the
same way (kind ``directive``), and so is every standing intent an agent proposed (kind
``intent``: it lives in the intents table, pending, and is listed here): confirming one
writes the directive to USER.md, or arms the intent, as the owner's own.

A confirmed correction edits, in every file the forget of its old text would touch,
the words it names and nothing else (:mod:`.correct`): the rest of the line, its
origin marker (re-signed for the new words: the line keeps its trust, no more) and its
trailers stay. The old lines get line tombstones (so the old wording cannot come back
from a copy), never a phrase tombstone (the new text may reuse its words). Before you
confirm, :meth:`Pending.diff` shows each line as it is and as it will be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from ..clock import Clock
from ..dreaming.directives import write_directive
from ..errors import ReverieError
from ..intents import Intents
from ..intents.model import Status
from ..storage.workspace import Workspace
from .correct import planner
from .forget import ForgetReport, Forgetter
from .requests import MAX_PENDING, MAX_TEXT, Request, RequestStore
from .select import Selector


class Pending:
    """What waits for the owner: the requests of :mod:`.requests`, and the standing
    intents an agent or an ungrounded session call proposed (kind ``intent``, the
    intent's own id)."""

    def __init__(
        self,
        ws: Workspace,
        forgetter: Forgetter,
        store: RequestStore,
        *,
        now: Callable[[], datetime],
        preimages_kept: int,
        intents: Callable[[], Intents | None] = lambda: None,
        linker: Callable[[str, str, str | None], dict[str, Any]] | None = None,
    ) -> None:
        self.ws, self.forgetter, self.now = ws, forgetter, now
        self.linker = linker  # writes a confirmed link request (:meth:`.service.Curation`)
        self.store = store
        # record a request; nothing else changes (``key``: a directive's USER.md key, or
        # a link's two line keys; ``reason``: why it was not done on the asker's word)
        self.request = store.add
        self.preimages_kept = preimages_kept
        self.intents = intents

    def _intents(self) -> list[Request]:
        intents = self.intents()
        if intents is None:
            return []
        return [
            Request(
                i.id, "intent", i.text, None, i.created.isoformat(timespec="seconds"),
                i.proposed_by, reason=f"{i.kind.value} intent, {i.when}",
            )
            for i in intents.listing()
            if i.status is Status.PENDING
        ]  # fmt: skip

    def requests(self, *, all_: bool = False) -> list[Request]:
        mine = [r for r in self.store.load() if all_ or r.status == "pending"]
        return mine + self._intents()

    def _take(self, rid: str) -> Request:
        req = self.store.take(rid)
        if req is None:
            req = next((r for r in self._intents() if r.id == rid.strip()), None)
        if req is None:
            raise ReverieError(f"no pending request {rid!r}; see `reverie pending list`")
        return req

    def reject(self, rid: str) -> Request:
        with self.store.lock():
            req = self._take(rid)
            if req.kind == "intent":
                self._intent_port().cancel(req.id)
            else:
                self.store.decide(rid, "rejected")
        req.status = "rejected"
        return req

    def _intent_port(self) -> Intents:
        intents = self.intents()
        if intents is None:  # (listed only when the port is there)
            raise ReverieError("standing intents are not available here")
        return intents

    def confirm(self, rid: str) -> dict[str, Any]:
        """Carry the request out as the owner's own forget, correction or directive, or
        arm the proposed intent."""
        with self.store.lock():
            req = self._take(rid)
            by = f"owner confirmed agent request {req.id}"
            out: dict[str, Any] = {}
            if req.kind == "intent":
                out["intent"] = self._intent_port().confirm(req.id).as_dict()
            elif req.kind == "directive":
                out["directive"] = self._write_directive(req, by)
            elif req.kind == "forget":
                out["forget"] = self.forgetter.forget(Selector.of(req.text), by=by).as_dict()
                out["written"] = []
            elif req.kind == "link":
                if self.linker is None:
                    raise ReverieError("links are not available here")
                out["link"] = self.linker(req.text, req.new_text or "", req.key)
            else:
                report = self._correct(req, by=by, dry_run=False)
                out["written"] = sorted(
                    rel for rel, hits in report.files.items() if any(h.get("new") for h in hits)
                )
                out["forget"] = report.as_dict()
            if req.kind != "intent":
                self.store.decide(req.id, "confirmed")
        return {"request": asdict(req) | {"status": "confirmed"}, **out}

    def _write_directive(self, req: Request, by: str) -> dict[str, Any]:
        clock = Clock(self.now())
        outcome = write_directive(
            self.ws, req.text, key=req.key, by=by, clock=clock, preimages_kept=self.preimages_kept
        )
        if not outcome.ok:
            raise ReverieError(f"request {req.id}: USER.md refused it: {outcome.reason}")
        self.forgetter.p.reindex()
        return {"action": outcome.value.action, "summary": outcome.value.summary()}

    # -- corrections ---------------------------------------------------------------------
    def _correct(self, req: Request, *, by: str, dry_run: bool) -> ForgetReport:
        edit = planner(req.text, req.new_text or "", self.ws.origin_key())
        return self.forgetter.forget(
            Selector.of(req.text), by=by, phrase_stone=False, edit=edit, dry_run=dry_run
        )

    def diff(self, req: Request) -> list[dict[str, Any]]:
        """What confirming ``req`` changes, line by line: ``path``, ``line``, ``old``
        and ``new`` (None: the line goes). Nothing is written; a directive or an intent
        changes no line (its text is the change)."""
        if req.kind == "forget":
            report = self.forgetter.forget(Selector.of(req.text), dry_run=True)
        elif req.kind == "correct":
            report = self._correct(req, by="preview", dry_run=True)
        else:
            return []
        return [
            {"path": rel, "line": h["line"], "old": h["text"], "new": h.get("new")}
            for rel, hits in sorted(report.files.items())
            for h in hits
        ]


__all__ = ["MAX_PENDING", "MAX_TEXT", "Pending", "Request"]
