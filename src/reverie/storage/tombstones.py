"""Tombstones: what the owner forgot, kept as salted hashes so it can never come back.

A forget (``reverie forget``) removes lines from the workspace and records here, in the
state dir (never in the workspace, so no text can add or remove one), a hash of each
removed line's normalised content and, for ``forget TEXT``, of the phrase itself. Every
place a line enters memory asks :meth:`Tombstones.blocks` first: the journal append,
transcript ingestion, the index sync (so a re-imported export is never searchable) and
dreaming's promotion.

What is hashed is the *content* of a line: HTML comments (origin markers, trailers)
removed, the list marker, the ``HH:MM`` stamp and a dreaming ``Source:`` anchor
dropped, then the word tokens, lower-cased. So the same sentence in a journal, the
session corpus and MEMORY.md has one hash. Two kinds of stone:

- ``line``: the whole content of a removed line; blocks a line with exactly that content;
- ``phrase``: the owner's ``forget TEXT``; blocks any line whose tokens contain the
  phrase's tokens in order (checked by hashing every window of that length).

The hashes are keyed with a random salt stored beside them, so the file cannot be
checked against a list of guesses elsewhere; the text itself is never stored.

Pure functions first; :class:`Tombstones` is the small file adapter.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParseError
from .files import atomic_write
from .tombstone_hash import MIN_PHRASE_CHARS, contains, content, digest, tokens


@dataclass(frozen=True)
class Stone:
    """One tombstone: a salted hash, its kind, its phrase length and when it was laid."""

    hash: str
    kind: str  # line | phrase
    length: int  # tokens (phrase windows are checked at this length)
    at: str
    reason: str  # who forgot it and how (never the text)


class Tombstones:
    """The tombstone file in the state dir (``tombstones.json``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._salt: bytes | None = None
        self.stones: list[Stone] = []
        self._lines: set[str] = set()
        self._phrases: dict[int, set[str]] = {}
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (ValueError, UnicodeDecodeError) as exc:
            # a torn file cannot happen (atomic writes); a hand-edited one is named
            raise ParseError(f"corrupt tombstone file ({exc})", path=str(self.path)) from None
        self._salt = bytes.fromhex(str(data.get("salt", "")))
        for raw in data.get("stones", []):
            self._add(Stone(**raw))

    def _add(self, stone: Stone) -> None:
        if stone.kind == "line":
            self._lines.add(stone.hash)
        else:
            self._phrases.setdefault(stone.length, set()).add(stone.hash)
        self.stones.append(stone)

    def __len__(self) -> int:
        return len(self.stones)

    @property
    def salt(self) -> bytes:
        if self._salt is None:
            self._salt = secrets.token_bytes(16)
        return self._salt

    def adopt_salt(self, salt: bytes) -> None:
        """Use ``salt`` while no file exists yet (a forget journal planned with it)."""
        if not self.path.exists():
            self._salt = salt

    def blocks(self, line: str) -> bool:
        """True when ``line`` (any Markdown line, markers and all) was forgotten."""
        if not self.stones:
            return False
        toks = tokens(line)
        if not toks:
            return False
        if digest(self.salt, "line", toks) in self._lines:
            return True
        for n, hashes in self._phrases.items():
            for i in range(len(toks) - n + 1):
                if digest(self.salt, "phrase", toks[i : i + n]) in hashes:
                    return True
        return False

    def blank(self, text: str) -> str:
        """``text`` with every forgotten line emptied (line numbers stay)."""
        if not self.stones:
            return text
        return "\n".join("" if self.blocks(ln) else ln for ln in text.split("\n"))

    def plan(
        self, lines: Iterable[str], phrase: str | None, *, at: str, reason: str
    ) -> list[Stone]:
        """The new stones for removed ``lines`` (and ``phrase``); not yet saved."""
        new: dict[str, Stone] = {}
        if phrase is not None:
            toks = tokens(phrase)
            if toks:
                h = digest(self.salt, "phrase", toks)
                new[h] = Stone(h, "phrase", len(toks), at, reason)
        for line in lines:
            toks = tokens(line)
            if toks:
                h = digest(self.salt, "line", toks)
                new.setdefault(h, Stone(h, "line", len(toks), at, reason))
        known = self._lines | {h for hs in self._phrases.values() for h in hs}
        return [s for s in new.values() if s.hash not in known]

    def save(self, stones: Sequence[Stone]) -> None:
        """Add ``stones`` and write the file atomically (mode 0600)."""
        for s in stones:
            self._add(s)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"salt": self.salt.hex(), "stones": [s.__dict__ for s in self.stones]}
        atomic_write(self.path, json.dumps(data, indent=1))
        self.path.chmod(0o600)


__all__ = ["MIN_PHRASE_CHARS", "Stone", "Tombstones", "contains", "content", "tokens"]
