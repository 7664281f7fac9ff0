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

A confirmed correction forgets the lines holding the old text (line tombstones only, so
the new text may reuse its words) and writes the new text where the old one was: in
place in MEMORY.md / USER.md (the entry keeps its trailers), otherwise as one journal
line written by the agent (the text is the agent's, whoever confirmed it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from ..clock import Clock
from ..dreaming.directives import write_directive
from ..dreaming.safe_write import MemoryFile, sha
from ..errors import ReverieError
from ..intents import Intents
from ..intents.model import Status
from ..provenance.paths import CURATED_FILES
from ..storage.tombstone_hash import contains, tokens
from ..storage.trailers import Trailers, parse_line, render
from ..storage.workspace import Workspace
from ..write.journal import clean_lines
from .forget import ForgetReport, Forgetter
from .requests import MAX_PENDING, MAX_TEXT, Request, Requests
from .select import Selector


class Pending:
    """What waits for the owner: the requests of :mod:`.requests`, and the standing
    intents an agent or an ungrounded session call proposed (kind ``intent``, the
    intent's own id)."""

    def __init__(
        self,
        ws: Workspace,
        forgetter: Forgetter,
        *,
        now: Callable[[], datetime],
        preimages_kept: int,
        journal: Callable[[str], object],
        max_pending: int = MAX_PENDING,
        intents: Callable[[], Intents | None] = lambda: None,
    ) -> None:
        self.ws, self.forgetter, self.now = ws, forgetter, now
        self.store = Requests(ws, now=now, max_pending=max_pending)
        self.preimages_kept = preimages_kept
        self.journal = journal  # appends one line as the agent (the engine's write)
        self.intents = intents
        self.path = self.store.path

    def request(self, kind: str, text: str, new_text: str | None = None, *, by: str) -> Request:
        """Record a request; nothing else changes."""
        return self.store.add(kind, text, new_text, by=by)

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
            else:
                places = self._curated_places(req.text)
                report = self.forgetter.forget(Selector.of(req.text), by=by, phrase_stone=False)
                out["written"] = self._write_correction(req, places, report)
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


__all__ = ["MAX_PENDING", "MAX_TEXT", "Pending", "Request"]
