"""A Markdown file as classified lines, then chunks (pipeline steps 2-5). Pure code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..provenance.frames import strip_generated_markers
from ..provenance.markers import LineOrigin, resolve
from ..provenance.origin import Origin, cap, lowest
from ..provenance.paths import PathClass, SourceKind
from .chunking import Chunk, Line, chunk_lines
from .file_warning import FileWarning
from .trailers import INVALID_PROJECT, Trailers, normalise_project, parse_line

# C0 controls but tab and CR, and DEL: never text a person wrote (a NUL run is a torn write)
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
REPLACEMENT = "\ufffd"
USER_FILE = "USER.md"
MAX_LINE_WARNINGS = 5


@dataclass(frozen=True)
class Decoded:
    """A file's bytes as text, line by line: one bad line never hides the rest.

    ``damaged``: numbers of the lines whose bytes were not clean text (invalid UTF-8,
    control characters, replacement characters); such a line never reads above its
    path's default origin. ``binary``: NUL bytes and not one clean line of text."""

    text: str
    damaged: frozenset[int]
    warnings: tuple[FileWarning, ...]
    binary: bool


def decode(relpath: str, data: bytes) -> Decoded:
    """Decode per line (line numbers count ``\\n`` only, as :func:`parse_lines` does):
    invalid UTF-8 is replaced, control characters are dropped, each with a warning
    naming ``relpath:line``."""
    out: list[str] = []
    damaged: set[int] = set()
    warnings: list[FileWarning] = []
    clean_text = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        problems: list[str] = []
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.decode("utf-8", errors="replace")
            problems.append(f"invalid UTF-8 at byte {exc.start + 1} of the line (replaced)")
        if _CONTROL_RE.search(line):
            line = _CONTROL_RE.sub("", line)
            problems.append("control characters (NUL...) removed")
        if problems or REPLACEMENT in line:
            damaged.add(number)
        elif line.strip():
            clean_text = True
        if problems:
            warnings.append(FileWarning(relpath, number, "; ".join(problems)))
        out.append(line)
    if len(warnings) > MAX_LINE_WARNINGS:
        more = len(warnings) - MAX_LINE_WARNINGS
        warnings = warnings[:MAX_LINE_WARNINGS]
        warnings.append(FileWarning(relpath, None, f"{more} more damaged line(s)"))
    binary = b"\0" in data and not clean_text
    return Decoded("\n".join(out), frozenset(damaged), tuple(warnings), binary)


def parse_lines(
    relpath: str,
    text: str,
    pclass: PathClass,
    *,
    key: bytes | None,
    damaged: frozenset[int] = frozenset(),
) -> tuple[list[Line], list[FileWarning]]:
    """Lines with their origin (per line where the path allows markers) and, in
    curated root files only, their trailers (R-TRAIL-4). A ``damaged`` line never
    reads above the path's default origin: a torn write can only lose trust."""
    lines: list[Line] = []
    warnings: list[FileWarning] = []
    # line numbers count "\n" only (str.splitlines also breaks at \x0c, \x85, \u2028...)
    lines_raw = text.split("\n")
    if lines_raw and lines_raw[-1] == "":
        lines_raw.pop()
    for number, raw in enumerate((r.removesuffix("\r") for r in lines_raw), start=1):
        if pclass.curated:
            parsed = parse_line(raw)
            warnings.extend(FileWarning(relpath, number, w) for w in parsed.warnings)
            text = strip_generated_markers(parsed.text)  # structure, never text to find
            trailers = parsed.trailers
            if relpath == USER_FILE and trailers.projects:  # R-SCOPE-1: user-level
                warnings.append(FileWarning(relpath, number, "USER.md is never project-scoped"))
                trailers = Trailers(trailers.triggers, trailers.importance)
            lines.append(Line(number, text, pclass.default_origin, None, trailers))
        elif pclass.markers:
            lo = resolve(raw, default=pclass.default_origin, ceiling=pclass.ceiling, key=key)
            origin = lo.origin
            if number in damaged:
                origin = lowest(origin, cap(pclass.default_origin, pclass.ceiling))
            link = lo.replaces if origin in (Origin.OWNER, Origin.AGENT) else None
            lines.append(Line(number, lo.text, origin, lo.session, _marker_project(lo), link))
        else:
            origin = cap(pclass.default_origin, pclass.ceiling)
            lines.append(Line(number, raw.rstrip(), origin))
    return lines, warnings


def _marker_project(lo: LineOrigin) -> Trailers:
    """The project a journal line's signed marker names (R-SCOPE-1); an unverified
    claim is the invalid-project sentinel: it scopes the line to no project at all."""
    if lo.project_unverified:
        return Trailers(projects=(INVALID_PROJECT,))
    if lo.project is not None:
        return Trailers(projects=(normalise_project(lo.project),))
    return NO_PROJECT


NO_PROJECT = Trailers()


def by_entry(kind: SourceKind, journal_chunking: str) -> bool:
    """Curated files chunk by entry; journals and transcripts too unless the
    ``journal_chunking`` setting says ``budget``; everything else by token budget."""
    episodic = kind in (SourceKind.JOURNAL, SourceKind.TRANSCRIPT)
    return kind is SourceKind.CURATED or (episodic and journal_chunking == "entry")


def chunk_document(
    relpath: str,
    text: str,
    pclass: PathClass,
    *,
    key: bytes | None,
    budget: int,
    overlap: int,
    by_entry: bool | None = None,
    damaged: frozenset[int] = frozenset(),
) -> tuple[list[Chunk], list[FileWarning]]:
    """Lines, then chunks: by entry for curated files (and wherever ``by_entry``
    says), else by token budget. ``damaged``: line numbers whose bytes were repaired
    (they never read above the path's default origin)."""
    lines, warnings = parse_lines(relpath, text, pclass, key=key, damaged=damaged)
    entry = pclass.curated if by_entry is None else (by_entry or pclass.curated)
    chunks = chunk_lines(lines, by_entry=entry, budget=budget, overlap=overlap)
    return [c for c in chunks if c.text.strip()], warnings


__all__ = ["Decoded", "FileWarning", "by_entry", "chunk_document", "decode", "parse_lines"]
