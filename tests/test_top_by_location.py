"""The SQLite vector lane's cut: the k best scores, equal scores in content order
(path, start line, part), whichever chunks' locations it looks up."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.backends.sqlite.db import connect, ensure_schema, transaction
from reverie.backends.sqlite.query import top_by_location

N = 30  # chunks 1..N in the table; ids above N are not (a row gone since)


def _table() -> object:
    conn = connect(":memory:")
    ensure_schema(conn)
    with transaction(conn):
        for i in range(1, N + 1):  # content order is not rowid order
            conn.execute(
                "INSERT INTO chunks(id, path, start_line, end_line, part, text, text_hash, kind) "
                "VALUES (?, ?, ?, ?, ?, 'x', ?, 'journal')",
                (i, f"memory/{(7 * i) % 4}.md", (5 * i) % 3, 9, i % 2,
                 hashlib.sha256(str(i).encode()).hexdigest()),
            )  # fmt: skip
    return conn


CONN = _table()


def _every_location(scores: dict[int, float], k: int) -> dict[int, float]:
    """The cut with every chunk's location read (what the lane did before)."""
    where = {
        int(r[0]): (str(r[1]), int(r[2]), int(r[3]))
        for r in CONN.execute("SELECT id, path, start_line, part FROM chunks")  # type: ignore[attr-defined]
        if int(r[0]) in scores
    }
    last = ("\U0010ffff", 0, 0)
    order = sorted(scores, key=lambda c: (-scores[c], where.get(c, last)))
    return {c: scores[c] for c in order[:k]}


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.integers(1, N + 5), st.sampled_from([0.9, 0.5, 0.5000001, 0.1, -0.0, 0.0]), max_size=20
    ),
    st.integers(1, 25),
)
def test_equal_scores_keep_content_order_and_the_rest_is_by_score(
    scores: dict[int, float], k: int
) -> None:
    got = top_by_location(CONN, scores, k)  # type: ignore[arg-type]
    want = _every_location(scores, k)
    assert list(got.items()) == list(want.items())
