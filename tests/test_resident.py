"""The warm matrix moves from the snapshot's mapping into the process's own memory
after the first search (issue 41: a product over a file mapping is slower), block by
block, and every search during and after the move answers as before it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from conftest import Paths, adapters
from reverie.backends.sqlite import resident
from reverie.backends.sqlite.resident import Resident
from reverie.engine import Reverie


def _mapped(tmp_path: Path, rows: int = 3000, dims: int = 64) -> tuple[np.ndarray, np.ndarray]:
    matrix = np.random.default_rng(7).standard_normal((rows, dims)).astype(np.float32)
    np.save(tmp_path / "m.npy", matrix)
    return matrix, np.load(tmp_path / "m.npy", mmap_mode="r")


def test_products_are_the_same_before_during_and_after_the_move(tmp_path: Path) -> None:
    matrix, mapped = _mapped(tmp_path)
    resident.BLOCK_BYTES = 64 * 4 * 500  # 500 rows a block: six blocks
    try:
        moving = Resident(mapped)
        q = np.random.default_rng(8).standard_normal(64).astype(np.float32)
        want = matrix @ q
        np.testing.assert_allclose(moving.product(q), want, rtol=1e-5, atol=1e-5)
        moving.move(blocks=2)  # a third in memory, the rest still mapped
        assert moving.done == 1000 and not moving.finished
        np.testing.assert_allclose(moving.product(q), want, rtol=1e-5, atol=1e-5)
        moving.move()
        assert moving.finished and moving.memory is not None
        assert not isinstance(moving.memory, np.memmap)
        np.testing.assert_array_equal(moving.memory, matrix)
        np.testing.assert_allclose(moving.product(q), want, rtol=1e-5, atol=1e-5)
        # the blocks let go of are read again from the file, unchanged
        np.testing.assert_array_equal(np.asarray(mapped[:1000]), matrix[:1000])
    finally:
        resident.BLOCK_BYTES = 8 << 20


def test_a_stopped_move_copies_nothing_more(tmp_path: Path) -> None:
    _, mapped = _mapped(tmp_path)
    moving = Resident(mapped)
    moving.stop()
    moving.move()
    assert moving.done == 0 and not moving.finished


def test_a_warm_process_moves_its_matrix_into_memory_and_answers_the_same(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    first = engine_factory(embedder="fake")
    first.init()
    paths.write("notes/otters.md", "# Otters\n\nA zqotter holt sits under the river bank.\n")
    paths.write("notes/birds.md", "# Birds\n\nA zqkestrel was hovering over the 湖边小屋.\n")
    first.index()
    first.warm()  # keeps the snapshot
    queries = ["zqotter river holt", "zqkestrel hovering", "湖边小屋"]
    cold = [[(h.path, round(h.score, 5)) for h in first.search(q, record=False).hits]
            for q in queries]  # fmt: skip

    again = engine_factory(embedder="fake")
    again.warm()
    lane = adapters(again).port.vector_lane  # type: ignore[attr-defined]
    assert isinstance(lane._base, np.memmap) and lane._resident is not None
    moving = lane._resident
    answers = [[(h.path, round(h.score, 5)) for h in again.search(q, record=False).hits]
               for q in queries]  # fmt: skip
    assert answers == cold
    assert moving._thread is not None  # the first search started the move
    moving._thread.join()  # (a move that never ends fails by the suite's timeout)
    assert moving.finished
    again.search(queries[0], record=False)  # the next search lets go of the mapping
    assert not isinstance(lane._base, np.memmap) and lane._resident is None
    assert [[(h.path, round(h.score, 5)) for h in again.search(q, record=False).hits]
            for q in queries] == cold  # fmt: skip
