"""``reverie import openclaw DIR``: an OpenClaw workspace taken as it is (issue 42).

OpenClaw keeps an agent's memory as Markdown, as Reverie does (``AGENTS.md``, ``SOUL.md``,
``USER.md``, ``MEMORY.md``, daily notes in ``memory/YYYY-MM-DD.md``, ...). Every file of
the workspace but its hidden folders (``.git``) is copied with its layout, byte for byte,
into one folder of this workspace, whose path decides the trust of every line without
a Reverie marker (:func:`reverie.provenance.paths.classify`):

- by default ``memory/imports/openclaw/``: untrusted, as every import (found by search,
  framed; never promoted or injected);
- with ``--as-owner``: ``openclaw/`` at the workspace's root, made a trusted folder
  (``reverie trust``): the owner's notes.

A line carrying a valid Reverie marker keeps its origin, within the folder's ceiling.
A line the owner has forgotten is not brought back (it is left blank, so the line
numbers stay). Importing again copies only what is not there yet: a file already
imported with the same bytes is counted, one whose copy differs (edited here, or changed
in OpenClaw since) is left as it is here and named in a warning; nothing is overwritten.
Every file is read under the one reader policy (:mod:`reverie.storage.reader`): no FIFO
or device, no link out of the workspace folder, at most 512 MB; a refused file is named
in a warning. The index is brought up to date after the copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ..engine import Reverie
from ..errors import ReverieError
from ..storage import reader
from ..storage.files import atomic_write_bytes
from ..storage.tombstones import Tombstones
from .import_files import MAX_INPUT_BYTES
from .importer import ImportReport

UNTRUSTED_FOLDER = "memory/imports/openclaw"
OWNER_FOLDER = "openclaw"


def _files(root: Path) -> Iterator[Path]:
    """Every entry under ``root`` but folders and hidden folders, in a stable order
    (what may be read is the reader policy's to say: :func:`_read`)."""
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        yield from (Path(folder) / name for name in sorted(names))


def _read(path: Path, root: Path, warnings: list[str]) -> bytes | None:
    """``path``'s bytes under the reader policy (no FIFO or device, no link out of
    ``root``, at most :data:`MAX_INPUT_BYTES`); None, and a warning, when refused."""
    try:
        return reader.read(path, root, limit=MAX_INPUT_BYTES).data
    except reader.Refused as exc:
        warnings.append(f"{exc}; not imported")
        return None


def _content(raw: bytes, name: str, blocked: Callable[[str], bool]) -> tuple[bytes, int, int]:
    """The bytes to write (a Markdown file's forgotten lines blanked), its lines, and
    how many were blanked."""
    if not name.endswith(".md"):
        return raw, 0, 0
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw, 0, 0  # copied as it is; the index says which file it cannot read
    lines = text.split("\n")
    kept = ["" if line.strip() and blocked(line) else line for line in lines]
    gone = sum(1 for a, b in zip(lines, kept, strict=True) if a != b)
    return "\n".join(kept).encode("utf-8"), sum(1 for ln in lines if ln.strip()), gone


def import_openclaw(
    engine: Reverie,
    root: Path,
    *,
    as_owner: bool = False,
    dry_run: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> ImportReport:
    """Copy the OpenClaw workspace ``root`` in (module doc)."""
    ws = engine.workspace
    ws.require()
    if not root.is_dir():
        raise ReverieError(
            f"{root}: not a folder (an OpenClaw workspace, such as ~/.openclaw/workspace)"
        )
    folder = OWNER_FOLDER if as_owner else UNTRUSTED_FOLDER
    report = ImportReport("openclaw", str(root), dry_run, as_owner)
    files = list(_files(root))
    if not any(p.suffix == ".md" for p in files):
        raise ReverieError(f"{root}: no Markdown file: not an OpenClaw workspace")
    blocked = Tombstones(ws.tombstones_path).blocks  # what the owner forgot stays gone
    origin = "owner" if as_owner else "untrusted"
    for done, path in enumerate(files, start=1):
        rel = path.relative_to(root).as_posix()
        if progress is not None:
            progress(done, len(files), rel)
        raw = _read(path, root, report.warnings)
        if raw is None:
            continue
        data, lines, gone = _content(raw, path.name, blocked)
        target = ws.root / folder / rel
        report.conversations += 1
        report.items += lines
        if target.exists() or target.is_symlink():
            if _read(target, ws.root, report.warnings) == data:
                report.already += 1
            else:
                report.warnings.append(
                    f"{folder}/{rel}: differs from {path}; kept as it is here (nothing overwritten)"
                )
            continue
        report.new += 1
        report.count(origin, lines)
        if gone:
            report.warnings.append(f"{rel}: {gone} forgotten line(s) left blank")
        report.files.append(f"{folder}/{rel}")
        if not dry_run:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
            report.lines_written += lines
    if not dry_run and report.new:
        if as_owner:
            engine.curation.trust(OWNER_FOLDER)
        engine.index()
    return report


__all__ = ["OWNER_FOLDER", "UNTRUSTED_FOLDER", "import_openclaw"]
