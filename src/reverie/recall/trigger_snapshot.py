"""The trigger index on disk, for one-shot processes.

A long-running process (the MCP server, the daemon) builds its
:class:`reverie.recall.context.TriggerIndex` once per index version and keeps it in
memory. A one-shot process (``reverie hook user-prompt-submit``, on every prompt of a
Claude Code session) would rebuild it for every prompt: the phrases' words and a small
FTS5 table over every trigger-carrying entry, some 25 ms at 1,000 entries. So whoever
builds it also writes it to ``<state dir>/<agent>/triggers.sqlite``: that very FTS5
table (``VACUUM INTO``: the same rows, hence the same BM25 ranks) and the word index as
two tables. The next one-shot process answers from that file, paying per prompt only
for the trigger rows it reads anyway and a few look-ups.

The snapshot is keyed on the trigger rows themselves (not on the index's
version counter, which starts again when the index is rebuilt, and which moves on for
every journal line while the triggers stay as they were) and on the code that derives
it: the source files of :data:`RECIPE`, the Python, SQLite and stemmer versions. A snapshot
with another key is never read. Entries are parsed from the rows just read, by the
same code as the in-memory index, so only what the recipe derives comes from the file.
Reading or writing it never fails a turn: any error means "no snapshot" and the
in-memory build (P5).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import marshal
import os
import sys
import threading
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3

from ..storage.index.memfts import MemoryFts
from .triggers import TriggerEntry

if TYPE_CHECKING:
    from ..storage.index.trigger_rows import TriggerRow

FORMAT = "reverie-trigger-snapshot 1"
# the modules whose code decides what the snapshot holds (the phrases' words, the FTS
# body text and table) or which rows it was built from (the query, their parsing): a
# change to any of their files makes every snapshot stale. Add a module here when the
# trigger index starts to depend on it (a stemmer, say).
RECIPE = (
    "reverie.tokens",
    "reverie.recall.context",
    "reverie.recall.triggers",
    "reverie.recall.trigger_snapshot",
    "reverie.storage.index.memfts",
    "reverie.backends.sqlite.trigger_rows",
    "reverie.storage.index.trigger_rows",
)
_RECIPE: list[str] = []

Raw = tuple[Any, ...]


def recipe() -> str:
    """The code half of the key (computed once per process)."""
    if not _RECIPE:
        import Stemmer  # the stems of the FTS body (reverie.tokens.keyword_body)

        parts = [FORMAT, sys.version, sqlite3.sqlite_version, str(Stemmer.version())]
        for name in RECIPE:
            st = os.stat(str(importlib.import_module(name).__file__))
            parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
        _RECIPE.append(json.dumps(parts))
    return _RECIPE[0]


def key_of(raw: list[Raw]) -> tuple[str, bytes]:
    """The snapshot's key: this code, and these trigger rows in their order (whole,
    not a digest: compared byte for byte, no collision can pass)."""
    return recipe(), marshal.dumps(raw, 2)  # version 2: no back-references, one encoding


class Entries(Mapping[int, TriggerEntry]):
    """Trigger entries by chunk id, each parsed from its row on first look-up."""

    def __init__(self, raw: list[Raw], parse: Callable[[Raw], TriggerRow]) -> None:
        self._raw = {r[0]: r for r in raw}
        self._parse = parse
        self._done: dict[int, TriggerEntry] = {}

    def __getitem__(self, cid: int) -> TriggerEntry:
        entry = self._done.get(cid)
        if entry is None:
            entry = self._done[cid] = self._parse(self._raw[cid])
        return entry

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, cid: object) -> bool:
        return cid in self._raw


class Terms(Mapping[str, list[int]]):
    """A word index (term -> chunk ids) kept in a snapshot table."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock, table: str) -> None:
        self._conn, self._lock, self._table = conn, lock, table

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql.format(table=self._table), args).fetchall()

    def __getitem__(self, term: str) -> list[int]:
        try:
            rows = self._rows("SELECT cid FROM {table} WHERE term = ? ORDER BY rowid", (term,))
        except UnicodeEncodeError:  # a lone surrogate: in no phrase (the index holds text)
            rows = []
        if not rows:
            raise KeyError(term)
        return [r[0] for r in rows]

    def __iter__(self) -> Iterator[str]:
        return iter(self.grouped())

    def __len__(self) -> int:
        return len(self.grouped())

    def grouped(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for term, cid in self._rows("SELECT term, cid FROM {table} ORDER BY rowid"):
            out.setdefault(term, []).append(cid)
        return out

    def items(self) -> ItemsView[str, list[int]]:
        return self.grouped().items()  # one query, not one per term


class Snapshot:
    """An open snapshot: the parts of a trigger index, read from the file."""

    def __init__(self, conn: sqlite3.Connection, entries: Entries) -> None:
        self._conn, lock = conn, threading.Lock()
        self.entries = entries
        self.words = Terms(conn, lock, "words")
        self.cjk = Terms(conn, lock, "cjk")
        self.fts = MemoryFts.attach(conn)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()


class TriggerSnapshot:
    """The snapshot file at ``path``: :meth:`open` it for rows, :meth:`save` a build."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self, raw: list[Raw]) -> sqlite3.Connection | None:
        """The file, opened read-only, when it holds the snapshot of ``raw``."""
        if not self.path.is_file():
            return None
        conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
        try:
            found = dict(conn.execute("SELECT key, value FROM meta"))
            if (found.get("recipe"), found.get("rows")) == key_of(raw):
                return conn
        except Exception:
            pass
        conn.close()
        return None

    def discard(self) -> None:
        """Remove the snapshot (a forget: it holds the text of trigger entries); the
        next build writes it again. Temp files of a killed save go too."""
        from ..storage.scrub import discard

        discard(self.path)
        for tmp in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()

    def open(self, raw: list[Raw], parse: Callable[[Raw], TriggerRow]) -> Snapshot | None:
        """The snapshot of ``raw`` (rows parsed with ``parse`` when looked up), or None
        when the file is missing, stale, foreign or unreadable."""
        try:
            conn = self._connect(raw)
        except Exception:
            return None
        return None if conn is None else Snapshot(conn, Entries(raw, parse))

    def save(
        self,
        raw: list[Raw],
        fts: MemoryFts,
        words: Mapping[str, Sequence[int]],
        cjk: Mapping[str, Sequence[int]],
    ) -> None:
        """Write the snapshot of an index built from ``raw`` (atomically; best effort:
        a state dir that is gone or read-only just means no snapshot)."""
        tmp = ""
        try:
            if not self.path.parent.is_dir():
                return  # never re-create a state dir removed under us
            held = self._connect(raw)
            if held is not None:  # written already (by another process)
                held.close()
                return
            import tempfile  # (a one-shot process that reads the snapshot never writes it)

            fd, tmp = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
            )
            os.close(fd)
            fts.save(tmp)
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:  # one transaction, unsynced: the file is synced once, whole, below
                conn.executescript(
                    "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF; BEGIN;"
                    "CREATE TABLE words(term TEXT, cid INTEGER);"
                    "CREATE TABLE cjk(term TEXT, cid INTEGER);"
                    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
                )
                for table, terms in (("words", words), ("cjk", cjk)):
                    conn.executemany(
                        f"INSERT INTO {table} VALUES (?, ?)",
                        ((t, cid) for t, cids in terms.items() for cid in cids),
                    )
                conn.execute("CREATE INDEX words_term ON words(term)")
                conn.execute("CREATE INDEX cjk_term ON cjk(term)")
                recipe_text, rows_blob = key_of(raw)
                conn.execute("INSERT INTO meta VALUES ('recipe', ?)", (recipe_text,))
                conn.execute("INSERT INTO meta VALUES ('rows', ?)", (rows_blob,))
                conn.execute("COMMIT")
            finally:
                conn.close()
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)  # whole on disk before it takes the name
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            tmp = ""
        except Exception:
            return
        finally:
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


__all__ = ["FORMAT", "RECIPE", "Entries", "Snapshot", "Terms", "TriggerSnapshot", "key_of"]
