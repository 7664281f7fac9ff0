"""The intents table and the pending requests on both backends (issue 23): the same
behaviour on SQLite (state dir) and PostgreSQL (a tenant's rows, tests/pg.py); two
tenants holding the same text never see, change or count each other's rows, a forget
reaches only its own tenant's, and two processes firing one intent at once fire it
once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from conftest import backend_environ, base_env
from reverie import Reverie
from reverie.backends import BACKENDS
from reverie.clock import Clock
from reverie.errors import ReverieError
from reverie.intents.model import Status

BERLIN = ZoneInfo("Europe/Berlin")
START = datetime(2026, 5, 1, 9, 0, tzinfo=BERLIN)
SECRET = "the vault seven passphrase"
Open = Callable[..., Reverie]


def _pg(dsn: str, tenant: str) -> dict[str, str]:
    return {
        "REVERIE_INDEX_BACKEND": "postgres",
        "REVERIE_INDEX_DSN": dsn,
        "REVERIE_INDEX_TENANT": tenant,
    }


def _engine(root: Path, env: dict[str, str], **settings: Any) -> Reverie:
    engine = Reverie.open(
        root / "ws",
        root / "state",
        environ={**base_env(root), **env},
        clock=Clock(START),
        embedder="fake",
        intent_timezone="Europe/Berlin",
        **settings,
    )
    engine.init()
    return engine


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Open]]:
    """How to open an engine (one tenant, ``tenant``) on each backend listed (the
    contract every backend keeps)."""
    engines: list[Reverie] = []

    def make(tenant: str = "a", **settings: Any) -> Reverie:
        env = backend_environ(request, request.param, tenant)
        engines.append(_engine(tmp_path / tenant, env, **settings))
        return engines[-1]

    yield request.param, make
    for engine in engines:
        engine.close()


def at(engine: Reverie, moment: datetime) -> None:
    engine.clock = engine.intents.clock = Clock(moment)


def fired(engine: Reverie, message: str) -> list[str]:
    return [f.intent.id for f in engine.intents.fire_turn(message)]


def _state_files(engine: Reverie) -> set[str]:
    agent = engine.workspace.agent_dir
    return {p.relative_to(agent).as_posix() for p in agent.rglob("*") if p.is_file()}


def test_intents_add_confirm_fire_within_budget_and_cooldown_expire_and_list(
    backend: tuple[str, Open],
) -> None:
    name, make = backend
    engine = make()
    owner = engine.intents.add(
        "ask about the budget", proposer="owner", proposed_by="t", on="budget"
    )
    assert owner.status is Status.ARMED
    assert (
        engine.intents.add("ask about the budget", proposer="owner", proposed_by="t", on="budget")
        == owner
    )
    assert fired(engine, "the budget is due") == [owner.id]
    at(engine, START + timedelta(hours=23))
    assert fired(engine, "the budget again") == []  # inside the 24 h cooldown
    for day in (1, 2):
        at(engine, START + timedelta(days=day))
        assert fired(engine, "the budget again") == [owner.id]
    at(engine, START + timedelta(days=4))
    assert fired(engine, "the budget again") == []  # three firings: its budget is spent
    assert engine.intents.get(owner.id).status is Status.DONE
    assert [c for _, c, _ in engine.intents.store.firings(owner.id)] == ["turn"] * 3

    proposed = engine.intents.add(
        "mention the lease", proposer="agent", proposed_by="mcp", on="lease"
    )
    assert proposed.status is Status.PENDING and fired(engine, "the lease ends") == []
    assert engine.intents.confirm(proposed.id).status is Status.ARMED
    assert fired(engine, "the lease ends") == [proposed.id]
    late = engine.intents.add(
        "ask about the offsite", proposer="owner", proposed_by="t", on="offsite"
    )
    cancelled = engine.intents.add("water the fern", proposer="owner", proposed_by="t", on="fern")
    engine.intents.cancel(cancelled.id)
    with pytest.raises(ReverieError, match="cancelled already"):
        engine.intents.cancel(cancelled.id)
    assert {i.id for i in engine.intents.listing()} == {proposed.id, late.id}
    at(engine, START + timedelta(days=95))
    assert engine.intents.listing() == []  # both expired unused
    statuses = {i.id: i.status for i in engine.intents.listing(all=True)}
    assert statuses == {
        owner.id: Status.DONE,
        proposed.id: Status.EXPIRED,
        late.id: Status.EXPIRED,
        cancelled.id: Status.CANCELLED,
    }
    assert "ask about the offsite" in (engine.workspace.root / "INTENTS.md").read_text()
    engine.index(force=True)  # the table is not the derived index: a rebuild keeps it
    assert {i.id: i.status for i in engine.intents.listing(all=True)} == statuses
    assert ("intents.sqlite" in _state_files(engine)) == (name == "sqlite")


def test_requests_add_decide_and_the_bound(backend: tuple[str, Open]) -> None:
    name, make = backend
    engine = make(pending_max=2)
    (engine.workspace.root / "MEMORY.md").write_text(f"- Keep {SECRET} offline.\n- Tea is green.\n")
    pending = engine.curation.pending
    forget = pending.request("forget", SECRET, by="an agent")
    fix = pending.request("correct", "Tea is green", "Tea is black", by="an agent")
    with pytest.raises(ReverieError, match="2 requests are already waiting"):
        pending.request("forget", "Tea", by="an agent")
    with pytest.raises(ReverieError, match="must change at least one word"):
        pending.request("correct", "Tea", "tea", by="an agent")
    assert [r.id for r in pending.requests()] == [forget.id, fix.id]
    assert pending.reject(fix.id).status == "rejected"
    with pytest.raises(ReverieError, match="already rejected"):
        pending.reject(fix.id)
    again = pending.request("directive", "Answer in French.", by="session:x#1", key="lang")
    assert [(r.kind, r.key) for r in pending.requests()] == [
        ("forget", None),
        ("directive", "lang"),
    ]
    done = pending.confirm(forget.id)
    assert done["request"]["status"] == "confirmed" and done["forget"]["removed_lines"] == 1
    assert SECRET not in (engine.workspace.root / "MEMORY.md").read_text()
    everything = {r.id: (r.status, r.text) for r in pending.requests(all_=True)}
    assert everything[forget.id] == ("confirmed", "(forgotten by the owner)")
    assert everything[fix.id][0] == "rejected" and everything[again.id][0] == "pending"
    assert ("curation/pending.json" in _state_files(engine)) == (name == "sqlite")
    # a link request (two of the owner's lines, named by memory_link) is a kind of its own
    pending.reject(again.id)
    ref = "memory/2026-05-02.md#L3", "memory/2026-05-01.md#L3"
    link = pending.request("link", *ref, by="an agent", key="a@1 b@2", reason="dentist")
    assert [(r.kind, r.text, r.new_text, r.key) for r in pending.requests()] == [
        ("link", *ref, "a@1 b@2")
    ]
    with pytest.raises(ReverieError, match="names two lines"):
        pending.request("link", "not a line", ref[1], by="an agent")
    assert link.reason == "dentist"


def _rows(dsn: str, table: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        got = conn.execute(f"SELECT tenant_id, count(*) FROM {table} GROUP BY 1").fetchall()
    return dict(got)


def _vacuumed(dsn: str, *tables: str) -> bool:
    import psycopg

    with psycopg.connect(dsn) as conn:
        counts = [
            conn.execute(
                "SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = to_regclass(%s)",
                (t,),
            ).fetchone()[0]
            for t in tables
        ]
    return all(n > 0 for n in counts)


def test_two_tenants_with_the_same_text_never_see_change_or_count_each_other(
    tmp_path: Path, pg_dsn: str
) -> None:
    a = _engine(tmp_path / "a", _pg(pg_dsn, "a"), intent_max_armed=1, pending_max=2)
    b = _engine(tmp_path / "b", _pg(pg_dsn, "b"), intent_max_armed=1, pending_max=2)
    try:
        for e in (a, b):
            (e.workspace.root / "MEMORY.md").write_text(f"- Keep {SECRET} offline.\n")
        text = f"when I mention the vault, say {SECRET}"
        mine = a.intents.add(text, proposer="owner", proposed_by="t", on="vault")
        b.intents.add(text, proposer="owner", proposed_by="t", on="vault")
        b.intents.add("ask about the heron", proposer="agent", proposed_by="mcp", on="heron")
        # B holds the live maximum (2 x intent_max_armed): A's count is its own
        proposed = a.intents.add(
            "ask about the falcon", proposer="agent", proposed_by="m", on="falcon"
        )
        with pytest.raises(ReverieError, match="2 live intents"):
            b.intents.add("one more", proposer="agent", proposed_by="mcp", on="more")
        assert {i.id for i in a.intents.listing()} == {mine.id, proposed.id}
        with pytest.raises(ReverieError, match="no intent"):
            b.intents.cancel(mine.id)
        with pytest.raises(ReverieError, match="no intent"):
            b.intents.confirm(proposed.id)
        assert a.intents.get(mine.id).status is Status.ARMED

        a.curation.pending.request("forget", SECRET, by="agent")
        for e in (b, b):
            e.curation.pending.request("forget", SECRET, by="agent")
        with pytest.raises(ReverieError, match="already waiting"):
            b.curation.pending.request("forget", "offline", by="agent")
        (req,) = [r for r in a.curation.pending.requests() if r.kind == "forget"]
        with pytest.raises(ReverieError, match="no pending request"):
            b.curation.pending.reject(req.id)
        assert [r.kind for r in b.curation.pending.requests()] == ["forget", "forget", "intent"]

        fired_b = [f.intent.id for f in b.intents.fire_turn("the vault is open")]
        assert len(fired_b) == 1 and a.intents.get(mine.id).fired == 0

        dry = a.curation.forget(SECRET, dry_run=True)
        assert (dry.stores["intents"], dry.stores["pending_requests"]) == (1, 1)
        assert a.intents.get(mine.id).text == text  # a dry run changes nothing
        report = a.curation.forget(SECRET)  # A's forget: A's intent and requests, never B's
        assert (report.stores["intents"], report.stores["pending_requests"]) == (1, 1)
        assert a.intents.listing(all=True) == [a.intents.get(proposed.id)]
        assert [r.text for r in a.curation.pending.requests(all_=True)] == [
            "(forgotten by the owner)",
            "ask about the falcon",
        ]
        assert {i.text for i in b.intents.listing()} == {text, "ask about the heron"}
        assert all(r.text == SECRET for r in b.curation.pending.requests() if r.kind == "forget")
        assert _rows(pg_dsn, "intents") == {"a": 1, "b": 2}
        assert _rows(pg_dsn, "firings") == {"b": 1}
        assert _rows(pg_dsn, "requests") == {"a": 1, "b": 2}
        assert _vacuumed(pg_dsn, "intents", "firings", "requests")  # no old row version left
        assert SECRET in (b.workspace.root / "MEMORY.md").read_text()
        for e in (a, b):
            assert not {"intents.sqlite", "curation/pending.json"} & _state_files(e)
    finally:
        a.close()
        b.close()


def test_the_postgres_tables_refuse_what_the_sqlite_ones_refuse(pg_dsn: str) -> None:
    import psycopg

    from reverie.backends.postgres.schema import Database

    Database(pg_dsn).close()  # migrated
    row = "'t', 'x', 'event', 'armed', 'text', 'owner', 'me', '2026-05-01'"
    rest = "(tenant_id, id, kind, status, text, origin, proposed_by, created, cooldown_s, budget)"
    bad = (
        f"INSERT INTO intents {rest} VALUES ({row.replace('event', 'mood')}, 1, 1)",
        f"INSERT INTO intents {rest} VALUES ({row.replace('armed', 'sleeping')}, 1, 1)",
        f"INSERT INTO intents {rest} VALUES ({row.replace('owner', 'web')}, 1, 1)",
        "INSERT INTO firings (tenant_id, intent_id, at, channel) VALUES ('t', 'x', 'now', 'turn')",
        "INSERT INTO requests (tenant_id, id, kind, text, at, requested_by) "
        "VALUES ('t', 'r', 'delete', 'x', 'now', 'me')",
    )
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for sql in bad:
            with pytest.raises(psycopg.errors.IntegrityError):
                conn.execute(sql)
        conn.execute(f"INSERT INTO intents {rest} VALUES ({row}, 1, 1)")
        with pytest.raises(psycopg.errors.IntegrityError):  # the key holds the tenant
            conn.execute(f"INSERT INTO intents {rest} VALUES ({row}, 1, 1)")
        other = row.replace("'t'", "'u'", 1)  # the same id, another tenant
        conn.execute(f"INSERT INTO intents {rest} VALUES ({other}, 1, 1)")


def _at_once(calls: list[Callable[[], list[str]]]) -> list[list[str]]:
    """The calls run in threads of their own, released together."""
    start = threading.Barrier(len(calls))
    got: list[list[str]] = []

    def run(call: Callable[[], list[str]]) -> None:
        start.wait()
        got.append(call())

    threads = [threading.Thread(target=run, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_two_processes_firing_one_intent_at_once_fire_it_once(tmp_path: Path, pg_dsn: str) -> None:
    """Two engines of one tenant (two processes' worth: each its own service, armed
    index and pooled connection) fire the same message at the same moment; an intent
    one of them adds fires in the other."""
    one = _engine(tmp_path / "one", _pg(pg_dsn, "t"), intent_budget=1)
    two = _engine(tmp_path / "two", _pg(pg_dsn, "t"), intent_budget=1)
    try:
        for n in range(3):
            for e in (one, two):
                assert fired(e, "nothing here") == []  # each has read the armed intents
            iid = one.intents.add(
                f"remind me of the deploy {n}", proposer="owner", proposed_by="t", on=f"deploy{n}"
            ).id
            msg = f"the deploy{n} is today"
            got = _at_once([lambda e=e, m=msg: fired(e, m) for e in (one, two)])
            assert sorted(got) == [[], [iid]]
            assert len(one.intents.store.firings(iid)) == 1
            assert two.intents.get(iid).status is Status.DONE
        assert fired(one, "nothing here") == []  # its armed index, read now
        late = two.intents.add("bring the cake", proposer="owner", proposed_by="t", on="cake")
        assert fired(one, "the cake is here") == [late.id]  # one's armed index read again
    finally:
        one.close()
        two.close()


def test_a_workspace_switched_to_postgres_keeps_its_intents_and_requests(
    tmp_path: Path, pg_dsn: str
) -> None:
    """Issue 40.7: what the SQLite state held is carried into the tenant once (ids,
    states and dates kept), the local files are renamed, never read again."""
    local = _engine(tmp_path, {})
    armed = local.intents.add(
        "ask about the budget", proposer="owner", proposed_by="t", on="budget"
    )
    wish = local.intents.add(
        "learn Rust", proposer="owner", proposed_by="t", review_by="2026-06-01"
    )
    asked = local.curation.pending.request("forget", SECRET, by="an agent")
    local.close()
    moved = _engine(tmp_path, _pg(pg_dsn, "switched"))
    try:
        listed = {i.id: i.status for i in moved.intents.listing()}
        assert listed == {armed.id: Status.ARMED, wish.id: wish.status}
        assert fired(moved, "the budget is due") == [armed.id]
        assert [(r.id, r.status) for r in moved.curation.pending.requests()] == [
            (asked.id, "pending")
        ]
        files = _state_files(moved)
        assert "intents.sqlite" not in files and "curation/pending.json" not in files
        assert "intents.sqlite.moved-to-postgres" in files
    finally:
        moved.close()
    again = _engine(tmp_path, _pg(pg_dsn, "switched"))  # opened again: nothing doubled
    try:
        assert len(again.intents.listing()) == 2 and len(again.curation.pending.requests()) == 1
    finally:
        again.close()
