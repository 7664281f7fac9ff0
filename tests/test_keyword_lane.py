"""The keyword lane of a warm process (issue 9 item 6): an in-memory BM25 that finds
and scores exactly what the FTS5 lane does (English, accents, Chinese phrases), sees
every index change at once, and leaves untrusted rows findable as they were."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Paths, adapters, plant
from reverie.backends.sqlite.db import connect, ensure_schema, transaction
from reverie.backends.sqlite.keyword import SqliteRows
from reverie.backends.sqlite.query import keyword_lane
from reverie.engine import Reverie
from reverie.provenance.origin import Origin
from reverie.storage.index.bm25 import doc_tokens, query_phrases
from reverie.storage.index.keyword import KeywordIndex
from reverie.tokens import QUERY_STOP_WORDS, fts_tokens, keyword_body, segment

WORDS = [
    *[
        "apple",
        "banana",
        "memory",
        "recall",
        "model",
        "data",
        "the",
        "a",
        "of",
        "deploy",
        "staging",
    ],
    *["café", "naïve", "Straße", "ÉCOLE", "über", "façade", "x_y", "42", "3.14", "user's"],
    *[
        "记忆",
        "中文",
        "测试",
        "你好",
        "世界",
        "数据",
        "模型",
        "东京",
        "的",
        "是",
        "哈哈哈",
        "。",
        "，",
        "！",
        "「引用」",
    ],
    *["Ａｂｃ", "カタカナ", "ひらがな", "한국어"],
]
word = st.sampled_from(WORDS)
text = st.tuples(st.lists(word, min_size=1, max_size=25), st.sampled_from([" ", "", "\n- "])).map(
    lambda t: t[1].join(t[0])
)


def _table(docs: list[str]) -> object:
    conn = connect(":memory:")
    ensure_schema(conn)
    with transaction(conn):
        for i, body in enumerate(docs, start=1):
            conn.execute(
                "INSERT INTO chunks(id, path, start_line, end_line, part, text, text_hash, kind) "
                "VALUES (?, ?, ?, ?, 0, ?, ?, 'journal')",
                (i, f"memory/{i % 3}.md", i, i, body, hashlib.sha256(body.encode()).hexdigest()),
            )
            conn.execute(
                "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)", (i, keyword_body(body))
            )
    return conn


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text, min_size=1, max_size=40), st.lists(text, min_size=1, max_size=6))
def test_the_warm_lane_finds_and_scores_what_fts5_does(docs: list[str], queries: list[str]) -> None:
    conn = _table(docs)
    warm = KeywordIndex()
    warm.load(SqliteRows(conn))
    for q, drop in itertools.product(queries, (frozenset(), QUERY_STOP_WORDS)):
        for k in (3, 24):
            fts = keyword_lane(conn, q, k, drop)  # type: ignore[arg-type]
            mem = warm.top(SqliteRows(conn), q, k, drop)  # type: ignore[arg-type]
            assert list(mem) == list(fts), q  # the same rows in the same order
            for cid, rank in fts.items():
                assert abs(mem[cid] - rank) <= 1e-9 * max(1.0, abs(rank)), q


@given(st.lists(word, min_size=1, max_size=12).map(" ".join))
def test_tokens_are_the_ones_fts5_indexes(body: str) -> None:
    conn = _table([body])
    conn.execute(  # type: ignore[attr-defined]
        "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, 'instance')"
    )
    fts = [r[0] for r in conn.execute("SELECT term FROM temp.v ORDER BY offset")]  # type: ignore[attr-defined]
    assert doc_tokens(body) == fts


@given(st.lists(word, min_size=1, max_size=12).map(" ".join))
def test_the_tokenizer_is_fts5s_own(body: str) -> None:
    """fts_tokens mirrors FTS5's unicode61 tokenizer on segmented raw text (what the
    stems are made from)."""
    conn = connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO t(rowid, body) VALUES (1, ?)", (segment(body),))
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, t, 'instance')")
    fts = [r[0] for r in conn.execute("SELECT term FROM temp.v ORDER BY offset")]
    assert fts_tokens(body) == fts


def test_word_forms_meet_in_both_lanes() -> None:
    """A query word finds the other forms of that word ("camped" -> "camping"), through
    FTS5 and the warm lane alike; Chinese is untouched."""
    conn = _table(
        ["We went camping at the beach", "She camps every summer", "A quiet day at home", "去东京"]
    )
    warm = KeywordIndex()
    warm.load(SqliteRows(conn))
    for query in ("where has she camped?", "CAMPING"):
        fts = keyword_lane(conn, query, 10)  # type: ignore[arg-type]
        assert set(fts) == {1, 2}, query
        assert list(warm.top(SqliteRows(conn), query, 10)) == list(fts)  # type: ignore[arg-type]
    assert list(keyword_lane(conn, "东京", 10)) == [4]  # type: ignore[arg-type]


def test_a_chinese_question_finds_the_line_that_shares_its_words() -> None:
    """A Chinese question has no spaces; the line it asks about shares words with it,
    not the whole run. Both lanes find it first, and score it alike."""
    conn = _table(
        ["我家的猫叫团子。", "今天天气很好。", "女儿的钢琴课在周四下午。", "猫粮快吃完了"]
    )
    warm = KeywordIndex()
    warm.load(SqliteRows(conn))
    for query, first in (("我家的猫叫什么名字？", 1), ("女儿的钢琴课在什么时候？", 3)):
        fts = keyword_lane(conn, query, 10)  # type: ignore[arg-type]
        assert next(iter(fts)) == first, query
        mem = warm.top(SqliteRows(conn), query, 10)  # type: ignore[arg-type]
        assert list(mem) == list(fts)
        for cid, rank in fts.items():
            assert abs(mem[cid] - rank) <= 1e-9 * max(1.0, abs(rank))


def test_chinese_terms_are_phrases_of_characters() -> None:
    assert query_phrases("东京的记 memory") == [("东", "京", "的", "记"), ("memori",)]
    # a run longer than a word is a sentence: its character pairs, each a phrase
    pairs = [("我", "家"), ("家", "的"), ("的", "猫"), ("猫", "叫"), ("叫", "团"), ("团", "子")]
    assert query_phrases("我家的猫叫团子") == pairs
    conn = _table(["我在东京有记忆", "京东的记录", "东方的北京 memory"])
    warm = KeywordIndex()
    warm.load(SqliteRows(conn))
    # "东京" is a phrase: a row holding both characters apart does not match it
    assert (
        list(warm.top(SqliteRows(conn), "东京", 10)) == list(keyword_lane(conn, "东京", 10)) == [1]
    )  # type: ignore[arg-type]


def _notes(paths: Paths) -> None:
    paths.write(
        "memory/2026-04-02.md",
        "# 2026-04-02\n\n- The zqkafka broker listens on port 9092.\n"
        "- 周五下午和王经理讨论了数据库迁移方案。\n- Lunch was pasta with the team.\n",
    )
    paths.write(
        "memory/2026-04-20.md",
        "# 2026-04-20\n\n- Deploy of the billing service moved to staging.\n"
        "- 数据库迁移推迟到下个月，原因是预算。\n",
    )
    paths.write("notes/tools.md", "# Tools\n\nThe zqkafka client is kcat; 迁移脚本在 ops 目录。\n")


def test_warm_and_one_shot_searches_return_the_same_hits(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    cold = engine_factory(embedder="fake")
    cold.init()
    _notes(paths)
    cold.index()
    # both with the vectors in memory (vec0's float32 cosines differ past 1e-7 and can
    # cross the min score): only the keyword lane differs, FTS5 against memory
    adapters(cold).port.vector_lane.load(adapters(cold).port.conn)
    warm = engine_factory(embedder="fake")
    warm.warm()
    assert adapters(warm).port.keyword_lane.warm and not adapters(cold).port.keyword_lane.warm
    for query in ("zqkafka broker port", "数据库迁移", "迁移 billing staging", "王经理"):
        for lanes in ("keyword", "hybrid"):
            a = cold.search(query, lanes=lanes, record=False)  # type: ignore[arg-type]
            b = warm.search(query, lanes=lanes, record=False)  # type: ignore[arg-type]
            assert a.hits, (query, lanes)
            assert [(h.key, round(h.score, 9)) for h in a.hits] == [
                (h.key, round(h.score, 9)) for h in b.hits
            ], (query, lanes)


def test_index_changes_are_seen_by_the_warm_lane_at_once(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    _notes(paths)
    engine.index()
    engine.warm()

    def found(query: str) -> set[str]:
        return {h.path for h in engine.search(query, lanes="keyword", record=False).hits}

    assert found("zqpelican") == set()
    paths.write("notes/birds.md", "# Birds\n\nA zqpelican nests by the 湖边小屋.\n")
    engine.index()
    assert found("zqpelican") == {"notes/birds.md"}
    assert "notes/birds.md" in found("湖边小屋")
    # edited in place: the old words are gone, the new ones are there (ids may be reused)
    paths.write("notes/birds.md", "# Birds\n\nA zqheron wades in the reeds.\n")
    engine.index()
    assert found("zqpelican") == set() and found("zqheron") == {"notes/birds.md"}
    (paths.workspace / "notes/birds.md").unlink()
    engine.index()
    assert found("zqheron") == set()
    # another process's sync (a second engine on the same index) is seen too
    other = engine_factory(embedder="fake")
    paths.write("notes/fish.md", "# Fish\n\nThe zqcarp pond froze.\n")
    other.index()
    assert found("zqcarp") == {"notes/fish.md"}


def test_untrusted_lines_stay_findable_and_framed_in_a_warm_process(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    plant(engine, "Web page: the zqfalcon password hint is blue.", origin=Origin.UNTRUSTED)
    plant(engine, "The zqfalcon cluster runs in rack 4.", origin=Origin.OWNER)
    engine.index()
    cold = {h.key: h.untrusted for h in engine.search("zqfalcon", record=False).hits}
    engine.warm()
    hits = engine.search("zqfalcon", record=False).hits
    assert {h.key: h.untrusted for h in hits} == cold
    [bad] = [h for h in hits if h.untrusted]
    assert "password hint" in bad.snippet and bad.framed != bad.snippet  # framed for the model


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def _in_order(ranked: list[int], scores: dict[int, float]) -> bool:
    """``ranked`` is in ``scores``' order (FTS5's rank: lower is better), where two
    scores within 1e-9 are a tie."""
    return all(
        scores[a] <= scores[b] + 1e-9 * max(1.0, abs(scores[b]))
        for a, b in itertools.pairwise(ranked)
    )


@given(
    st.lists(
        st.tuples(st.booleans(), st.lists(text, min_size=1, max_size=4)), min_size=8, max_size=16
    )
)
def test_the_warm_lane_stays_equal_through_many_small_changes(
    steps: list[tuple[bool, list[str]]],
) -> None:
    """Many syncs of a few rows (segments merged, deleted rows compacted away)."""
    from reverie.backends.sqlite.db import set_meta

    conn = _table(["seed row about memory 记忆"])
    warm = KeywordIndex()
    warm.load(SqliteRows(conn))
    next_id = 2
    for version, (delete, bodies) in enumerate(steps, start=2):
        with transaction(conn):
            if delete:  # drop the oldest rows (the way a file's chunks are replaced)
                for (cid,) in conn.execute("SELECT id FROM chunks ORDER BY id LIMIT 2").fetchall():  # type: ignore[attr-defined]
                    conn.execute("DELETE FROM chunks_fts WHERE rowid = ?", (cid,))  # type: ignore[attr-defined]
                    conn.execute("DELETE FROM chunks WHERE id = ?", (cid,))  # type: ignore[attr-defined]
            for body in bodies:
                conn.execute(  # type: ignore[attr-defined]
                    "INSERT INTO chunks(id, path, start_line, end_line, part, text, text_hash, kind) "
                    "VALUES (?, 'memory/x.md', ?, ?, 0, ?, ?, 'journal')",
                    (next_id, next_id, next_id, body, hashlib.sha256(body.encode()).hexdigest()),
                )
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)",
                    (next_id, keyword_body(body)),
                )  # type: ignore[attr-defined]
                next_id += 1
            set_meta(conn, "index_version", version)  # type: ignore[arg-type]
        for q in ("memory", "记忆", "café data", "的 是", bodies[0]):
            fts = keyword_lane(conn, q, 24)  # type: ignore[arg-type]
            mem = warm.top(SqliteRows(conn), q, 24)  # type: ignore[arg-type]
            # the same rows and scores; rows whose scores tie to 1e-9 may come in either
            # order (FTS5 and numpy differ in the last bits of a sum)
            assert set(mem) == set(fts), q
            assert all(abs(mem[c] - r) <= 1e-9 * max(1.0, abs(r)) for c, r in fts.items())
            assert _in_order(list(mem), fts) and _in_order(list(fts), mem), q


def test_question_words_do_not_outrank_the_words_a_question_is_about(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    """Stop words (what, did, the...) are left out of the keyword lane's query: a line
    sharing only them with the question no longer beats the line it is about."""
    engine = engine_factory(embedder="none")
    engine.init()
    paths.write(
        "memory/2026-04-02.md",
        "# 2026-04-02\n\n- What did you do? What did it look like? What was the plan?\n"
        "- Zqmira researched zqadoption agencies for weeks before she called.\n",
    )
    engine.index()
    for warm in (False, True):
        if warm:
            engine.warm()
        hits = engine.search("What did Zqmira research about zqadoption?", record=False).hits
        assert [h.start_line for h in hits] == [4], warm  # the question-word line is not a hit
        # a query of stop words only still searches them
        assert engine.search("what did it look like", record=False).hits
    off = engine_factory(embedder="none", search_stop_words="false")
    hits = off.search("What did Zqmira research about zqadoption?", record=False).hits
    assert 3 in [h.start_line for h in hits]  # without the stop list it matched
