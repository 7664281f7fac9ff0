"""The keyword prefilter's index: the armed intents kept in memory between changes
of the table (pure). Each trigger is indexed under one key (its longest term's longest
Latin stem, or its longest CJK run); a candidate is then checked against all its
triggers (:func:`reverie.intents.model.matching_trigger`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from .model import Inbound, Intent, Kind, Status, matching_trigger, term_keys


@dataclass
class Armed:
    """The armed intents kept in memory between store changes: the prefilter's index."""

    events: dict[str, Intent] = field(default_factory=dict)
    by_stem: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    cjk: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    due: list[tuple[datetime, str]] = field(default_factory=list)

    @classmethod
    def of(cls, intents: list[Intent]) -> Armed:
        armed = cls()
        for i in intents:
            if i.next_turn is not None:
                armed.due.append((i.next_turn, i.id))
            if i.kind is Kind.EVENT:
                armed.events[i.id] = i
                for trig in i.triggers:
                    # one key per trigger is enough to find it: its rarest-looking term
                    latin, cjk = term_keys(max(trig, key=len))
                    if latin:
                        armed.by_stem[max(latin, key=len)].add(i.id)
                    else:
                        armed.cjk[max(cjk, key=len)].add(i.id)
        armed.due.sort()
        return armed

    def candidates(self, msg: Inbound) -> list[tuple[Intent, tuple[str, ...]]]:
        ids: set[str] = set()
        for s in msg.stems:
            ids |= self.by_stem.get(s, set())
        for sub, found in self.cjk.items():
            if sub in msg.lower:
                ids |= found
        out = []
        for iid in sorted(ids):
            trig = matching_trigger(self.events[iid].triggers, msg)
            if trig is not None:
                out.append((self.events[iid], trig))
        return out

    def due_ids(self, now: datetime) -> list[str]:
        return [iid for at, iid in self.due if at <= now]

    def refresh(self, intent: Intent) -> None:
        """Our own firing changed ``intent``: keep the index current without a reload
        (a status other than armed drops it)."""
        self.due = [(at, iid) for at, iid in self.due if iid != intent.id]
        if intent.status is not Status.ARMED:
            self.events.pop(intent.id, None)
            return
        if intent.kind is Kind.EVENT:
            self.events[intent.id] = intent
        if intent.next_turn is not None:
            self.due.append((intent.next_turn, intent.id))
            self.due.sort()


__all__ = ["Armed"]
