"""Where an export's files are: the file named, the one inside a folder, or the one
inside a zip, each read under the reader policy (:mod:`reverie.storage.reader`: no FIFO
or device, no link out of what was named, a size limit)."""

from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO

from ..errors import ParseError
from ..storage import reader

MAX_INPUT_BYTES = 512 * 1024 * 1024  # one input file; a larger one is refused, never read


def read_checked(file: Path, root: Path) -> bytes:
    """An input file's bytes under the reader policy, at most :data:`MAX_INPUT_BYTES`."""
    try:
        return reader.read(file, root, limit=MAX_INPUT_BYTES).data
    except reader.Refused as exc:
        raise ParseError(f"{exc}; nothing imported") from None


@contextlib.contextmanager
def conversations_stream(path: Path) -> Iterator[tuple[IO[bytes], str]]:
    """``conversations.json`` as a byte stream: the file, the one inside a folder or a
    zip (read from the zip as it inflates: never the whole file in memory)."""
    root = path if path.is_dir() else path.parent
    if path.is_dir():
        path = path / "conversations.json"
    try:
        fh = reader.open_checked(path, root)
    except reader.Refused as exc:
        raise ParseError(f"{exc}; nothing imported") from None
    with fh:
        if not zipfile.is_zipfile(fh):
            fh.seek(0)
            yield fh, str(path)
            return
        with zipfile.ZipFile(fh) as zf:
            names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
            if not names:
                raise ParseError("the zip holds no conversations.json", path=str(path))
            with zf.open(names[0]) as member:
                yield member, f"{path}!{names[0]}"


def side_files(path: Path, names: Collection[str]) -> Iterator[tuple[str, bytes, str]]:
    """The files of ``names`` beside ``conversations.json`` (``memories.json``,
    ``projects.json``) in the export named as a whole: its folder or its zip; each as
    (name, bytes, where). A ``conversations.json`` named on its own brings nothing
    else (a folder like Downloads may hold another program's ``projects.json``); a file
    that is not there is skipped."""
    if not names:
        return
    folder = path if path.is_dir() else path.parent
    if not path.is_dir():
        try:
            fh = reader.open_checked(path, folder)
        except reader.Refused as exc:
            raise ParseError(f"{exc}; nothing imported") from None
        with fh:
            if zipfile.is_zipfile(fh):
                with zipfile.ZipFile(fh) as zf:
                    for member in zf.infolist():
                        name = member.filename.rsplit("/", 1)[-1]
                        if name not in names or member.is_dir():
                            continue
                        if member.file_size > MAX_INPUT_BYTES:
                            raise ParseError("larger than the import limit", path=member.filename)
                        yield name, zf.read(member), f"{path}!{member.filename}"
        return
    for name in sorted(names):
        file = folder / name
        if file.is_file():
            yield name, read_checked(file, folder), str(file)


__all__ = ["MAX_INPUT_BYTES", "conversations_stream", "read_checked", "side_files"]
