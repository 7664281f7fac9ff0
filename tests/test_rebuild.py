"""Files are the truth: deleting the index and rebuilding it gives identical search
results (scores, order, line ranges, origins), not just the same rows."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from conftest import plant
from reverie import Origin, Reverie, SessionKind
from reverie.clock import Clock

NOW = datetime(2026, 5, 1, 9, 0).astimezone()
QUERIES = ("gateway loopback", "深色主题", "staging database port", "release", "MEMORY.md", "zzz")


def _results(ws: Path, st: Path) -> list[list[dict[str, object]]]:
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(NOW))
    try:
        return [e.search(q, record=False, max_results=10).as_dict()["hits"] for q in QUERIES]
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
