"""One reader policy for every door (issue 22): what Reverie opens, and how.

Every file a person (or a page, or an import) can put in Reverie's way is read here:
the index sync, ``reverie import``, the review page, ``get``, the bootstrap and the
hooks. The policy:

- **No FIFOs, sockets or devices**: checked with ``lstat``/``stat`` before the open,
  opened ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot hang the open) and checked
  again with ``fstat`` on the descriptor (:func:`reverie.storage.files.open_regular`).
- **No symlinks out of the root** (the workspace, or the folder being imported): the
  real path must stay inside ``root``; a link inside is followed.
- **Bounded reads**: at most ``limit`` bytes; a larger file is refused (or, with
  ``truncate``, cut), and the caller says what was skipped.

And text that cannot round-trip: :func:`undecodable` names the file, line and byte of
the first invalid UTF-8, so a writer refuses to rewrite a file whose bytes it would
change (a user's bytes are never lost), while a reader decodes with replacement.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .files import NotRegularFile, check_regular, open_regular

DEFAULT_LIMIT = 64 * 1024 * 1024


class Refused(OSError):
    """A path the reader policy does not open (a FIFO, a device, a link out of the
    root, a file over the limit); the message says which and why."""


@dataclass(frozen=True)
class Read:
    """The bytes read and whether the file was cut at the limit."""

    data: bytes
    size: int  # the file's size when opened
    truncated: bool


def check(path: Path, root: Path | None) -> Path:
    """``path`` resolved, if the policy lets it be opened (raises :class:`Refused`)."""
    try:
        real = Path(os.path.realpath(path))
        if root is not None:
            top = Path(os.path.realpath(root))
            if real != top and not real.is_relative_to(top):
                raise Refused(f"{path}: a link out of {root} ({real}) is not followed")
        check_regular(real)
    except NotRegularFile as exc:
        raise Refused(f"{path}: {exc}") from None
    return real


def open_checked(path: Path, root: Path | None) -> BinaryIO:
    """A binary handle on ``path`` under the policy (no FIFO, no link out of ``root``)."""
    real = check(path, root)
    try:
        return open_regular(real)
    except NotRegularFile as exc:
        raise Refused(f"{path}: {exc}") from None


def read(
    path: Path, root: Path | None, *, limit: int = DEFAULT_LIMIT, truncate: bool = False
) -> Read:
    """At most ``limit`` bytes of ``path`` under the policy. A larger file is refused,
    or with ``truncate`` cut at the limit (``truncated`` says so)."""
    with open_checked(path, root) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit and not truncate:
            raise Refused(f"{path}: {size} bytes, over the {limit}-byte limit: not read")
        data = fh.read(limit + 1)
    if len(data) > limit:
        if not truncate:
            raise Refused(f"{path}: over the {limit}-byte limit: not read")
        return Read(data[:limit], max(size, len(data)), True)
    return Read(data, size, False)


def read_text(path: Path, root: Path | None, *, limit: int = DEFAULT_LIMIT) -> str:
    """The text of ``path`` under the policy, invalid UTF-8 replaced."""
    return read(path, root, limit=limit).data.decode("utf-8", errors="replace")


def undecodable(data: bytes, name: str) -> str | None:
    """None when ``data`` is clean UTF-8, else where it is not: file, line, the byte
    of the line and of the file."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return (
            f"{name}:{line}: invalid UTF-8 (byte 0x{data[exc.start]:02x} at byte {col} of "
            f"the line, offset {exc.start} of the file)"
        )
    return None


__all__ = [
    "DEFAULT_LIMIT",
    "Read",
    "Refused",
    "check",
    "open_checked",
    "read",
    "read_text",
    "undecodable",
]
