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
from .content import split_speaker
from .junk import GENERATED_BEGIN, GENERATED_END, MAX_TOKENS, strip_generated_markers

ANCHOR_RE = re.compile(r"Source:\s*(\S+?#L\d+-L\d+)")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
GENERATED_HEADING = "## Promoted by dreaming"
SUBJECT_HEADING = "### "  # a subject's heading inside the generated section
GENERAL_SUBJECT = "Notes"  # the heading of entries that name no speaker
# who said a line that names no speaker, by its computed origin: "I" then has a referent
OWNER_SUBJECT, AGENT_SUBJECT = "Owner", "Agent"
# the day an entry was said, written after its text: "... (2023-05-08) Source: ..."
DAY_RE = re.compile(r"\s\((\d{4}-\d{2}-\d{2})\)(?=\s+Source:|\s*$)")
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


def dated(text: str, day: str | None) -> str:
    """``text`` with the day it was said written after it (once)."""
    if not day or text.rstrip().endswith(f"({day})"):
        return text
    return f"{text.rstrip()} ({day})"


def undated(text: str) -> str:
    """``text`` without the day written after it (what its words are compared by)."""
    return DAY_RE.sub("", text)


def subject(raw: str) -> str:
    """The subject heading of a generated entry line: its speaker, else the general one."""
    speaker, _ = split_speaker(re.sub(r"^\s*[-*+]\s+", "", strip(raw)))
    return speaker or GENERAL_SUBJECT


def grouped(raws: list[str]) -> list[str]:
    """Generated entry lines under their subjects' headings (subjects in the order they
    first appear, entries in their own order), a blank line between two subjects."""
    groups: dict[str, list[str]] = {}
    for raw in raws:
        groups.setdefault(subject(raw), []).append(raw)
    out: list[str] = []
    for name, members in groups.items():
        out += [*([""] if out else []), f"{SUBJECT_HEADING}{name}", *members]
    return out


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


def replace_generated(memory: str, raws: list[str]) -> str:
    """MEMORY.md with its generated section holding exactly ``raws``, under their
    subjects' headings (created at the end if absent). Everything outside the section,
    the person's text, is left byte for byte."""
    body = "\n".join([GENERATED_HEADING, "", *grouped(raws)] if raws else [GENERATED_HEADING])
    if GENERATED_BEGIN in memory and GENERATED_END in memory:
        before, rest = memory.split(GENERATED_BEGIN, 1)
        _, after = rest.rsplit(GENERATED_END, 1)
        # a blank line before the end marker: the marker never joins the last entry's chunk
        return f"{before}{GENERATED_BEGIN}\n{body}\n\n{GENERATED_END}{after}"
    if not raws:
        return memory
    base = memory if memory.endswith("\n") or not memory else memory + "\n"
    sep = "" if base.endswith("\n\n") or not base else "\n"
    return f"{base}{sep}{GENERATED_BEGIN}\n{body}\n\n{GENERATED_END}\n"


def append_generated(memory: str, new: list[str]) -> str:
    """Append promoted entries to the generated section (see :func:`replace_generated`)."""
    if not new:
        return memory
    present = [ln.raw for ln in lines(memory) if ln.kind == "entry" and ln.generated]
    return replace_generated(memory, present + new)


__all__ = [
    "ANCHOR_RE",
    "Entry",
    "Line",
    "anchors",
    "append_generated",
    "clean_snippet",
    "dated",
    "entries",
    "grouped",
    "lines",
    "normalise",
    "parses",
    "render_entry",
    "replace_generated",
    "subject",
    "undated",
]
