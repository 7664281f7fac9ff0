"""A memory-mapped matrix that moves into the process's own memory after its first use.

A warm process (the daemon, an MCP server) starts on the snapshot's mapped matrix, so
that start-up does not grow with the memory (issue 41, point 2). A product over a file
mapping is slower than over the process's own memory (100,000 x 512: 17.9 ms against
13.9 ms on one BLAS thread; the process's memory gets transparent huge pages, a file
mapping does not), so after the first search a thread copies the matrix block by
block into memory of its own, and lets go of each mapped block once its copy holds it:
the resident set never holds both copies of more than one block (peak RSS, point 2).
A product during the move reads the copied rows from memory and the rest from the
mapping, and gives the same numbers either way.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np

BLOCK_BYTES = 8 << 20  # copied, then let go of, this much at a time


class Resident:
    """``mapped`` (a read-only ``numpy.memmap``) on its way into memory."""

    def __init__(self, mapped: np.ndarray) -> None:
        self.mapped = mapped
        self.memory: np.ndarray | None = None
        self.done = 0  # rows copied: memory[:done] holds them
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def finished(self) -> bool:
        return self.memory is not None and self.done == len(self.mapped)

    def product(self, q: np.ndarray) -> np.ndarray:
        """``matrix @ q``, the copied rows read from memory and the rest mapped."""
        done, memory = self.done, self.memory
        if memory is None or done == 0:
            return np.asarray(self.mapped @ q)
        if done == len(self.mapped):
            return np.asarray(memory @ q)
        return np.concatenate([memory[:done] @ q, self.mapped[done:] @ q])

    def start(self) -> None:
        """Move the matrix in a thread of its own (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.move, name="reverie-resident", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop moving (the matrix was replaced)."""
        self._stop.set()

    def move(self, blocks: int | None = None) -> None:
        """Copy ``blocks`` blocks (all: None), letting go of each mapped block."""
        rows = len(self.mapped)
        if self.memory is None:
            self.memory = np.empty(self.mapped.shape, dtype=self.mapped.dtype)
        step = max(1, BLOCK_BYTES // max(1, self.mapped.strides[0]))
        while self.done < rows and not self._stop.is_set() and blocks != 0:
            end = min(rows, self.done + step)
            self.memory[self.done : end] = self.mapped[self.done : end]
            start, self.done = self.done, end
            _let_go(self.mapped, start, end)
            blocks = None if blocks is None else blocks - 1


def _let_go(mapped: Any, start: int, end: int) -> None:
    """Drop rows ``start:end`` of a mapping from the resident set (whole pages only; the
    file's pages stay in the page cache). Nothing when it is no mapping."""
    raw = getattr(mapped, "_mmap", None)
    if raw is None or not hasattr(raw, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    first = int(getattr(mapped, "offset", 0)) % mmap.ALLOCATIONGRANULARITY
    a = first + start * mapped.strides[0]
    b = first + end * mapped.strides[0]
    a = -(-a // mmap.PAGESIZE) * mmap.PAGESIZE
    b = b // mmap.PAGESIZE * mmap.PAGESIZE
    if b > a:  # (a platform that refuses: the pages stay mapped)
        with contextlib.suppress(OSError, ValueError):
            raw.madvise(mmap.MADV_DONTNEED, a, b - a)


__all__ = ["BLOCK_BYTES", "Resident"]
