"""The forget journal: a forget under way, recorded before its first change, so that a
forget killed halfway is finished by the next open (any door) instead of staying
half-done (:meth:`reverie.curation.forget.Forgetter.resume`).

It holds no text: the tombstones to lay (salted hashes, as ``tombstones.json`` keeps
them), salted hashes of what else the forget matches (the phrase of a correction,
which lays no phrase stone; the token prefixes of removed lines, for history lines
cut short), the SHA-256 of the chunk texts whose cached vectors go, the per-file
counts for the DREAMS.md entry, and the options. Written atomically (0600) in the
state dir; removed when every step is done.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParseError
from ..storage.files import atomic_write
from ..storage.tombstone_hash import digest, tokens
from ..storage.tombstones import Stone, Tombstones

MIN_CUT_TOKENS = 6  # a DREAMS.md diff line cut short still names this many words


@dataclass
class ForgetJournal:
    """One forget's plan, by hashes (see the module doc)."""

    id: str
    at: str
    by: str
    selector: str
    purge_history: bool
    stones: list[dict[str, Any]] = field(default_factory=list)
    phrase: tuple[int, str] | None = None  # (token count, hash) of a phrase without a stone
    prefixes: list[str] = field(default_factory=list)
    vectors: list[str] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)
    salt: str = ""  # the tombstones' salt, while their file does not exist yet
    # a correction: the replacement of each selected line, by the old line's salted hash
    # (the new text is what the owner confirmed; the old one is never stored)
    edits: dict[str, str] = field(default_factory=dict)
    busy: list[str] = field(default_factory=list)  # all done but these WALs' checkpoint

    @classmethod
    def plan(
        cls,
        salt: bytes,
        *,
        at: str,
        by: str,
        selector: str,
        purge_history: bool,
        stones: Iterable[Stone],
        phrase: str | None,
        contents: Iterable[tuple[str, ...]],
        vectors: Iterable[str],
        files: Mapping[str, int],
        edits: Mapping[str, str] | None = None,
    ) -> ForgetJournal:
        toks = tokens(phrase) if phrase else ()
        prefixes = {
            digest(salt, "prefix", c[:n])
            for c in contents
            for n in range(MIN_CUT_TOKENS, len(c) + 1)
        }
        return cls(
            id=secrets.token_hex(6),
            at=at,
            by=by,
            selector=selector,
            purge_history=purge_history,
            stones=[asdict(s) for s in stones],
            phrase=(len(toks), digest(salt, "phrase", toks)) if toks else None,
            prefixes=sorted(prefixes),
            vectors=sorted(set(vectors)),
            files=dict(files),
            salt=salt.hex(),
            edits={digest(salt, "line", (old,)): new for old, new in (edits or {}).items()},
        )

    def edit(self, _rel: str, raw: str) -> str | None:
        """A correction's new line for the selected line ``raw`` (None: remove it)."""
        return self.edits.get(digest(bytes.fromhex(self.salt), "line", (raw,)))

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self), indent=1))
        path.chmod(0o600)

    @classmethod
    def load(cls, path: Path) -> ForgetJournal | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"corrupt forget journal ({exc})", path=str(path)) from None
        if data.get("phrase") is not None:
            data["phrase"] = tuple(data["phrase"])
        return cls(**data)

    def lay(self, stones: Tombstones) -> None:
        """Save the journal's tombstones not yet in ``stones`` (a repeat lays none)."""
        if self.salt:
            stones.adopt_salt(bytes.fromhex(self.salt))
        known = {s.hash for s in stones.stones}
        new = [Stone(**s) for s in self.stones if s["hash"] not in known]
        stones.save(new)

    def matcher(self, stones: Tombstones) -> Blocked:
        """What this forget removes (call after :meth:`lay`)."""
        return Blocked(stones, self.phrase, frozenset(self.prefixes))


class Blocked:
    """The lines a forget removes: whatever a tombstone blocks (this forget's and every
    earlier one's: a copy that came back by hand goes too), a correction's phrase."""

    def __init__(
        self, stones: Tombstones, phrase: tuple[int, str] | None, prefixes: frozenset[str]
    ) -> None:
        self.stones, self.phrase, self.prefixes = stones, phrase, prefixes

    def __call__(self, raw: str) -> bool:
        if self.stones.blocks(raw):
            return True
        if self.phrase is None:
            return False
        n, h = self.phrase
        toks = tokens(raw)
        salt = self.stones.salt
        return any(digest(salt, "phrase", toks[i : i + n]) == h for i in range(len(toks) - n + 1))

    def cut(self, raw: str) -> bool:
        """A history line cut short (DREAMS.md diffs keep 200 characters)."""
        toks = tokens(raw)
        return len(toks) >= MIN_CUT_TOKENS and digest(self.stones.salt, "prefix", toks) in (
            self.prefixes
        )

    def history_line(self, line: str) -> bool:
        """A DREAMS.md diff line (``- `+` text``) reads as its text (tokens skip the signs)."""
        return self(line.replace("`", " ")) or self.cut(line)


__all__ = ["Blocked", "ForgetJournal"]
