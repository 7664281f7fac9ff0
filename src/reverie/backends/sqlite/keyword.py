"""The warm keyword lane's rows in a SQLite index
(:class:`reverie.storage.index.keyword.KeywordIndex` reads them), kept between
processes beside the index file (:mod:`.warm_files`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlean as sqlite3

from .db import index_version
from .warm_files import load_keyword, save_keyword, tag, warm_dir

if TYPE_CHECKING:
    from ...storage.index.bm25 import Doc

_MARKS = 900


class SqliteRows:
    """:class:`~reverie.storage.index.keyword.KeptRows` of one SQLite index (kept in
    ``index.warm/`` beside its file; an index in memory keeps nothing)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> str:
        return index_version(self.conn)

    def fingerprints(self) -> dict[int, str]:
        return {int(r[0]): str(r[1]) for r in self.conn.execute("SELECT id, text_hash FROM chunks")}

    def docs(self, ids: list[int]) -> list[Doc]:
        from ...storage.index.bm25 import Doc

        out: list[Doc] = []
        for i in range(0, len(ids), _MARKS):
            part = ids[i : i + _MARKS]
            rows = self.conn.execute(
                "SELECT id, text_hash, text, path, start_line, part FROM chunks "
                f"WHERE id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
            out += [
                Doc(int(r[0]), str(r[1]), str(r[2]), (str(r[3]), int(r[4]), int(r[5])))
                for r in rows
            ]
        return out

    def saved(
        self, *, only_at: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any], str] | None:
        folder = warm_dir(self.conn)
        return None if folder is None else load_keyword(folder, tag(self.conn), only_at=only_at)

    def save(self, version: str, state: dict[str, Any], arrays: dict[str, Any]) -> None:
        folder = warm_dir(self.conn)
        if folder is not None:
            save_keyword(folder, tag(self.conn), version, state, arrays)


__all__ = ["SqliteRows"]
