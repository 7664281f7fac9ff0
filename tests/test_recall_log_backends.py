"""The recall log on both backends (R-RECALL-5, issue 23): SQLite's ``recall.sqlite``
and the tenant's rows of PostgreSQL (a real server: tests/pg.py) record, bound,
aggregate and forget alike; two tenants holding the same text never count in each
other's log; with ``index_backend = "postgres"`` the engine, dreaming and forget use
the database's log and nothing of it goes to the state dir."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_NOW, adapters, backend_environ, base_env, plant
from reverie import Reverie
from reverie.backends import BACKENDS, backend_for
from reverie.backends.sqlite.recall_log import RecallLog
from reverie.clock import Clock
from reverie.provenance.origin import Origin, SessionKind
from reverie.provenance.paths import SourceKind
from reverie.recall import log as recall_log
from reverie.recall.evidence import MAX_CONCEPT_TAGS, MAX_SNIPPET_CHARS
from reverie.recall.log import RecallHit
from reverie.recall.log_port import RecallLogPort
from reverie.settings import load_settings
from reverie.storage.workspace import Workspace

NOW = datetime.fromisoformat(FIXED_NOW)
JOURNAL = "memory/2026-04-27.md"
TOPICS = (
    "kafka broker ports firewall rules datacenter routing tables backup schedule "
    "espresso grinder calibration heron falcon zebra orchid"
)


def hit(line: int, score: float = 0.5, snippet: str = "", **kw: Any) -> RecallHit:
    text = snippet or f"- 10:0{line % 10} The kafka broker {line} listens on port 9092."
    fields: dict[str, Any] = {"origin": Origin.OWNER, "kind": SourceKind.JOURNAL, **kw}
    return RecallHit(JOURNAL, line, line, score, text, **fields)


def _pg_log(dsn: str, tenant: str = "alice") -> RecallLogPort:
    from reverie.backends.postgres.recall_log import PgRecallLog
    from reverie.backends.postgres.schema import shared

    return PgRecallLog(shared(dsn), tenant)


@pytest.fixture(params=sorted(BACKENDS))
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RecallLogPort]:
    """The recall log of every backend listed (the contract each must keep)."""
    environ = {**base_env(tmp_path), **backend_environ(request, request.param, "alice")}
    settings = load_settings(
        {"workspace": str(tmp_path / "ws"), "state_dir": str(tmp_path / "st")}, environ=environ
    )
    made = backend_for(settings, Workspace(tmp_path / "ws", tmp_path / "st")).recall_log()
    assert made.backend == request.param
    yield made
    made.close()


def script(log: RecallLogPort) -> None:
    """Searches over six days: two keys recalled by six queries, a curated hit (never
    recorded), an untrusted one, a session transcript's, one with no concept tag."""
    for day in range(6):
        now = NOW + timedelta(days=day, hours=day)
        log.record(f"kafka broker port {day}", [hit(3, 0.25 + day / 20), hit(5, 0.7)], now=now)
    log.record(
        "espresso grinder",
        [
            hit(9, 0.6, "- The espresso grinder is set to 14.", origin=Origin.UNTRUSTED),
            hit(1, 0.9, kind=SourceKind.CURATED),
            hit(7, 0.4, session_kind=SessionKind.INTERACTIVE, kind=SourceKind.TRANSCRIPT),
            hit(8, 0.3, "- 12:00 ok", observed=(NOW - timedelta(days=3)).date()),  # no tags
        ],
        now=NOW,
    )


def test_both_backends_aggregate_the_same_searches_alike(tmp_path: Path, pg_dsn: str) -> None:
    lite, pg = RecallLog(tmp_path / "recall.sqlite"), _pg_log(pg_dsn)
    for each in (lite, pg):
        script(each)
    assert pg.stats() == lite.stats()  # every field, in the same (first recalled) order
    assert [s.key for s in lite.stats()] == [f"{JOURNAL}:{n}:{n}" for n in (3, 5, 9, 7, 8)]
    assert lite.stats()[-1].concept_tags == () and lite.stats()[-1].observed
    wanted = [f"{JOURNAL}:9:9", f"{JOURNAL}:404:404"]
    assert pg.stats(wanted) == lite.stats(wanted) != []
    assert pg.count_events() == lite.count_events() == 15
    lite.close()


def test_a_key_keeps_its_bounds(log: RecallLogPort) -> None:
    long = "- " + " ".join(f"{w}{i}" for i in range(60) for w in TOPICS.split()[:3])
    for i in range(40):  # 40 queries over 20 days
        log.record(f"query {i}", [hit(3, i / 40, long)], now=NOW + timedelta(days=i // 2))
    (s,) = log.stats()
    assert s.recall_count == 40 and s.max_score == 39 / 40
    assert s.total_score == pytest.approx(sum(i / 40 for i in range(40)))
    assert s.query_hashes == {recall_log.query_hash(f"query {i}") for i in range(8, 40)}
    assert s.recall_days == {(NOW + timedelta(days=d)).date() for d in range(4, 20)}
    assert len(s.concept_tags) <= MAX_CONCEPT_TAGS and s.concept_tags
    assert s.snippet == long[:MAX_SNIPPET_CHARS] and len(long) > MAX_SNIPPET_CHARS
    assert s.first_recalled == NOW and s.last_recalled == NOW + timedelta(days=19)
    assert log.record("the same query again", [hit(3, 0.1, long)], now=NOW) == 1
    assert log.record("only curated", [hit(1, kind=SourceKind.CURATED)], now=NOW) == 0


def test_at_most_max_events_are_kept_the_oldest_dropped_first(
    log: RecallLogPort, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_log, "MAX_EVENTS", 5)
    for i in range(8):
        log.record(f"q{i}", [hit(i)], now=NOW)
    assert log.count_events() == 5
    assert log.drop(lambda key, _s: key == f"{JOURNAL}:7:7") == [f"{JOURNAL}:7:7"]
    assert log.count_events() == 4  # its event was kept
    assert log.drop(lambda key, _s: key == f"{JOURNAL}:0:0") == [f"{JOURNAL}:0:0"]
    assert log.count_events() == 4  # its event was the oldest: gone already
    for i in range(3):
        log.record(f"r{i}", [hit(20 + i)], now=NOW)
    assert log.count_events() == 5  # the drops left room that is used again
    assert len(log.stats()) == 9  # the aggregates are never trimmed


def test_drop_removes_the_matching_rows_and_their_events_only(log: RecallLogPort) -> None:
    script(log)
    before = log.stats()
    grinder = lambda _key, snippet: "grinder" in snippet  # noqa: E731
    assert log.drop(grinder, dry_run=True) == [f"{JOURNAL}:9:9"]
    assert log.stats() == before and log.count_events() == 15
    assert log.drop(grinder) == [f"{JOURNAL}:9:9"]
    assert [s.key for s in log.stats()] == [f"{JOURNAL}:{n}:{n}" for n in (3, 5, 7, 8)]
    assert log.count_events() == 14
    assert all("grinder" not in s.snippet for s in log.stats())
    assert log.drop(grinder) == []
    assert log.scrub()


def test_concurrent_searches_never_lose_an_event(log: RecallLogPort) -> None:
    def searches(n: int) -> None:
        for i in range(6):
            log.record(f"thread {n} query {i}", [hit(3), hit(4 + n % 2)], now=NOW)

    threads = [threading.Thread(target=searches, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = {s.key: s.recall_count for s in log.stats()}
    assert counts == {f"{JOURNAL}:3:3": 36, f"{JOURNAL}:4:4": 18, f"{JOURNAL}:5:5": 18}
    assert log.count_events() == 72
    (three,) = log.stats([f"{JOURNAL}:3:3"])
    assert len(three.query_hashes) == 32  # bounded while written concurrently


@pytest.mark.parametrize("bound", [None, 12])  # 12: every search also drops old events
def test_a_forget_while_searches_record_never_deadlocks_or_leaves_a_stray_event(
    log: RecallLogPort, monkeypatch: pytest.MonkeyPatch, bound: int | None
) -> None:
    if bound:
        monkeypatch.setattr(recall_log, "MAX_EVENTS", bound)
    log.record("first", [hit(9), hit(5), hit(3)], now=NOW)  # first recalled: 9, 5, 3
    errors: list[BaseException] = []

    def searches(n: int) -> None:
        try:
            for i in range(8):
                log.record(f"thread {n} query {i}", [hit(9), hit(5), hit(3)], now=NOW)
        except BaseException as exc:  # a deadlock aborts one transaction: recorded here
            errors.append(exc)

    threads = [threading.Thread(target=searches, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    dropped = 0
    for _ in range(6):
        dropped += len(log.drop(lambda key, _s: key == f"{JOURNAL}:5:5"))
    for t in threads:
        t.join()
    assert errors == [] and dropped >= 1
    if bound:
        # never past the bound; a drop that came last took its key's events out, so
        # the log may hold fewer until the next searches fill it to the bound again
        assert log.count_events() <= bound
        for i in range(bound // 3):  # each search records three events
            log.record(f"after {i}", [hit(9), hit(5), hit(3)], now=NOW)
        assert log.count_events() == bound
        return
    counts = {s.key: s.recall_count for s in log.stats()}
    assert counts[f"{JOURNAL}:9:9"] == counts[f"{JOURNAL}:3:3"] == 33
    assert log.count_events() == sum(counts.values())  # every event has its row, and back


def test_two_tenants_with_the_same_text_count_and_forget_apart(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _pg_log(pg_dsn, "a"), _pg_log(pg_dsn, "b")
    monkeypatch.setattr(recall_log, "MAX_EVENTS", 4)
    for i in range(3):
        a.record(f"kafka {i}", [hit(3)], now=NOW)
    assert b.stats() == [] and b.count_events() == 0  # A's searches never count in B's
    b.record("kafka", [hit(3), hit(5)], now=NOW)
    for i in range(3):
        a.record(f"more {i}", [hit(6)], now=NOW)  # A's trim keeps B's events
    assert a.count_events() == 4 and b.count_events() == 2
    assert [s.recall_count for s in a.stats()] == [3, 3]
    assert [s.recall_count for s in b.stats()] == [1, 1]
    assert a.drop(lambda _k, snippet: "kafka" in snippet) == [f"{JOURNAL}:3:3", f"{JOURNAL}:6:6"]
    assert a.stats() == [] and a.count_events() == 0
    assert [s.key for s in b.stats()] == [f"{JOURNAL}:3:3", f"{JOURNAL}:5:5"]
    assert b.count_events() == 2


# -- the engine on PostgreSQL ---------------------------------------------------------------

FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
QUERIES = (
    "staging database host orca-db-2 Frankfurt region",
    "which host does the staging database live on",
    "staging database in the Frankfurt region",
)


def _engine(root: Path, dsn: str, tenant: str, days: int = 0) -> Reverie:
    env = {
        **base_env(root),
        "REVERIE_INDEX_BACKEND": "postgres",
        "REVERIE_INDEX_DSN": dsn,
        "REVERIE_INDEX_TENANT": tenant,
    }
    clock = Clock(NOW + timedelta(days=days))
    return Reverie.open(root / "ws", root / "state", environ=env, embedder="fake", clock=clock)


def _tenant(root: Path, dsn: str, tenant: str) -> None:
    """A workspace whose journal of four days ago holds the fact, indexed."""
    e = _engine(root, dsn, tenant, -4)
    e.init()
    plant(e, "Lunch was a sandwich again.", origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    e.index()
    e.close()


def _rows(dsn: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, params).fetchall()


def test_on_postgres_searches_dreaming_and_forget_use_the_tenants_rows(
    tmp_path: Path, pg_dsn: str
) -> None:
    for tenant in ("a", "b"):
        _tenant(tmp_path / tenant, pg_dsn, tenant)
    for day in (-3, -2, -1):  # only A's agent searches
        e = _engine(tmp_path / "a", pg_dsn, "a", day)
        for q in QUERIES:
            assert any(FACT in h.text for h in e.search(q).hits), q
        e.close()
    a, b = _engine(tmp_path / "a", pg_dsn, "a"), _engine(tmp_path / "b", pg_dsn, "b")
    try:
        assert a.status()["recall_log"] == "postgres"
        assert adapters(a).recall_log.backend == "postgres"
        (fact,) = [s for s in adapters(a).recall_log.stats() if FACT in s.snippet]
        assert fact.recall_count == 9 and len(fact.query_hashes) == 3
        assert adapters(b).recall_log.stats() == []  # B holds the same text, never searched
        preview = b.dream(dry_run=True)
        assert preview.promoted == []  # B's dream has no evidence: A's searches are A's
        report = a.dream()  # A's promotion evidence comes from the database
        assert report.promoted == [fact.key]
        assert FACT in (tmp_path / "a" / "ws" / "MEMORY.md").read_text(encoding="utf-8")
        b.search(QUERIES[0])  # B's own search: B's own row
        assert [s.recall_count for s in adapters(b).recall_log.stats() if FACT in s.snippet] == [1]

        a.curation.forget("orca-db-2")
        held = "SELECT tenant_id, count(*) FROM {} WHERE {} GROUP BY 1 ORDER BY 1"
        store = _rows(pg_dsn, held.format("recall_store", "snippet LIKE %s"), "%orca-db-2%")
        events = _rows(pg_dsn, held.format("recall_events", "key = %s"), fact.key)
        assert store == [("b", 1)] and events == [("b", 1)]  # A's rows gone, B's kept
        for root in (tmp_path / "a", tmp_path / "b"):
            assert not list((root / "state").rglob("recall.sqlite*"))  # none in the state dir
    finally:
        a.close()
        b.close()


def test_a_dry_run_forget_on_postgres_reports_the_signals_and_keeps_them(
    tmp_path: Path, pg_dsn: str
) -> None:
    _tenant(tmp_path, pg_dsn, "c")
    e = _engine(tmp_path, pg_dsn, "c")
    try:
        e.search(QUERIES[0])
        keys = [s.key for s in adapters(e).recall_log.stats() if FACT in s.snippet]
        assert keys
        assert e.curation.forget("orca-db-2", dry_run=True).recall_signals == keys
        assert [s.key for s in adapters(e).recall_log.stats() if FACT in s.snippet] == keys
    finally:
        e.close()
