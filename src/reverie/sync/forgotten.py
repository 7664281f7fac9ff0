"""Forget tombstones that travel (pure): each device's stones, hashes only, as a file of
the synced repository (``.reverie/forgotten/<device>.json``), its salt sealed for the
paired devices (:func:`reverie.sync.seal.seal_salt`). Every merge removes from the
merged files each line any device's stones block, so a line forgotten on one device is
gone on the others and no later merge (a third device that still holds it, an old
branch) brings it back. The forgotten text is never in the repository.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..storage.tombstone_hash import digest, tokens
from .seal import open_salt, seal_salt


@dataclass(frozen=True)
class StoneSet:
    """One device's stones and the salt they were hashed with."""

    salt: bytes
    lines: frozenset[str]
    phrases: tuple[tuple[int, frozenset[str]], ...]

    def blocks(self, line: str) -> bool:
        toks = tokens(line)
        if not toks:
            return False
        if digest(self.salt, "line", toks) in self.lines:
            return True
        return any(
            digest(self.salt, "phrase", toks[i : i + n]) in hashes
            for n, hashes in self.phrases
            for i in range(len(toks) - n + 1)
        )


def export(key: bytes, device: str, salt: bytes, stones: Iterable[dict[str, object]]) -> bytes:
    """The repository file of ``device``'s stones (hash, kind, length; no reason text)."""
    rows = sorted(
        ({"hash": s["hash"], "kind": s["kind"], "length": s["length"]} for s in stones),
        key=lambda r: str(r["hash"]),
    )
    data = {"device": device, "salt": seal_salt(key, device, salt), "stones": rows}
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def load(key: bytes, raw: bytes) -> StoneSet | None:
    """A device's stones from its repository file (None when it does not parse)."""
    try:
        data = json.loads(raw)
        salt = open_salt(key, str(data["device"]), str(data["salt"]))
        lines: set[str] = set()
        phrases: dict[int, set[str]] = {}
        for s in data["stones"]:
            if s["kind"] == "line":
                lines.add(str(s["hash"]))
            else:
                phrases.setdefault(int(s["length"]), set()).add(str(s["hash"]))
    except (ValueError, KeyError, TypeError):
        return None
    return StoneSet(
        salt, frozenset(lines), tuple((n, frozenset(h)) for n, h in sorted(phrases.items()))
    )


def scrub(text: str, sets: Iterable[StoneSet], removed: list[str] | None = None) -> str:
    """``text`` without the lines any of ``sets`` blocks (appended to ``removed``: the
    device's own stores are then cleared of them by a local forget)."""
    sets = list(sets)
    if not sets:
        return text
    kept = []
    for ln in text.split("\n"):
        if not any(s.blocks(ln) for s in sets):
            kept.append(ln)
        elif removed is not None:
            removed.append(ln)
    return "\n".join(kept)


__all__ = ["StoneSet", "export", "load", "scrub"]
