"""Cross-process locks in the state dir (never on the workspace's files: editors stay
free). ``filelock`` locks die with their process, so a killed holder never leaves one
stuck."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import ReverieError


@contextmanager
def held(path: Path, *, wait: float | None, busy: str) -> Iterator[None]:
    """Hold the lock at ``path`` (waiting ``wait`` seconds at most, None: as long as it
    takes); past the wait, :class:`ReverieError` with the ``busy`` message."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=-1 if wait is None else wait)
    try:
        lock.acquire()
    except Timeout:
        raise ReverieError(busy) from None
    try:
        yield
    finally:
        lock.release()


__all__ = ["held"]
