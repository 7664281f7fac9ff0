"""What every backend of :data:`reverie.backends.BACKENDS` must do besides its stores'
own suites (``test_recall_log_backends.py``, ``test_intents_requests_postgres.py``, which
run on every backend listed too): say where it is, hold nothing of a fresh agent, hold
what the agent wrote, give it all back to a move (the embedding cache's rows as they
are), tell the doctor what its index holds, and delete all of it. A new backend is one
package and one line in ``INDEX_BACKENDS`` (``reverie.setting_rows.core``: the factory's
table and the ``index_backend`` setting's choices); these tests then run on it (how a
test sets it up: ``backend_environ`` in conftest)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from conftest import backend_environ, base_env
from reverie import Reverie
from reverie.backends import BACKENDS
from reverie.clock import Clock
from reverie.settings import SETTINGS

START = datetime(2026, 5, 1, 9, 0, tzinfo=ZoneInfo("UTC"))


@pytest.fixture(params=sorted(BACKENDS))
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Reverie]:
    environ = {**base_env(tmp_path), **backend_environ(request, request.param, "t1")}
    made = Reverie.open(
        tmp_path / "ws", tmp_path / "st", environ=environ, clock=Clock(START), embedder="fake"
    )
    made.init()
    yield made
    made.close()


def test_the_setting_names_every_backend_the_factory_makes() -> None:
    [row] = [s for s in SETTINGS if s.name == "index_backend"]
    assert row.choices == tuple(BACKENDS)  # one table: a backend is added in one line
    assert row.default in BACKENDS


def test_a_backend_holds_what_the_agent_wrote_and_drops_all_of_it(engine: Reverie) -> None:
    backend = engine._a.backend  # (the seam under test: no door reaches it)
    assert backend.name == engine.settings.index_backend and backend.describe()
    assert backend.held() == []  # a fresh agent
    (engine.workspace.root / "memory" / "2026-04-30.md").write_text(
        "# 2026-04-30\n\n- 10:00 owner: The ferry to Mull leaves at 07:15.\n", encoding="utf-8"
    )
    engine.index()
    assert engine.search("ferry Mull", record=True).hits
    engine.intents.add("ask about the ferry", proposer="owner", proposed_by="t", on="ferry")
    engine.curation.pending.request("forget", "ferry to Mull", by="an agent")
    assert backend.held()  # its recall log, intents and requests
    engine._a.close()
    assert backend.drop() and backend.held() == []
    again = engine._a.backend
    assert again.requests(engine.clock.now, 10).load() == []
    store = again.intent_store()
    assert store.select() == []
    store.close()


def test_the_doctor_reads_what_the_backend_indexed(engine: Reverie) -> None:
    """``reverie doctor`` asks the backend what its index holds (``look``): the files
    and their sizes, the embedder; a stale file is named; an unusable index has a hint."""
    from reverie.integrations.doctor_index import findings

    backend = engine._a.backend
    day = engine.workspace.root / "memory" / "2026-04-30.md"
    day.write_text("# 2026-04-30\n\n- 10:00 owner: The ferry leaves at 07:15.\n", encoding="utf-8")
    engine.index()
    seen = backend.look()
    assert seen.sources["memory/2026-04-30.md"][0] == day.stat().st_size
    assert seen.embedder and not seen.dirty and backend.rebuild_hint()
    assert [f[0] for f in findings(engine.workspace, engine.settings)] == ["ok"]
    day.write_text(day.read_text(encoding="utf-8") + "- 11:00 owner: It is late.\n", "utf-8")
    [(status, message, _fix)] = findings(engine.workspace, engine.settings)
    assert status == "warn" and "memory/2026-04-30.md" in message


def test_the_embedding_cache_gives_back_its_rows_as_they_are(engine: Reverie) -> None:
    cache = engine._a.port.cache
    identity = engine.embedder.identity  # type: ignore[union-attr]
    vec = np.arange(identity.dims, dtype=np.float32) / identity.dims
    cache.put_many(identity, {"h1": vec})
    [row] = [r for r in cache.export() if r[3] == "h1"]
    cache.adopt([(*row[:3], "h2", row[4], row[5])])
    got = cache.get_many(identity, ["h1", "h2"])
    assert set(got) == {"h1", "h2"} and np.array_equal(got["h2"], vec)
    cache.adopt([row])  # a row already there is kept, not doubled
    assert sum(1 for r in cache.export() if r[3] == "h1") == 1
