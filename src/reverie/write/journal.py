"""Daily append (R-WRITE-1): observations go to ``memory/YYYY-MM-DD.md``, one list item
per line, each with its origin recorded in a per-line marker (see
:mod:`reverie.lineorigin`).

Appends from several processes never interleave or lose a line: a file lock in the
state dir serialises writers, each append is one ``write`` on an ``O_APPEND`` file
descriptor, then fsync. Editors stay free to edit the journal (no lock on the file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from filelock import FileLock

from ..provenance.markers import render_marker, strip_markers
from ..provenance.origin import Origin, SessionKind
from ..storage.workspace import Workspace
from .redact import redact_secrets

MAX_LINE_CHARS = 2000


@dataclass(frozen=True)
class Appended:
    """Lines appended to a journal; ``warnings``: the write landed, something after it
    (the index sync) did not."""

    path: str  # workspace-relative
    first_line: int
    last_line: int
    origin: Origin
    lines: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "source": f"{self.path}#L{self.first_line}-L{self.last_line}",
            "origin": self.origin.value,
            "lines": list(self.lines),
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def journal_relpath(day: datetime) -> str:
    return f"memory/{day.date().isoformat()}.md"


def clean_lines(text: str) -> list[str]:
    """Each non-blank input line as one list-item text; markers are removed and HTML
    comment openers/closers defused (text can neither hide nor forge a marker), live
    secrets redacted, overlong lines cut."""
    out = []
    for raw in text.splitlines():
        line = strip_markers(raw).strip()
        line = re.sub(r"^[-*+]\s+", "", line)
        line = line.replace("<!--", "<!- -").replace("-->", "-- >")
        line = redact_secrets(line).text
        if line:
            out.append(line[:MAX_LINE_CHARS])
    return out


def append(
    ws: Workspace,
    text: str,
    *,
    origin: Origin,
    session: SessionKind | None,
    now: datetime,
    info: dict[str, str] | None = None,
) -> Appended | None:
    """Append ``text`` to today's journal with ``origin``. None when ``text`` is blank."""
    items = clean_lines(text)
    if not items:
        return None
    rel = journal_relpath(now)
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    key = ws.origin_key()
    stamp = now.strftime("%H:%M")
    rendered = [
        render_marker(f"- {stamp} {item}", origin, session, key=key, info=info) for item in items
    ]
    lock_dir = ws.locks_dir
    lock_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_dir / f"journal-{now.date().isoformat()}.lock"), timeout=60):
        first = _append_lines(path, rendered, header=f"# {now.date().isoformat()}\n\n")
    return Appended(rel, first, first + len(rendered) - 1, origin, tuple(rendered))


def _append_lines(path: Path, lines: Sequence[str], *, header: str) -> int:
    """Append whole lines in one write; returns the line number of the first."""
    existing = b""
    if path.exists():
        with path.open("rb") as fh:
            existing = fh.read()
    prefix = ""
    if not existing:
        prefix = header
    elif not existing.endswith(b"\n"):
        prefix = "\n"  # the person's last line had no newline: never glue onto it
    first = existing.count(b"\n") + 1 + prefix.count("\n")
    data = (prefix + "\n".join(lines) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return first


__all__ = ["Appended", "append", "clean_lines", "journal_relpath"]
