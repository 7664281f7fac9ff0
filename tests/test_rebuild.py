"""Files are the truth: deleting the index and rebuilding it gives identical search
results (scores, order, line ranges, origins), not just the same rows."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from conftest import adapters, plant
from reverie import Origin, Reverie, SessionKind
from reverie.clock import Clock

NOW = datetime(2026, 5, 1, 9, 0).astimezone()
QUERIES = ("gateway loopback", "深色主题", "staging database port", "release", "MEMORY.md", "zzz")


def _results(ws: Path, st: Path) -> list[list[dict[str, object]]]:
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    try:
        return [e.search(q, record=False, max_results=10).as_dict()["hits"] for q in QUERIES] + [
            e.search(q, record=False, budget_tokens=600).as_dict()["hits"] for q in QUERIES
        ]
    finally:
        e.close()


def test_deleted_index_rebuilds_to_identical_search_results(tmp_path: Path) -> None:
    ws, st = tmp_path / "ws", tmp_path / "st"
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    e.init()
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- Keep the gateway on loopback. <!-- trigger: gateway --> <!-- importance: 9 -->\n"
        "- 用户喜欢深色主题。\n- Releases go out on Tuesdays.\n",
        encoding="utf-8",
    )
    for i in range(12):
        plant(
            e,
            f"Note {i}: the staging database port is {5400 + i}.",
            origin=Origin.OWNER,
            session=SessionKind.INTERACTIVE,
        )
    plant(e, "Page says the release is cancelled.", origin=Origin.UNTRUSTED)
    (ws / "memory" / "imports" / "old.md").write_text(
        "- gateway notes from elsewhere\n", encoding="utf-8"
    )
    e.index()
    e.close()
    before = _results(ws, st)
    for f in (st / "main").glob("index.sqlite*"):
        f.unlink()
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    e.index(force=True)
    e.close()
    after = _results(ws, st)
    assert any(before), "the queries must find something for the comparison to mean anything"
    assert after == before


def test_a_schema_3_index_is_restemmed_in_place_to_the_rebuilds_results(tmp_path: Path) -> None:
    """Schema 4 stores stems in the keyword entry. An index of schema 3 (words as
    written) is migrated on open in one transaction: vectors kept (nothing re-embedded),
    and searches equal those of a fresh rebuild; "camped" now finds "camping"."""
    from reverie.backends.sqlite.db import connect
    from reverie.tokens import segment

    ws, st = tmp_path / "ws", tmp_path / "st"
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    e.init()
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- We went camping at the lake in June.\n- 用户喜欢深色主题。\n"
        "- Releases go out on Tuesdays.\n",
        encoding="utf-8",
    )
    e.index()
    e.close()
    expected = _results(ws, st)
    db = st / "main" / "index.sqlite"
    conn = connect(db)
    rows = conn.execute("SELECT id, text FROM chunks").fetchall()
    conn.execute("BEGIN")
    conn.execute("DELETE FROM chunks_fts")
    conn.executemany(
        "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)", [(i, segment(t)) for i, t in rows]
    )
    conn.execute("PRAGMA user_version = 3")
    conn.execute("COMMIT")
    vectors = conn.execute("SELECT count(*) FROM chunks WHERE has_vector = 1").fetchone()[0]
    conn.close()
    assert vectors > 0
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    try:
        found = e.search("where have we camped", record=False, lanes="keyword")
        assert [h.start_line for h in found.hits] == [3]
        assert adapters(e).port.conn.execute("PRAGMA user_version").fetchone()[0] == 4
        kept = (
            adapters(e)
            .port.conn.execute("SELECT count(*) FROM chunks WHERE has_vector = 1")
            .fetchone()[0]
        )
        assert kept == vectors
    finally:
        e.close()
    assert _results(ws, st) == expected
