"""Standing intents as a service: add, confirm, cancel, list, and fire (R-INTENT-1..3).

Who may arm an intent is decided from the caller's *proposer* (computed by code at the
entry point, never from the text): the owner (``reverie intent add``, or the session API
citing an owner message that holds all of the intent) arms at once; anyone else only
proposes: the intent is *pending*, never fires, and waits for the owner (``reverie
intent confirm ID`` or ``reverie pending confirm ID``). Nothing else creates intents.

Firing (:meth:`Intents.fire_turn`) is zero-model: an in-memory keyword prefilter over
the armed event intents (at most ``intent_max_armed``), then one transaction holding
the table's write lock (:mod:`.port`) that re-reads the candidates and due time
intents, re-checks status, scope, expiry, cooldown and budget, and records each
firing, at most ``intent_per_turn`` of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from ..clock import Clock, local_zone
from ..errors import ConfigError, ReverieError
from ..provenance.grounding import Grounded, faithful
from ..results import Accepted, Pending, Rejected
from ..settings import Settings
from ..storage.workspace import Workspace
from .armed import Armed
from .model import LIVE, Fired, Inbound, Intent, Kind, Spec, Status
from .port import IntentStore, IntentTable, IntentTx
from .rows import local as _local
from .rows import stamp as _u

if TYPE_CHECKING:  # built on the first change: firing on a prompt never writes the view
    from .view import ViewWriter

Proposer = Literal["owner", "agent"]


def _compile() -> ModuleType:
    """The parser (dateparser, jionlp, croniter): loaded when an intent is added or a
    recurring one comes due, never on the per-message path of a one-shot process."""
    from . import compile

    return compile


class Intents:
    """The standing intents of one agent (table in the state dir or the tenant's rows on
    PostgreSQL, :mod:`.port`; view in the workspace)."""

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        clock: Clock | Callable[[], Clock],
        table: IntentTable,
    ) -> None:
        """``clock``: the clock, or how to get the host's current one (the facade's
        ``clock`` may be replaced, e.g. by a test moving time on); ``table``: where the
        intents table is (the backend's, :meth:`reverie.backends.Backend.intent_table`)."""
        self.workspace, self.settings = workspace, settings
        self.table = table
        self._clock = clock if callable(clock) and not isinstance(clock, Clock) else lambda: clock
        self._store: IntentStore | None = None
        self._armed: Armed | None = None
        self._version = -1
        self._swept = -float("inf")
        self._view: ViewWriter | None = None

    # -- plumbing ------------------------------------------------------------------
    @property
    def clock(self) -> Clock:
        return self._clock()

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._clock = lambda: clock

    @property
    def view(self) -> ViewWriter:  # INTENTS.md
        if self._view is None:
            from .view import ViewWriter

            self._view = ViewWriter(self.workspace)
        return self._view

    def _absent(self) -> bool:
        """No intent was ever added (no table): nothing to fire, and nothing is created
        (a daemon must never re-create a state dir deleted under it)."""
        return self._store is None and not self.table.may_exist()

    @property
    def store(self) -> IntentStore:
        if self._store is None:
            self._store = self.table.open()
        return self._store

    def existing(self) -> IntentStore | None:
        """The table if there is one (a forget reaches it; none is created)."""
        return None if self._absent() else self.store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def zone(self) -> tzinfo:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        name = str(self.settings.intent_timezone).strip()
        if not name:
            return local_zone()
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"intent_timezone: not a time zone: {name!r}") from None

    def now(self) -> datetime:
        return self.clock.now().astimezone(self.zone)

    def _changed(self) -> None:
        self._armed = None
        self.view.write(self.store.select())

    # -- add, confirm, cancel, list ------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        proposer: Proposer,
        proposed_by: str,
        at: str | None = None,
        every: str | None = None,
        on: str | None = None,
        review_by: str | None = None,
        spec: Spec | None = None,
    ) -> Intent:
        """Compile and store one intent: armed for the owner, pending for anyone else."""
        import uuid  # (it imports platform: not on the firing path)

        now = self.now()
        s = self.settings
        spec = spec or _compile().compile_text(
            text,
            now,
            at=at,
            every=every,
            on=on,
            review_by=review_by,
            wish_days=int(s.intent_wish_review_days),
        )
        if spec.kind is Kind.TIME and spec.at is not None and spec.at <= now - timedelta(minutes=1):
            raise ReverieError(f"{spec.at.isoformat(timespec='minutes')} has passed already")
        zone = self.zone
        intent = Intent(
            id=uuid.uuid4().hex[:8],
            kind=spec.kind,
            status=Status.PENDING,
            text=spec.text,
            origin="owner" if proposer == "owner" else "agent",
            proposed_by=proposed_by,
            created=now,
            at=spec.at,
            cron=spec.cron,
            tz=getattr(zone, "key", "") or str(zone),
            triggers=spec.triggers,
            review_by=spec.review_by,
            cooldown_s=float(s.intent_cooldown_hours) * 3600,
            budget=int(s.intent_budget),
        )
        with self.store.transaction() as tx:
            same = self._same(intent)  # said twice, kept once
            if same is not None and (same.status is Status.ARMED or proposer != "owner"):
                return same
            if same is not None:  # the owner saying what the agent proposed arms it
                intent = self._arm(tx, replace(same, origin="owner"), now)
                tx.update(intent)
            else:
                live = tx.count(("pending", "armed"))
                if live >= 2 * int(s.intent_max_armed):
                    raise ReverieError(f"{live} live intents: cancel some before adding more")
                if proposer == "owner":
                    intent = self._arm(tx, intent, now)
                tx.insert(intent)
        self._changed()
        return intent

    def _same(self, new: Intent) -> Intent | None:
        """A live intent that says exactly what ``new`` says, the same way."""
        for old in self.store.select(statuses=("pending", "armed"), text=new.text):
            how = (old.kind, old.at, old.cron, old.triggers, old.review_by)
            if how == (new.kind, new.at, new.cron, new.triggers, new.review_by):
                return old
        return None

    def propose(
        self, text: str, said: Accepted[Grounded] | Rejected, where: str, **how: str | None
    ) -> Accepted[Intent] | Pending[Intent]:
        """An intent from a session: armed when the cited owner message ``said`` holds all
        of it, time and triggers included (:func:`~reverie.provenance.grounding.faithful`);
        else pending, with the reason, under its id (``reverie pending confirm ID``)."""
        outcome, keys = said, ("at", "every", "on", "review_by")
        when: dict[str, Any] = {k: how.get(k) for k in keys}
        if isinstance(said, Accepted):
            whole = " ".join([text, *(v for v in how.values() if v)])
            outcome = faithful(whole, said.value.text, seq=said.value.seq)
        if isinstance(outcome, Accepted):
            return Accepted(self.add(text, proposer="owner", proposed_by=where, **when))
        intent = self.add(text, proposer="agent", proposed_by=where.split("#")[0], **when)
        if intent.status is Status.ARMED:  # the owner armed this very intent already
            return Accepted(intent)
        return Pending(intent.id, outcome.code, outcome.reason, intent)

    def _arm(self, tx: IntentTx, intent: Intent, now: datetime) -> Intent:
        armed = tx.count(("armed",), "event")
        cap = int(self.settings.intent_max_armed)
        if intent.kind is Kind.EVENT and armed >= cap:
            raise ReverieError(f"{cap} event intents are armed already: cancel one first")
        nxt: datetime | None = None
        if intent.kind is Kind.TIME:
            nxt = _compile().next_slot(intent.cron, now, self.zone) if intent.cron else intent.at
        elif intent.kind is Kind.WISH:
            nxt = intent.review_by
        expires = None
        if intent.kind is Kind.EVENT:
            expires = now + timedelta(days=float(self.settings.intent_expiry_days))
        return replace(
            intent,
            status=Status.ARMED,
            confirmed=now,
            expires=expires,
            next_turn=nxt,
            next_notify=nxt if intent.kind is Kind.TIME else None,
        )

    def get(self, intent_id: str) -> Intent:
        found = self.store.select(ids=[intent_id.strip()])
        if not found:
            raise ReverieError(f"no intent {intent_id!r} (see `reverie intent list --all`)")
        return found[0]

    def confirm(self, intent_id: str) -> Intent:
        """The owner arms a pending intent (``reverie intent confirm ID``)."""
        now = self.now()
        with self.store.transaction() as tx:
            intent = self.get(intent_id)
            if intent.status is not Status.PENDING:
                raise ReverieError(f"intent {intent.id} is {intent.status.value}, not pending")
            intent = self._arm(tx, replace(intent, origin="owner"), now)
            tx.update(intent)
        self._changed()
        return intent

    def cancel(self, intent_id: str) -> Intent:
        """Cancel an intent: only ever on an explicit request (R-INTENT-3)."""
        with self.store.transaction() as tx:
            intent = self.get(intent_id)
            if intent.status not in LIVE:
                raise ReverieError(f"intent {intent.id} is {intent.status.value} already")
            intent = replace(
                intent, status=Status.CANCELLED, ended=self.now(), next_turn=None, next_notify=None
            )
            tx.update(intent)
        self._changed()
        return intent

    def listing(self, *, all: bool = False) -> list[Intent]:
        if self._absent():
            return []
        self.expire()
        if all:
            return self.store.select()
        return self.store.select(statuses=("pending", "armed"))

    def expire(self) -> int:
        """Mark armed event intents past their expiry as expired, and proposals left
        unconfirmed for as long."""
        now = self.now()
        stale = now - timedelta(days=float(self.settings.intent_expiry_days))
        with self.store.transaction() as tx:
            n = tx.expire(_u(now), _u(stale))
        if n:
            self._changed()
        return n

    def sweep(self, every: float) -> None:
        """:meth:`expire`, at most once per ``every`` seconds (the daemon ticks often)."""
        mono = time.monotonic()
        if mono - self._swept >= every and not self._absent():
            self._swept = mono
            self.expire()

    # -- firing ----------------------------------------------------------------------------
    def _index(self) -> Armed:
        version = self.store.version()
        if self._armed is None or version != self._version:
            self._armed = Armed.of(self.store.select(statuses=("armed",)))
            self._version = version
        return self._armed

    def fire_turn(self, message: str) -> list[Fired]:
        """The intents that fire for one inbound message (see the module docstring)."""
        if self._absent():
            return []
        now = self.now()
        armed = self._index()
        events = armed.candidates(Inbound.of(message))
        due = armed.due_ids(now)
        if not events and not due:
            return []
        limit = int(self.settings.intent_per_turn)
        fired: list[Fired] = []
        ended = False
        with self.store.transaction() as tx:
            ids = [*due, *(i.id for i, _ in events)]
            rows = {i.id: i for i in self.store.select(ids=ids)}
            for iid in due:
                i = rows.get(iid)
                if len(fired) >= limit or i is None or i.status is not Status.ARMED:
                    continue
                if i.next_turn is None or i.next_turn > now:
                    continue
                slot = i.next_turn
                nxt = _compile().next_slot(i.cron, now, self.zone) if i.cron else None
                status: Status = i.status
                if i.kind is Kind.TIME and not i.cron:  # shown: done (a notification due
                    status, ended = Status.DONE, True  # still goes out, see below)
                i = replace(i, next_turn=nxt, fired=i.fired + 1, last_fired=now, status=status)
                reason = "review" if i.kind is Kind.WISH else f"due {_local(slot, self.zone)}"
                tx.update(i)
                tx.fired(i.id, now, "turn", reason)
                fired.append(Fired(i, reason))
            for cand, trig in sorted(events, key=lambda e: (-len(e[1]), e[0].created)):
                i = rows.get(cand.id)
                if len(fired) >= limit or i is None or i.status is not Status.ARMED:
                    continue
                if i.expires is not None and i.expires <= now:
                    tx.update(replace(i, status=Status.EXPIRED, ended=now))
                    ended = True
                    continue
                if i.fired >= i.budget:
                    continue
                if i.last_fired is not None and now - i.last_fired < timedelta(
                    seconds=i.cooldown_s
                ):
                    continue
                spent = i.fired + 1 >= i.budget
                i = replace(
                    i,
                    fired=i.fired + 1,
                    last_fired=now,
                    status=Status.DONE if spent else i.status,
                    ended=now if spent else None,
                )
                ended = ended or spent
                reason = "matched " + ", ".join(trig)
                tx.update(i)
                tx.fired(i.id, now, "turn", reason)
                fired.append(Fired(i, reason))
        for f in fired:  # our own commit does not change data_version: update in place
            armed.refresh(f.intent)
        if ended:
            self._changed()
        return fired

    def take_due_notifications(self) -> list[Intent]:
        """Time intents whose slot passed and were not notified yet: advanced and
        recorded in one transaction (at most once), returned for the notifier."""
        if self._absent():
            return []
        now = self.now()
        out: list[Intent] = []
        if not self.store.select(notify_by=_u(now)):  # a cheap read first: the daemon ticks
            return []
        with self.store.transaction() as tx:
            for i in self.store.select(notify_by=_u(now)):
                nxt = _compile().next_slot(i.cron, now, self.zone) if i.cron else None
                tx.update(replace(i, next_notify=nxt))
                tx.fired(i.id, now, "notify", f"slot {_local(i.next_notify, self.zone)}")
                out.append(i)
        if out:
            self._armed = None
        return out


__all__ = ["Intents", "Proposer"]
