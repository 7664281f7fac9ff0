"""``reverie backend move`` (issue 44, point 3): an agent's memory carried from SQLite to
PostgreSQL and back, every store counted on both sides, the config file set, the old
copies deleted; a target that already holds the agent, or a dry run, changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from conftest import base_env
from reverie import Reverie
from reverie.clock import Clock
from reverie.errors import ReverieError

BERLIN = ZoneInfo("Europe/Berlin")
START = datetime(2026, 5, 1, 9, 0, tzinfo=BERLIN)
JOURNAL = (
    "# 2026-04-28\n\n- 10:00 owner: The boiler service is booked with Hendry & Sons.\n"
    "- 10:05 owner: Priya's new flat is on Calder Road.\n"
    "- 10:09 owner: 周末去杭州看外婆。\n"
)


def _open(root: Path, **settings: Any) -> Reverie:
    env = base_env(root)
    env["REVERIE_CONFIG"] = str(root / "config.toml")
    return Reverie.open(
        root / "ws", root / "state", environ=env, clock=Clock(START), embedder="fake", **settings
    )


def _memory(engine: Reverie) -> dict[str, Any]:
    """What a user of the agent sees of every store."""
    intents = engine.intents
    hits = engine.search("boiler service Priya flat", record=False).hits
    return {
        "hits": [(h.path, h.start_line, h.text) for h in hits],
        "intents": sorted((i.id, i.status.value, i.text) for i in intents.listing(all=True)),
        "firings": {
            i.id: [c for _, c, _ in intents.store.firings(i.id)] for i in intents.listing(all=True)
        },
        "requests": sorted(
            (r.id, r.kind, r.status, r.text) for r in engine.curation.pending.requests(all_=True)
        ),
        "recall": sorted(
            (s.key, s.recall_count, sorted(s.query_hashes)) for s in engine._a.recall_log.stats()
        ),
    }


def _fill(root: Path) -> dict[str, Any]:
    engine = _open(root)
    engine.init()
    (root / "ws" / "memory" / "2026-04-28.md").write_text(JOURNAL, encoding="utf-8")
    engine.index()
    engine.search("when is the boiler service")
    engine.search("where does Priya live now")
    armed = engine.intents.add(
        "ask about the boiler", proposer="owner", proposed_by="t", on="boiler"
    )
    assert [f.intent.id for f in engine.intents.fire_turn("the boiler is noisy")] == [armed.id]
    engine.intents.add("mention the lease", proposer="agent", proposed_by="mcp", on="lease")
    engine.curation.pending.request("forget", "Calder Road", by="an agent")
    seen = _memory(engine)
    engine.close()
    return seen


def test_a_move_to_postgres_and_back_keeps_every_store(tmp_path: Path, pg_dsn: str) -> None:
    seen = _fill(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text("# my settings\nsearch_max_results = 6\n", encoding="utf-8")
    state = tmp_path / "state" / "main"
    assert (state / "index.sqlite").exists() and (state / "recall.sqlite").exists()

    report = _open(tmp_path).move_backend("postgres", dsn=pg_dsn, config=config)
    assert report.target.startswith("postgres") and report.source == "sqlite"
    assert report.counts["intents"] == [2, 2] and report.counts["firings"] == [1, 1]
    assert report.counts["requests"][0] >= 1 and report.counts["recall events"][0] > 0
    assert all(a == b for k, (a, b) in report.counts.items() if k != "cached embeddings")
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# my settings")  # the file's own lines are kept
    assert tomllib.loads(text) == {
        "search_max_results": 6,
        "index_backend": "postgres",
        "index_dsn": pg_dsn,
    }
    for name in ("index.sqlite", "recall.sqlite", "intents.sqlite", "index.warm"):
        assert not (state / name).exists(), name
    assert not (state / "curation" / "pending.json").exists()

    on_pg = _open(tmp_path)  # the config file now says postgres
    assert on_pg.settings.index_backend == "postgres"
    assert _memory(on_pg) == seen
    on_pg.close()

    back = _open(tmp_path).move_backend("sqlite", config=config)
    assert back.source.startswith("postgres") and back.removed
    assert tomllib.loads(config.read_text(encoding="utf-8"))["index_backend"] == "sqlite"
    from reverie.backends.postgres.schema import shared
    from reverie.backends.postgres.tenant import tenant_rows

    assert tenant_rows(shared(pg_dsn), "main") == 0  # no copy left in the database
    on_sqlite = _open(tmp_path)
    assert _memory(on_sqlite) == seen
    on_sqlite.close()


def test_a_target_that_holds_the_agent_or_a_dry_run_changes_nothing(
    tmp_path: Path, pg_dsn: str
) -> None:
    seen = _fill(tmp_path)
    config = tmp_path / "config.toml"
    dry = _open(tmp_path).move_backend("postgres", dsn=pg_dsn, config=config, dry_run=True)
    assert dry.dry_run and dry.counts["intents"] == [2, 0] and not config.exists()
    other = tmp_path / "other"
    squatter = _open(other, index_backend="postgres", index_dsn=pg_dsn)  # same tenant "main"
    squatter.init()
    squatter.index()
    squatter.close()
    with pytest.raises(ReverieError, match="already holds this agent's memory"):
        _open(tmp_path).move_backend("postgres", dsn=pg_dsn, config=config)
    assert not config.exists()
    assert _memory(_open(tmp_path)) == seen
    with pytest.raises(ReverieError, match="on sqlite already"):
        _open(tmp_path).move_backend("sqlite", config=config)


def test_the_cli_moves_and_says_what_it_counted(tmp_path: Path, pg_dsn: str) -> None:
    _fill(tmp_path)
    env = base_env(tmp_path)
    env["REVERIE_CONFIG"] = str(tmp_path / "config.toml")
    cmd = [sys.executable, "-m", "reverie.cli", "--workspace", str(tmp_path / "ws")]
    cmd += ["--state-dir", str(tmp_path / "state"), "--embedder", "fake", "backend", "move"]
    out = subprocess.run(
        [*cmd, "--to", "postgres", "--dsn", pg_dsn, "--json"],
        env=env, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    data = json.loads(out.stdout)
    assert data["counts"]["intents"] == [2, 2] and data["config"] == env["REVERIE_CONFIG"]
    env["REVERIE_INDEX_BACKEND"] = "postgres"  # the environment overrides the config file
    plain = subprocess.run(
        [*cmd, "--to", "sqlite"], env=env, capture_output=True, text=True, timeout=300
    )
    assert plain.returncode == 0, plain.stderr
    assert "moved from postgres" in plain.stdout
    assert "REVERIE_INDEX_BACKEND" in plain.stdout  # told to change what overrides the file


def test_counts_that_differ_empty_the_target_and_keep_the_source(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _fill(tmp_path)
    config = tmp_path / "config.toml"
    from reverie.backends.postgres.requests import PgRequests

    monkeypatch.setattr(PgRequests, "adopt", lambda self, items: 0)  # a store that loses rows
    with pytest.raises(ReverieError, match=r"counts differ .*requests 1 -> 0"):
        _open(tmp_path).move_backend("postgres", dsn=pg_dsn, config=config)
    from reverie.backends.postgres.schema import shared
    from reverie.backends.postgres.tenant import tenant_rows

    assert tenant_rows(shared(pg_dsn), "main") == 0
    assert not config.exists()
    engine = _open(tmp_path)
    assert _memory(engine) == seen
    engine.close()
