"""File-system helpers at the edge: atomic writes and safe reads."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "directory"),
)


class NotRegularFile(OSError):
    """A FIFO, socket, device or directory where a file was expected: never opened
    for reading, since reading one can block forever."""


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is ("FIFO", "socket", ...)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "special file")


def check_regular(path: Path, st: os.stat_result | None = None) -> os.stat_result:
    """``path``'s stat (links followed); :class:`NotRegularFile` unless a regular file."""
    st = os.stat(path) if st is None else st
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise NotRegularFile(f"not a regular file ({kind})")
    return st


def open_regular(path: Path) -> BinaryIO:
    """Open a regular file for reading without ever blocking: checked before opening,
    opened non-blocking (a FIFO swapped in meanwhile cannot hang the open), and
    checked again on the open descriptor."""
    check_regular(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        check_regular(path, os.fstat(fd))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file (see :func:`open_regular`)."""
    with open_regular(path) as fh:
        return fh.read()


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: temp file in the same folder, fsync,
    rename, fsync the folder. A crash leaves the old or the new file, never half."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """:func:`atomic_write` for bytes."""
    import tempfile  # (its import, with shutil's and random's, is not on the prompt path)

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


def sweep_temp(
    folder: Path,
    *,
    min_age_seconds: float = 300.0,
    keep: Callable[[Path], bool] | None = None,
) -> int:
    """Remove temp files that :func:`atomic_write` left behind when its process was
    killed (``.<name>.<random>.tmp``), once they are old enough not to be in use.
    ``keep(tmp)`` sees each first: True means it holds the only copy of something (it
    was kept elsewhere, say as a pre-image) and is not deleted."""
    import time

    removed = 0
    cutoff = time.time() - min_age_seconds
    for tmp in folder.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if not tmp.is_file() or tmp.stat().st_mtime >= cutoff:
                continue
            if keep is not None and keep(tmp):
                continue
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


__all__ = [
    "NotRegularFile",
    "atomic_write",
    "atomic_write_bytes",
    "check_regular",
    "file_kind",
    "fsync_dir",
    "open_regular",
    "read_regular",
    "sweep_temp",
    "write_if_absent",
]
