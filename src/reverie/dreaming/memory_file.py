"""MEMORY.md structure for dreaming (pure): entries, source anchors, generated
sections, promoted-entry rendering and append-only insertion."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..storage.trailers import (
    INVALID_PROJECT,
    Trailers,
    normalise_project,
    parse_line,
    render,
    strip,
)
from ..tokens import count_tokens
from .junk import GENERATED_BEGIN, GENERATED_END, MAX_TOKENS, strip_generated_markers

ANCHOR_RE = re.compile(r"Source:\s*(\S+?#L\d+-L\d+)")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
GENERATED_HEADING = "## Promoted by dreaming"
MAX_SNIPPET_TOKENS = MAX_TOKENS  # one limit: SPEC section 8, a promoted snippet


@dataclass(frozen=True)
class Entry:
    """One entry (list item or heading) of MEMORY.md, with its normalised text."""

    line: int  # 1-based
    text: str  # the line without trailers, stripped
    generated: bool  # inside dreaming's generated section
    trailers: Trailers = field(default_factory=Trailers)  # the line's trailers, parsed

    @property
    def norm(self) -> str:
        return normalise(self.text)

    @property
    def anchors(self) -> tuple[str, ...]:
        return tuple(ANCHOR_RE.findall(self.text))


@dataclass(frozen=True)
class Line:
    """One line of MEMORY.md and what it is: blank, heading, marker, entry or other
    (a continuation or comment line), and whether it lies in the generated section."""

    number: int  # 1-based
    raw: str
    kind: str  # blank | heading | marker | entry | other
    generated: bool


def lines(text: str) -> list[Line]:
    """Every line of MEMORY.md, classified. Lines are split on "\n" only, as the
    indexer does: U+2028 and friends are text, not line breaks."""
    out: list[Line] = []
    generated = False
    for number, raw in enumerate(text.split("\n"), start=1):
        s = raw.strip()
        if s in (GENERATED_BEGIN, GENERATED_END):
            generated = s == GENERATED_BEGIN
            out.append(Line(number, raw, "marker", False))
            continue
        if not s:
            kind = "blank"
        elif _HEADING_RE.match(raw):
            kind = "heading"
        elif s.startswith("<!--"):
            kind = "other"
        elif _ITEM_RE.match(raw) or not raw.startswith((" ", "\t")):
            kind = "entry"
        else:
            kind = "other"
        out.append(Line(number, raw, kind, generated))
    return out


def normalise(text: str) -> str:
    text = re.sub(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+", "", strip(text))
    return " ".join(text.split()).lower()


def entries(text: str) -> list[Entry]:
    """List items (and paragraph lines) of MEMORY.md, headings and markers excluded."""
    return [
        Entry(ln.number, strip(ln.raw).strip(), ln.generated, parse_line(ln.raw).trailers)
        for ln in lines(text)
        if ln.kind == "entry"
    ]


def anchors(text: str) -> set[str]:
    return set(ANCHOR_RE.findall(text))


def parses(text: str) -> bool:
    """The expected structure: balanced generated markers, no stray fences, and every
    non-blank line a heading, list item, continuation, paragraph or marker."""
    begins = text.count(GENERATED_BEGIN)
    ends = text.count(GENERATED_END)
    if begins != ends or begins > 1:
        return False
    if begins and text.index(GENERATED_BEGIN) > text.index(GENERATED_END):
        return False
    return text.count("```") % 2 == 0


def clean_snippet(snippet: str) -> str:
    """A journal line as a memory entry: no list marker, no HH:MM stamp, one line,
    at most 160 tokens, never a generated-section marker."""
    text = strip_generated_markers(snippet)
    text = re.sub(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+", "", text.strip())
    text = re.sub(r"^\d{1,2}:\d{2}\s+", "", text)
    text = " ".join(text.split())
    while count_tokens(text) > MAX_SNIPPET_TOKENS and " " in text:
        text = text.rsplit(" ", 1)[0]
    return text


def render_entry(
    text: str,
    anchor: str,
    importance: int,
    tags: tuple[str, ...],
    projects: tuple[str, ...] = (),
) -> str:
    """``- <text> Source: <path>#L<a>-L<b> <trailers>`` (SPEC section 8); ``projects``:
    the keys of the project the line was written in (R-SCOPE-1), as a project trailer."""
    safe_tags = tuple(
        t.replace(",", " ").replace(";", " ").replace("-->", "")[:64] for t in tags[:3]
    )
    # a key with a character a trailer cannot hold would read back as another project:
    # whatever does not survive the round trip becomes the sentinel, scoped nowhere
    scoped = tuple(p if normalise_project(p) == p else INVALID_PROJECT for p in projects)
    trailers = Trailers(triggers=safe_tags, importance=importance, projects=scoped)
    return render(f"- {text} Source: {anchor}", trailers)


def append_generated(memory: str, lines: list[str]) -> str:
    """Append promoted entries inside the generated section (created at the end if
    absent). Everything outside it, the person's text, is left byte for byte."""
    if not lines:
        return memory
    block = "\n".join(lines)
    if GENERATED_BEGIN in memory and GENERATED_END in memory:
        head, tail = memory.rsplit(GENERATED_END, 1)
        head = head.rstrip("\n") + "\n"
        return f"{head}{block}\n\n{GENERATED_END}{tail}"
    base = memory if memory.endswith("\n") or not memory else memory + "\n"
    sep = "" if base.endswith("\n\n") or not base else "\n"
    # a blank line before the end marker: the marker never joins the last entry's chunk
    return f"{base}{sep}{GENERATED_BEGIN}\n{GENERATED_HEADING}\n\n{block}\n\n{GENERATED_END}\n"


__all__ = [
    "ANCHOR_RE",
    "Entry",
    "Line",
    "anchors",
    "append_generated",
    "clean_snippet",
    "entries",
    "lines",
    "normalise",
    "parses",
    "render_entry",
]
