"""What a forget selects (pure): TEXT, ``--key PATH:LINE``, ``--session ID``, ``--source KIND``.

A selector becomes a predicate over one parsed line (its raw text, its file's kind,
its origin); the lines it selects *directly* are then widened to every line, in any
file, with the same content (:func:`reverie.storage.tombstones.tokens`), so a fact
removed from a journal also goes from the session corpus and MEMORY.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ReverieError
from ..provenance.origin import Origin
from ..provenance.paths import SourceKind
from ..storage.tombstone_hash import MIN_PHRASE_CHARS, contains, tokens

_KEY_RE = re.compile(r"^(?P<path>[^#]+?)(?::|#L)(?P<a>\d+)(?:(?::|-L?)(?P<b>\d+))?$")
_ANCHOR_CHARS = re.compile(r"[^A-Za-z0-9_.#:/-]")
ORIGINS = tuple(o.value for o in Origin)
KINDS = tuple(k.value for k in SourceKind if k not in (SourceKind.REVIEW, SourceKind.STATE))


@dataclass(frozen=True)
class Selector:
    """One forget request; exactly one of the fields is set."""

    text: str | None = None
    key: str | None = None
    session: str | None = None
    source: str | None = None

    @classmethod
    def of(
        cls,
        text: str | None = None,
        *,
        key: str | None = None,
        session: str | None = None,
        source: str | None = None,
    ) -> Selector:
        given = [v for v in (text, key, session, source) if v]
        if len(given) != 1:
            raise ReverieError("forget needs exactly one of TEXT, --key, --session, --source")
        sel = cls(text=text or None, key=key or None, session=session or None, source=source)
        if sel.text is not None and (
            len(sel.text.strip()) < MIN_PHRASE_CHARS or not tokens(sel.text)
        ):
            raise ReverieError(
                f"forget TEXT: {sel.text!r} is too short (at least {MIN_PHRASE_CHARS} characters "
                "and one word); use --key PATH:LINE for one line"
            )
        if sel.source is not None and sel.source not in ORIGINS + KINDS:
            raise ReverieError(
                f"--source {sel.source!r}: not an origin ({', '.join(ORIGINS)}) "
                f"nor a file kind ({', '.join(KINDS)})"
            )
        if sel.key is not None:
            sel.key_range()  # validates
        return sel

    def describe(self) -> str:
        """How the request is named in DREAMS.md and the tombstones: never the text."""
        if self.text is not None:
            return "text (a phrase)"
        if self.key is not None:
            return f"key {self.key}"
        if self.session is not None:
            return f"session {self.session}"
        return f"source {self.source}"

    def key_range(self) -> tuple[str, int, int]:
        """``(path, first, last)`` of ``--key``: PATH:LINE, PATH#LN, PATH:A:B, PATH#LA-LB."""
        m = _KEY_RE.match(self.key or "")
        if m is None:
            raise ReverieError(
                f"--key {self.key!r}: expected PATH:LINE (e.g. memory/2026-04-28.md:7)"
            )
        a = int(m.group("a"))
        b = int(m.group("b") or a)
        if a < 1 or b < a:
            raise ReverieError(f"--key {self.key!r}: line numbers start at 1, first <= last")
        return m.group("path"), a, b

    def direct(self, path: str, number: int, raw: str, kind: str, origin: str) -> bool:
        """Whether this selector names the line itself (before widening by content)."""
        if not tokens(raw):
            return False
        if self.text is not None:  # a heading holding the text goes too
            return contains(tokens(raw), tokens(self.text))
        if raw.lstrip().startswith("#"):
            return False  # headings are structure: no key, session or source selects them
        if self.key is not None:
            kpath, a, b = self.key_range()
            return path == kpath and a <= number <= b
        if self.session is not None:
            sid = _ANCHOR_CHARS.sub("_", self.session)
            return re.search(rf"\banchor:\s*{re.escape(sid)}#\d+", raw) is not None
        return self.source in (kind, origin)


__all__ = ["KINDS", "ORIGINS", "Selector"]
