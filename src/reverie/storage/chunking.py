"""Chunking (pipeline step 4). Pure code.

- Curated files chunk *by entry*: every heading and every list item is its own chunk
  (continuation lines belong to their item); an entry never spans chunks; the pieces of
  an oversized entry all inherit its trailers.
- Other files chunk *by token budget* with overlap, line-aligned; a chunk boundary also
  falls wherever the origin (or session kind) changes, so one untrusted line never
  taints the owner's lines beside it. A line longer than the budget is cut into pieces
  that keep its line number.
Line numbers are 1-based and exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..provenance.origin import Origin, SessionKind, lowest
from ..tokens import count_tokens
from .trailers import Trailers

CHUNKING_VERSION = "2"
NO_TRAILERS = Trailers()
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a file with its origin, session kind and (curated files) trailers."""

    number: int
    text: str  # without trailers and origin markers
    origin: Origin = Origin.UNTRUSTED
    session: SessionKind | None = None
    trailers: Trailers = NO_TRAILERS
    replaces: str | None = None  # the earlier line it replaces (a verified version link)


@dataclass(frozen=True, slots=True)
class Chunk:
    """The unit of retrieval: lines of one file, text without trailers, lowest origin."""

    start_line: int
    end_line: int
    text: str
    origin: Origin
    session: SessionKind | None
    trailers: Trailers = NO_TRAILERS
    part: int = 0  # piece number when one line or entry was cut
    links: tuple[tuple[int, str], ...] = ()  # (line, the earlier line it replaces)


def _session_of(lines: Sequence[Line]) -> SessionKind | None:
    kinds = {ln.session for ln in lines if ln.session is not None}
    non_interactive = sorted(k.value for k in kinds if k is not SessionKind.INTERACTIVE)
    if non_interactive:
        return SessionKind(non_interactive[0])
    return SessionKind.INTERACTIVE if kinds else None


def _make(lines: Sequence[Line], trailers: Trailers | None = None) -> Chunk:
    merged = trailers
    if merged is None:
        merged = Trailers()
        for ln in lines:
            merged = merged.merge(ln.trailers)
    return Chunk(
        start_line=lines[0].number,
        end_line=lines[-1].number,
        text="\n".join(ln.text for ln in lines).strip("\n"),
        origin=lowest(*(ln.origin for ln in lines)),
        session=_session_of(lines),
        trailers=merged,
        links=tuple((ln.number, ln.replaces) for ln in lines if ln.replaces),
    )


def _cut_text(text: str, budget: int) -> Iterator[str]:
    """Cut one long line into pieces of at most ``budget`` tokens (bounded work)."""
    piece: list[str] = []
    tokens = 0
    for word in re.split(r"(\s+)", text):
        for part in _cut_word(word, budget):
            t = count_tokens(part)
            if tokens + t > budget and piece:
                yield "".join(piece).strip()
                piece, tokens = [], 0
            piece.append(part)
            tokens += t
    if "".join(piece).strip():
        yield "".join(piece).strip()


def _cut_word(word: str, budget: int) -> Iterator[str]:
    if count_tokens(word) <= budget:
        yield word
        return
    step = budget  # one token per char is the worst case (CJK)
    for i in range(0, len(word), step):
        yield word[i : i + step]


def _pieces(chunk: Chunk, budget: int) -> list[Chunk]:
    """An oversized chunk as pieces that each fit; every piece keeps the trailers."""
    out: list[Chunk] = []
    for i, text in enumerate(_cut_text(chunk.text, budget)):
        out.append(
            Chunk(
                chunk.start_line,
                chunk.end_line,
                text,
                chunk.origin,
                chunk.session,
                chunk.trailers,
                i,
                chunk.links if i == 0 else (),
            )
        )
    return out


def entries(lines: Iterable[Line]) -> Iterator[list[Line]]:
    """Group curated lines into entries: headings, list items, paragraphs."""
    current: list[Line] = []
    in_fence = False
    for ln in lines:
        if _FENCE_RE.match(ln.text):
            in_fence = not in_fence
            if not current:
                current = [ln]
            else:
                current.append(ln)
            continue
        if in_fence:
            current.append(ln)
            continue
        if not ln.text.strip():
            if current:
                yield current
            current = []
        elif _HEADING_RE.match(ln.text) or _ITEM_RE.match(ln.text) or not current:
            if current:
                yield current
            current = [ln]
        else:
            current.append(ln)
    if current:
        yield current


def chunk_entries(lines: Iterable[Line], budget: int) -> list[Chunk]:
    out: list[Chunk] = []
    for entry in entries(lines):
        chunk = _make(entry)
        if count_tokens(chunk.text) <= budget:
            out.append(chunk)
        else:
            out.extend(_pieces(chunk, budget))
    return out


def _segments(lines: Iterable[Line]) -> Iterator[list[Line]]:
    """Runs of lines with one origin and session kind (blank lines join either side)."""
    current: list[Line] = []
    key: tuple[Origin, SessionKind | None] | None = None
    for ln in lines:
        if not ln.text.strip():
            if current:
                current.append(ln)
            continue
        k = (ln.origin, ln.session)
        if key is not None and k != key:
            yield _trim(current)
            current = []
        key = k
        current.append(ln)
    if current:
        yield _trim(current)


def _trim(lines: list[Line]) -> list[Line]:
    while lines and not lines[-1].text.strip():
        lines.pop()
    return lines


def chunk_budget(lines: Iterable[Line], budget: int, overlap: int) -> list[Chunk]:
    """Token-budget chunks with line-aligned overlap, split at origin changes."""
    out: list[Chunk] = []
    for seg in _segments(lines):
        costs = [count_tokens(ln.text) for ln in seg]
        i = 0
        n = len(seg)
        while i < n:
            if not seg[i].text.strip():  # a chunk never starts on a blank line
                i += 1
                continue
            if costs[i] > budget:  # one long line: pieces with the same line number
                out.extend(_pieces(_make([seg[i]]), budget))
                i += 1
                continue
            j, used = i, 0
            while j < n and costs[j] <= budget and used + costs[j] <= budget:
                used += costs[j]
                j += 1
            out.append(_make(_trim(seg[i:j])))
            if j >= n:
                break
            # overlap: step back over trailing lines worth at most `overlap` tokens, but
            # only as far as still leaves room for line j, so every chunk moves forward
            # (no chunk ever sits inside its predecessor)
            k, back = j, 0
            while (
                k - 1 > i
                and back + costs[k - 1] <= overlap
                and back + costs[k - 1] + costs[j] <= budget
            ):
                back += costs[k - 1]
                k -= 1
            i = k
    return out


def chunk_lines(lines: Sequence[Line], *, by_entry: bool, budget: int, overlap: int) -> list[Chunk]:
    """By entry (curated files always; journals and transcripts by default: one
    observation, one chunk), else by token budget."""
    if by_entry:
        return chunk_entries(lines, budget)
    return chunk_budget(lines, budget, overlap)


__all__ = [
    "CHUNKING_VERSION",
    "Chunk",
    "Line",
    "chunk_budget",
    "chunk_entries",
    "chunk_lines",
    "entries",
]
