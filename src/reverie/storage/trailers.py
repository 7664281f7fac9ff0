"""Trailers: metadata as HTML comments at the end of curated lines (R-TRAIL-1..5).

``- Keep the gateway on loopback. <!-- trigger: gateway setup, network safety --> <!-- importance: 9 -->``

Pure code. Trailers are parsed only in curated root files (``MEMORY.md``, ``USER.md``);
the caller decides that from the path (see :mod:`reverie.provenance.paths`), never from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .projects import INVALID_PROJECT, normalise_project

TRAILER_RE = re.compile(
    r"\s*<!--\s*(trigger|importance|project|key|observed|status|always)\s*:(.*?)-->",
    re.IGNORECASE,
)
"""Every trailer a curated line may carry; ``key``, ``observed``, ``status`` and
``always`` are USER.md's directive fields (R-USER-1, :mod:`reverie.user.directives`):
stripped here like the others, so no trailer text enters FTS or the embedder."""
MAX_TRIGGER_CHARS = 64


@dataclass(frozen=True)
class Trailers:
    """The metadata parsed from one curated line's trailers (R-TRAIL-1..3)."""

    triggers: tuple[str, ...] = ()
    importance: int | None = None
    projects: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.triggers or self.importance is not None or self.projects)

    def merge(self, other: Trailers) -> Trailers:
        """Union of triggers and projects, the max importance (R-TRAIL-2)."""
        imp = [i for i in (self.importance, other.importance) if i is not None]
        return Trailers(
            triggers=_dedupe(self.triggers + other.triggers),
            importance=max(imp) if imp else None,
            projects=_dedupe(self.projects + other.projects),
        )


@dataclass(frozen=True)
class ParsedLine:
    """A curated line's text without trailers, the trailers, and any warnings."""

    text: str  # the line with trailers removed (right-stripped)
    trailers: Trailers
    warnings: tuple[str, ...] = field(default=())


def _dedupe(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def split_phrases(raw: str) -> tuple[str, ...]:
    """R-TRAIL-1: ``trigger:`` splits on ``,`` or ``;`` (and the full-width forms)."""
    phrases = (p.strip() for p in re.split(r"[,;，；、]", raw))
    return _dedupe(tuple(" ".join(p.split())[:MAX_TRIGGER_CHARS] for p in phrases if p))


def parse_line(line: str) -> ParsedLine:
    """Parse and strip the trailers of one curated line."""
    triggers: list[str] = []
    importances: list[int] = []
    projects: list[str] = []
    warnings: list[str] = []
    for m in TRAILER_RE.finditer(line):
        key, value = m.group(1).lower(), m.group(2).strip()
        if key == "trigger":
            triggers.extend(split_phrases(value))
        elif key in ("key", "observed", "status", "always"):
            continue  # a USER.md directive field: parsed by the user model
        elif key == "importance":
            if re.fullmatch(r"[0-9]{1,2}", value) and 1 <= int(value) <= 10:
                importances.append(int(value))
            else:
                warnings.append(f"importance must be an integer 1-10, got {value!r}")
        else:
            parts = [p for p in re.split(r"[,;\s]+", value) if p]
            if not parts:
                warnings.append("empty project tag")
                projects.append(INVALID_PROJECT)
            for part in parts:
                key_ = normalise_project(part)
                if key_ == INVALID_PROJECT:
                    warnings.append(f"malformed project tag {part!r}")
                projects.append(key_)
    text = strip(line)
    trailers = Trailers(
        triggers=_dedupe(tuple(triggers)),
        importance=max(importances) if importances else None,
        projects=_dedupe(tuple(projects)),
    )
    return ParsedLine(text=text, trailers=trailers, warnings=tuple(warnings))


def strip(line: str) -> str:
    """The line without trailer comments (what FTS and the embedder see); repeated until
    nothing changes, so a trailer nested inside another cannot survive the strip."""
    while True:
        stripped = TRAILER_RE.sub("", line)
        if stripped == line:
            return line.rstrip()
        line = stripped


def render(text: str, trailers: Trailers) -> str:
    """``text`` followed by its trailers in canonical order."""
    out = text.rstrip()
    if trailers.triggers:
        out += " <!-- trigger: " + ", ".join(trailers.triggers) + " -->"
    if trailers.importance is not None:
        out += f" <!-- importance: {trailers.importance} -->"
    if trailers.projects:
        out += " <!-- project: " + ", ".join(trailers.projects) + " -->"
    return out


__all__ = [
    "INVALID_PROJECT",
    "ParsedLine",
    "Trailers",
    "normalise_project",
    "parse_line",
    "render",
    "split_phrases",
    "strip",
]
