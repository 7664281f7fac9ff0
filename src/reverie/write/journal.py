"""Daily append (R-WRITE-1): observations go to ``memory/YYYY-MM-DD.md``, one list item
per line, each with its origin recorded in a per-line marker at the start of the line
(see :mod:`reverie.provenance.markers`, which explains why a torn line can only lose
trust).

Appends from several processes never interleave or lose a line: a file lock in the
state dir serialises writers, each append goes to an ``O_APPEND`` file descriptor,
then fsync. An append lands whole or not at all (:func:`append_whole`): short writes
are continued, and any failure (a full disk, an I/O error at fsync) cuts the file back
to its size before and raises :class:`reverie.errors.WriteError` naming the file.
Editors stay free to edit the journal (no lock on the file).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import ReverieError, WriteError
from ..provenance.markers import render_marker, strip_markers
from ..provenance.origin import Origin, SessionKind
from ..provenance.redact import redact_secrets, strip_controls
from ..storage.files import NotRegularFile, check_regular
from ..storage.tombstones import Tombstones
from ..storage.workspace import Workspace

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
    project: str | None = None  # the project key signed into each line (R-SCOPE-1)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "source": f"{self.path}#L{self.first_line}-L{self.last_line}",
            "origin": self.origin.value,
            "lines": list(self.lines),
        }
        if self.project:
            out["project"] = self.project
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def journal_relpath(day: datetime) -> str:
    return f"memory/{day.date().isoformat()}.md"


def clean_lines(text: str) -> list[str]:
    """Each non-blank input line as one list-item text; control characters removed
    first, then markers are removed and HTML comment openers/closers defused (text can
    neither hide nor forge a marker), live secrets redacted, overlong lines cut."""
    out = []
    for raw in strip_controls(text).splitlines():
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
    project: str | None = None,
) -> Appended | None:
    """Append ``text`` to today's journal with ``origin`` (and the ``project`` key it
    was written in, signed into each line's marker). None when ``text`` is blank."""
    if not isinstance(text, str):
        raise ReverieError("nothing to write: the text is not a string")
    items = clean_lines(text)
    if not items:
        return None
    forgotten = Tombstones(ws.tombstones_path)  # what the owner forgot never comes back
    kept = [item for item in items if not forgotten.blocks(item)]
    if not kept:
        raise ReverieError("refused: the owner has forgotten this text (`reverie forget`)")
    withheld = len(items) - len(kept)
    items = kept
    rel = journal_relpath(now)
    # one symlink policy: a memory/ folder (or journal) linked inside the workspace is
    # followed, one linked out of it is refused, never silently written and not indexed
    path = ws.check_inside(rel)
    if path.exists():
        try:
            check_regular(path)  # a FIFO would block the read below forever
        except NotRegularFile as exc:
            raise WriteError(f"{rel}: {exc}; nothing written") from None
    key = ws.origin_key()
    stamp = now.strftime("%H:%M")
    rendered = [
        render_marker(f"- {stamp} {item}", origin, session, key=key, info=info, project=project)
        for item in items
    ]
    lock_path = ws.journal_lock(now.date())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock_path), timeout=60):
            first = _append_lines(path, rendered, header=f"# {now.date().isoformat()}\n\n")
    except Timeout:
        raise ReverieError(f"{rel}: another writer held the journal lock for 60 s") from None
    except OSError as exc:
        raise WriteError(f"{rel}: cannot append ({exc.strerror or exc}); nothing written") from None
    note = (f"{withheld} line(s) withheld: the owner has forgotten them",) if withheld else ()
    last = first + len(rendered) - 1
    return Appended(rel, first, last, origin, tuple(rendered), note, project=project)


def _append_lines(path: Path, lines: Sequence[str], *, header: str) -> int:
    """Append whole lines; returns the line number of the first."""
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
    append_whole(path, (prefix + "\n".join(lines) + "\n").encode("utf-8"), mode=0o644)
    return first


def append_whole(path: Path, data: bytes, *, mode: int, exclusive: bool = False) -> int:
    """Append ``data`` to ``path`` completely or not at all; returns the size before.

    Short writes are continued until every byte is written, then the file is fsynced.
    On any failure (ENOSPC, EIO, even an interrupt) the file is cut back to its size
    before, or removed when this call created it, and :class:`WriteError` (for an
    ``OSError``) names the file: a write either lands whole or leaves nothing.
    ``exclusive``: only create ``path`` (:class:`FileExistsError` when it exists)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        fd, created = os.open(path, flags | os.O_EXCL, mode), True
    except FileExistsError:
        if exclusive:
            raise
        fd, created = os.open(path, flags, mode), False
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                if n <= 0:
                    raise OSError(errno.EIO, "the write made no progress")
                view = view[n:]
            os.fsync(fd)
        except BaseException as exc:
            cleaned = _roll_back(fd, path, size, created)
            if not isinstance(exc, OSError):
                raise
            left = "nothing written" if cleaned else "a partial write could not be removed"
            raise WriteError(f"{path}: write failed ({exc.strerror or exc}); {left}") from None
        return size
    finally:
        os.close(fd)


def _roll_back(fd: int, path: Path, size: int, created: bool) -> bool:
    """Undo a partial append: truncate back to ``size`` (remove a file we created)."""
    try:
        if created:
            os.unlink(path)
        else:
            os.ftruncate(fd, size)
            with contextlib.suppress(OSError):
                os.fsync(fd)
        return True
    except OSError:
        return False


__all__ = ["Appended", "append", "append_whole", "clean_lines", "journal_relpath"]
