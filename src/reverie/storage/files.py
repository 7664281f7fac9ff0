"""File-system helpers at the edge: atomic writes and safe reads."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: temp file in the same folder, fsync,
    rename, fsync the folder. A crash leaves the old or the new file, never half."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """:func:`atomic_write` for bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def sweep_temp(folder: Path, *, min_age_seconds: float = 300.0) -> int:
    """Remove temp files that :func:`atomic_write` left behind when its process was
    killed (``.<name>.<random>.tmp``), once they are old enough not to be in use."""
    import time

    removed = 0
    cutoff = time.time() - min_age_seconds
    for tmp in folder.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.is_file() and tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                removed += 1
    return removed


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_if_absent(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless something exists there. True if created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return True


__all__ = ["atomic_write", "atomic_write_bytes", "fsync_dir", "sweep_temp", "write_if_absent"]
