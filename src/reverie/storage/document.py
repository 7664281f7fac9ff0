"""A Markdown file as classified lines, then chunks (pipeline steps 2-5). Pure code."""

from __future__ import annotations

from dataclasses import dataclass

from ..provenance.markers import resolve
from ..provenance.origin import cap
from ..provenance.paths import PathClass
from .chunking import Chunk, Line, chunk_lines
from .trailers import Trailers, parse_line


@dataclass(frozen=True)
class FileWarning:
    """A problem with one file (or one line of it) that does not stop the rest."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def parse_lines(
    relpath: str, text: str, pclass: PathClass, *, key: bytes | None
) -> tuple[list[Line], list[FileWarning]]:
    """Lines with their origin (per line where the path allows markers) and, in
    curated root files only, their trailers (R-TRAIL-4)."""
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
            lines.append(Line(number, parsed.text, pclass.default_origin, None, parsed.trailers))
        elif pclass.markers:
            lo = resolve(raw, default=pclass.default_origin, ceiling=pclass.ceiling, key=key)
            lines.append(Line(number, lo.text, lo.origin, lo.session, Trailers()))
        else:
            origin = cap(pclass.default_origin, pclass.ceiling)
            lines.append(Line(number, raw.rstrip(), origin))
    return lines, warnings


def chunk_document(
    relpath: str,
    text: str,
    pclass: PathClass,
    *,
    key: bytes | None,
    budget: int,
    overlap: int,
    by_entry: bool | None = None,
) -> tuple[list[Chunk], list[FileWarning]]:
    """Lines, then chunks: by entry for curated files (and wherever ``by_entry``
    says), else by token budget."""
    lines, warnings = parse_lines(relpath, text, pclass, key=key)
    entry = pclass.curated if by_entry is None else (by_entry or pclass.curated)
    chunks = chunk_lines(lines, by_entry=entry, budget=budget, overlap=overlap)
    return [c for c in chunks if c.text.strip()], warnings


__all__ = ["FileWarning", "chunk_document", "parse_lines"]
