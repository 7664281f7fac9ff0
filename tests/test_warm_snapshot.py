"""The warm lanes' snapshot beside the index (issue 41 point 2): a warm process (daemon,
MCP server) starts from the arrays the last one kept instead of reading every vector
and re-tokenising every chunk, and answers exactly as a process without them would.

What a user notices: a restarted daemon answers the same, sees every note written while
it was down, never shows a forgotten line, and a damaged snapshot only costs time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from conftest import Paths, adapters
from reverie.engine import Reverie

QUERIES = ["zqotter river holt", "zqkestrel hovering", "湖边小屋", "ferry timetable"]


def _notes(paths: Paths) -> None:
    paths.write("notes/otters.md", "# Otters\n\nA zqotter holt sits under the river bank.\n")
    paths.write("notes/birds.md", "# Birds\n\nA zqkestrel was hovering over the 湖边小屋.\n")
    paths.write("notes/travel.md", "# Travel\n\nThe ferry timetable changes in October.\n")


def _answers(engine: Reverie) -> list[list[tuple[str, int, float]]]:
    return [
        [(h.path, h.start_line, round(h.score, 6)) for h in engine.search(q, record=False).hits]
        for q in QUERIES
    ]


def _snapshot(paths: Paths) -> Path:
    return paths.state / "main" / "index.warm"


def _lanes(engine: Reverie) -> object:
    return adapters(engine).port


def _indexed(make: Callable[..., Reverie], paths: Paths) -> Reverie:
    """A workspace with the three notes, indexed (nothing warm yet)."""
    engine = make(embedder="fake")
    engine.init()
    _notes(paths)
    engine.index()
    return engine


def test_a_restarted_warm_process_answers_from_the_snapshot_as_a_cold_one_does(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    first = _indexed(engine_factory, paths)
    cold = _answers(first)  # vec0 and FTS5: nothing loaded
    first.warm()
    assert (_snapshot(paths) / "vectors.json").is_file()
    assert (_snapshot(paths) / "keyword.json").is_file()
    assert _answers(first) == cold

    again = engine_factory(embedder="fake")
    again.warm()
    matrix = _lanes(again).vector_lane._base  # type: ignore[attr-defined]
    assert isinstance(matrix, np.memmap)  # read from the snapshot, not from the index
    assert _answers(again) == cold


def test_what_changed_while_no_process_was_warm_is_seen_and_nothing_stale(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    first = _indexed(engine_factory, paths)
    first.warm()  # the snapshot holds the three notes
    first.close()
    paths.write("notes/otters.md", "# Otters\n\nThe zqbadger sett is past the stile.\n")
    paths.write("notes/moths.md", "# Moths\n\nA zqhawkmoth came to the lamp.\n")
    (paths.workspace / "notes" / "travel.md").unlink()
    writer = engine_factory(embedder="fake")
    writer.index()
    cold = _answers(writer) + [
        [(h.path, h.start_line) for h in writer.search(q, record=False).hits]  # type: ignore[misc]
        for q in ("zqbadger sett", "zqhawkmoth lamp")
    ]
    warm = engine_factory(embedder="fake")
    warm.warm()
    got = _answers(warm) + [
        [(h.path, h.start_line) for h in warm.search(q, record=False).hits]  # type: ignore[misc]
        for q in ("zqbadger sett", "zqhawkmoth lamp")
    ]
    assert got == cold
    paths_found = {h.path for h in warm.search("zqotter holt", record=False).hits}
    assert "notes/otters.md" not in paths_found  # the old text of an edited note is gone
    assert not any(h.path == "notes/travel.md" for h in warm.search("ferry", record=False).hits)
    assert {h.path for h in warm.search("zqhawkmoth", record=False).hits} == {"notes/moths.md"}


def test_a_forget_deletes_the_snapshot_and_the_next_one_never_holds_the_text(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = _indexed(engine_factory, paths)
    engine.warm()
    held = b"".join(p.read_bytes() for p in _snapshot(paths).rglob("*") if p.is_file())
    assert b"zqkestrel" in held  # the keyword snapshot's vocabulary holds the word
    engine.curation.forget("zqkestrel")
    assert not _snapshot(paths).exists()
    later = engine_factory(embedder="fake")
    later.warm()
    assert _snapshot(paths).exists()
    held = b"".join(p.read_bytes() for p in _snapshot(paths).rglob("*") if p.is_file())
    assert b"zqkestrel" not in held
    assert later.search("zqkestrel", record=False).hits == []


def test_a_damaged_snapshot_costs_time_not_answers(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = _indexed(engine_factory, paths)
    cold = _answers(engine)
    engine.warm()
    for f in _snapshot(paths).rglob("*"):
        if f.is_file() and f.suffix in (".npy", ".pickle"):
            f.write_bytes(b"\x00garbage")
    again = engine_factory(embedder="fake")
    again.warm()
    assert _answers(again) == cold


def test_a_one_shot_search_maps_a_current_snapshot_and_never_reads_a_stale_one(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    """A process that never warms (``reverie search``) answers from the snapshot when it
    was made at the index's very version, as vec0 and FTS5 would; a snapshot the index
    has moved past is neither read nor rewritten: vec0 and FTS5 answer."""
    first = _indexed(engine_factory, paths)
    cold = _answers(first)  # vec0 and FTS5: no snapshot yet
    first.warm()
    first.close()
    once = engine_factory(embedder="fake")
    assert _answers(once) == cold
    port = _lanes(once)
    assert isinstance(port.vector_lane._base, np.memmap)  # type: ignore[attr-defined]
    assert port.keyword_lane.warm  # type: ignore[attr-defined]
    once.close()
    paths.write("notes/moths.md", "# Moths\n\nA zqhawkmoth came to the lamp.\n")
    writer = engine_factory(embedder="fake")
    writer.index()
    writer.close()
    kept = {p: p.stat().st_mtime_ns for p in _snapshot(paths).rglob("*")}
    stale = engine_factory(embedder="fake")
    assert {h.path for h in stale.search("zqhawkmoth", record=False).hits} == {"notes/moths.md"}
    port = _lanes(stale)
    assert not port.vector_lane.warm and not port.keyword_lane.warm  # type: ignore[attr-defined]
    assert {p: p.stat().st_mtime_ns for p in _snapshot(paths).rglob("*")} == kept
