"""What a forget compares, and the salted hash of it (pure; see :mod:`.tombstones`).

The *content* of a Markdown line: HTML comments (origin markers, trailers, a comment
cut off at the end) removed, the list marker, the ``HH:MM`` stamp and a dreaming
``Source:`` anchor dropped; its word tokens, lower-cased (casefold). The same sentence
in a journal, the session corpus and MEMORY.md has the same tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Sequence

_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)  # a cut-off one too
_LEAD_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_STAMP_RE = re.compile(r"^\d{1,2}:\d{2}\s+")
_ANCHOR_RE = re.compile(r"\s*Source:\s*\S+?#L\d+-L\d+\s*$")
_WORD_RE = re.compile(r"\w+", re.UNICODE)
MIN_PHRASE_CHARS = 3


def content(line: str) -> str:
    """The content of one Markdown line, as a forget compares it (see the module doc)."""
    text = _COMMENT_RE.sub(" ", line)
    text = _LEAD_RE.sub("", text)
    text = _STAMP_RE.sub("", text.strip())
    return _ANCHOR_RE.sub("", text).strip()


def tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a line's content: Unicode-normalised (NFKC, so a decomposed
    accent reads as the composed letter), case-folded."""
    norm = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", content(text)).casefold())
    return tuple(_WORD_RE.findall(norm))


def contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """``needle`` occurs in ``haystack`` as a run of adjacent tokens."""
    n = len(needle)
    if not n:
        return False
    return any(tuple(haystack[i : i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


def digest(salt: bytes, kind: str, toks: Sequence[str]) -> str:
    msg = kind + "\x00" + "\x1f".join(toks)
    return hmac.new(salt, msg.encode("utf-8"), hashlib.sha256).hexdigest()


__all__ = ["MIN_PHRASE_CHARS", "contains", "content", "digest", "tokens"]
