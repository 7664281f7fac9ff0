"""A correction edits the words it names (pure).

``memory_correct`` (old text, new text), once the owner confirms it, changes each line
holding the old words *in place*: only the span of the old words is replaced, the rest
of the line stays byte for byte, and so do its origin marker and trailers (nothing is
edited inside an HTML comment). A signed marker that verified for the old line is
re-signed for the new one (same origin, session and project): the owner confirmed the
edit, so the line keeps the trust it had, no more; a marker that did not verify is left
as it was (it verifies for neither). The new text is one plain line with every comment
removed, so no marker or trailer can ride in with it.

The span is found as the old text itself (case-insensitive, outside comments), else as
the run of its word tokens (the same tokens a forget compares, so a correction finds
what the forget of its text would), widened by the punctuation the old text starts or
ends with.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ..provenance.markers import resign
from ..storage.tombstone_hash import tokens

_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_WORD_RE = re.compile(r"\w+", re.UNICODE)


def clean_new_text(text: str) -> str:
    """The new words as one plain line: no comment (marker, trailer), no line break."""
    return " ".join(_COMMENT_RE.sub(" ", text).split())


def _outside_comments(raw: str) -> list[tuple[int, int]]:
    """The spans of ``raw`` outside HTML comments."""
    spans, at = [], 0
    for m in _COMMENT_RE.finditer(raw):
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, len(raw)))
    return [(a, b) for a, b in spans if b > a]


def _norm(word: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", word).casefold())
    return _WORD_RE.findall(folded)


def find_span(raw: str, old: str) -> tuple[int, int] | None:
    """Where the old words stand in ``raw`` (outside comments), or None."""
    old = old.strip()
    if not old:
        return None
    segments = _outside_comments(raw)
    low = old.casefold()
    for a, b in segments:
        seg = raw[a:b].casefold()
        i = seg.find(low)
        if i >= 0 and len(seg) == b - a and len(low) == len(old):  # offsets kept
            return a + i, a + i + len(old)
    want = tokens(old)
    if not want:
        return None
    words: list[tuple[str, int, int]] = []
    for a, b in segments:
        for m in _WORD_RE.finditer(raw, a, b):
            words += [(t, m.start(), m.end()) for t in _norm(m.group())]
    n = len(want)
    for i in range(len(words) - n + 1):
        if tuple(w[0] for w in words[i : i + n]) == want:
            start, end = words[i][1], words[i + n - 1][2]
            lead = re.match(r"^\W*", old)
            tail = re.search(r"\W*$", old)
            head = lead.group() if lead else ""
            rest = tail.group() if tail else ""
            if head and raw[:start].endswith(head):
                start -= len(head)
            if rest and raw[end:].startswith(rest):
                end += len(rest)
            return start, end
    return None


def edit_line(raw: str, old: str, new: str, *, key: bytes | None) -> str | None:
    """``raw`` with the old words replaced by ``new`` (marker re-signed), or None when
    the old words are not in it."""
    span = find_span(raw, old)
    if span is None:
        return None
    edited = raw[: span[0]] + clean_new_text(new) + raw[span[1] :]
    return resign(raw, edited, key) if key is not None else edited


def planner(old: str, new: str, key: bytes | None) -> Callable[[str, str], str | None]:
    """The per-line edit a forget applies instead of removing the line: ``(relpath,
    raw) -> new raw`` (None removes it); ``key`` signs origin markers."""

    def edit(_rel: str, raw: str) -> str | None:
        return edit_line(raw, old, new, key=key)

    return edit


__all__ = ["clean_new_text", "edit_line", "find_span", "planner"]
