"""Version links a model proposes, accepted only after checks (issue 38, point 1).

When a model is configured, each dream first offers it the owner's and the agent's
journal lines of the last :data:`RECENT_DAYS` days (up to :data:`MAX_LINES`, newest
first), each with the earlier owner and agent lines most alike it (the index's vector
lane, up to :data:`OFFERED` each, never an untrusted or system line), and asks which
new line replaces which older one, and on what subject. A proposal is written (as
``reverie link`` writes it, :mod:`.link`) only when:

- both lines were offered, the older one under that new line (no other line can be
  named);
- the subject is given and each of its words is in both lines (a word of either
  language: its stem, or the characters for Chinese);
- the link's own rules hold (a later day, owner or agent lines, an agent line never
  replacing the owner's, a marker signed by this workspace's key), checked again as
  it is written.

A failed or slow model call, or a reply out of shape, writes nothing and is said in
the dream's report; the dream goes on. Secrets are masked before the lines are sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import ProviderError
from ..llm.base import LLM, Message
from ..provenance.markers import resolve
from ..provenance.origin import Origin
from ..provenance.paths import classify
from ..provenance.redact import mask
from ..storage import reader
from ..storage.embedders.base import Embedder
from ..storage.index.port import IndexReader
from ..storage.index.rows import LaneScores
from ..storage.workspace import Workspace
from .link import LinkRefused, link, subject_in_both

RECENT_DAYS = 7  # the new lines offered: the owner's and agent's of this many days
MAX_LINES = 40  # ... at most this many, newest first
OFFERED = 4  # earlier lines offered under each new line
FLOOR = 0.3  # ... each at least this alike (cosine of their vectors)
TRUSTED = (Origin.OWNER, Origin.AGENT)

SYSTEM = (
    "You keep a person's memory current. Each NEW line below was written recently; "
    "under it are OLDER lines that may state an earlier version of the same fact. "
    "For each NEW line that changes, cancels or replaces what one OLDER line under it "
    "states (a new address, a new time, a dropped plan, another person in a role), "
    "give the pair and the subject in two to five words that appear in both lines. "
    "A line that only mentions the same subject replaces nothing. When in doubt, "
    'leave it out. Answer {"links": []} when no line replaces another.'
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "links": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "new": {"type": "string"},
                    "old": {"type": "string"},
                    "subject": {"type": "string"},
                },
                "required": ["new", "old", "subject"],
            },
        }
    },
    "required": ["links"],
}


@dataclass(frozen=True)
class Offer:
    """One new line and the earlier lines offered under it (``path#Ln`` and text)."""

    ref: str
    text: str
    older: tuple[tuple[str, str], ...]


@dataclass
class LinkPass:
    """What one pass wrote, refused, and why (the dream's report prints it)."""

    linked: list[dict[str, str]] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"linked": self.linked, "refused": self.refused, "note": self.note}


def prompt(offers: list[Offer]) -> str:
    """The lines as the model reads them: ``N1``, its older ``N1.a``, ``N1.b``, ..."""
    out = []
    for n, o in enumerate(offers, start=1):
        out.append(f"N{n} NEW ({o.ref[7:17]}): {o.text}")
        out += [f"  N{n}.{chr(97 + k)} OLDER ({ref[7:17]}): {text}"
                for k, (ref, text) in enumerate(o.older)]  # fmt: skip
    return "\n".join(out)


def check(
    offers: list[Offer], data: Any
) -> tuple[list[tuple[str, str, str]], list[dict[str, str]]]:
    """The proposals that pass the checks (new ref, old ref, subject), and the refused."""
    ok: list[tuple[str, str, str]] = []
    refused: list[dict[str, str]] = []
    items = data.get("links", []) if isinstance(data, dict) else []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            refused.append({"new": "", "old": "", "why": f"not a link: {str(item)[:80]!r}"})
            continue
        new, old = str(item.get("new", "")), str(item.get("old", ""))
        subject = str(item.get("subject", "")).strip()
        m = re.fullmatch(r"N(\d+)", new)
        o = re.fullmatch(rf"{re.escape(new)}\.([a-z])", old)
        offer = offers[int(m.group(1)) - 1] if m and 0 < int(m.group(1)) <= len(offers) else None
        k = ord(o.group(1)) - 97 if o else -1
        if offer is None or not 0 <= k < len(offer.older):
            refused.append({"new": new, "old": old, "why": "not a pair that was offered"})
            continue
        old_ref, old_text = offer.older[k]
        if not subject_in_both(subject, offer.text, old_text):
            why = f"the subject {subject!r} is not in both lines"
            refused.append({"new": offer.ref, "old": old_ref, "why": why})
            continue
        ok.append((offer.ref, old_ref, subject))
    return ok, refused


def _recent(ws: Workspace, today: date) -> list[tuple[str, str]]:
    """The owner's and agent's signed journal lines of the last days (ref, text), newest
    first, that name no earlier line yet."""
    key = ws.origin_key()
    out: list[tuple[str, str]] = []
    for back in range(RECENT_DAYS):
        rel = f"memory/{(today - timedelta(days=back)).isoformat()}.md"
        try:  # the one reader policy: no FIFO, no link out of the workspace
            raw = reader.read_text(ws.root / rel, ws.root).split("\n")
        except OSError:  # missing, or refused
            continue
        pclass = classify(rel)
        for n in range(len(raw), 0, -1):
            lo = resolve(raw[n - 1], default=pclass.default_origin, ceiling=pclass.ceiling, key=key)
            if lo.origin in TRUSTED and lo.replaces is None and "sig:" in raw[n - 1]:
                out.append((f"{rel}#L{n}", lo.text))
    return out[:MAX_LINES]


def offers(ws: Workspace, ix: IndexReader, embedder: Embedder, today: date) -> list[Offer]:
    """Each recent line with the earlier owner and agent lines most alike it."""
    recent = _recent(ws, today)
    if not recent:
        return []
    vectors = embedder.embed_documents([text for _, text in recent])
    out = []
    for (ref, text), vec in zip(recent, vectors, strict=True):
        day = ref[7:17]
        near = ix.vector_top(vec, 4 * OFFERED)
        found = ix.candidates(list(near), LaneScores(near, {}, {}))
        older = [
            (f"{c.path}#L{c.start_line}", c.text.split("\n")[0])
            for c in sorted(found, key=lambda c: -near.get(c.chunk_id, 0.0))
            if c.kind == "journal" and c.day is not None and c.day.isoformat() < day
            and c.origin in TRUSTED and near.get(c.chunk_id, 0.0) >= FLOOR
        ][:OFFERED]  # fmt: skip
        if older:
            out.append(Offer(ref, text, tuple(older)))
    return out


def propose(
    ws: Workspace,
    ix: IndexReader,
    embedder: Embedder | None,
    llm: LLM,
    now: datetime,
    *,
    timeout: float,
    trusted: list[str],
) -> LinkPass:
    """Offer the recent lines to ``llm``, check what it proposes, write what passes."""
    done = LinkPass()
    if embedder is None:
        done.note = "no embedder: no earlier lines to offer"
        return done
    offered = offers(ws, ix, embedder, now.date())
    if not offered:
        return done
    masked = mask(prompt(offered))
    try:
        reply = llm.complete([Message("user", masked.text)], system=SYSTEM,
                             json_schema=SCHEMA, timeout=timeout, max_tokens=1024)  # fmt: skip
    except ProviderError as exc:
        done.note = f"the linking turn failed ({exc}): nothing linked"
        return done
    accepted, done.refused = check(offered, masked.restore_data(reply.data))
    for new, old, subject in accepted:
        try:
            link(ws, new, old, trusted)
        except LinkRefused as exc:
            done.refused.append({"new": new, "old": old, "why": str(exc)})
            continue
        done.linked.append({"new": new, "old": old, "subject": subject})
    return done


__all__ = ["LinkPass", "Offer", "check", "offers", "prompt", "propose", "subject_in_both"]
