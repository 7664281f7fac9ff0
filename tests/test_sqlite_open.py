"""One SQLite opener (issue 44): the index, the recall log and the intents store open
their files the same way, so a fix to the recipe reaches all three."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlean as sqlite3

from reverie.backends.sqlite.db import connect
from reverie.backends.sqlite.intents import Store
from reverie.backends.sqlite.opener import BUSY_TIMEOUT_MS, open_sqlite, transaction
from reverie.backends.sqlite.recall_log import RecallLog

SCHEMA = "CREATE TABLE IF NOT EXISTS t (x INTEGER);"


def _pragmas(conn: sqlite3.Connection) -> tuple[str, int, int]:
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    wait = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    sync = int(conn.execute("PRAGMA synchronous").fetchone()[0])
    return mode, wait, sync


def test_every_store_opens_with_the_same_recipe(tmp_path: Path) -> None:
    index = connect(tmp_path / "index.sqlite")
    log = RecallLog(tmp_path / "recall.sqlite")
    intents = Store(tmp_path / "intents.sqlite")
    for conn in (index, log.conn, intents.conn):
        assert _pragmas(conn) == ("wal", BUSY_TIMEOUT_MS, 1)  # synchronous NORMAL
        assert conn.isolation_level is None  # transactions are explicit
    assert int(index.execute("PRAGMA foreign_keys").fetchone()[0]) == 1
    for conn in (index, log.conn, intents.conn):
        conn.close()


def test_a_new_file_opened_by_many_at_once_gets_its_tables_once(tmp_path: Path) -> None:
    path, errors, conns = tmp_path / "new.sqlite", [], []

    def one() -> None:
        try:
            conns.append(open_sqlite(path, schema=SCHEMA))
        except Exception as exc:  # handed to the assertion
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(conns) == 6
    with transaction(conns[0]):
        conns[0].execute("INSERT INTO t VALUES (1)")
    assert conns[-1].execute("SELECT count(*) FROM t").fetchone()[0] == 1
    for conn in conns:
        conn.close()


def test_read_only_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "ro.sqlite"
    open_sqlite(path, schema=SCHEMA).close()
    ro = open_sqlite(path, readonly=True)
    with pytest.raises(sqlite3.OperationalError):
        ro.execute("INSERT INTO t VALUES (1)")
    ro.close()
