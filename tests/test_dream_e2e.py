"""Dreaming end to end (SPEC section 4, R-DREAM-1..11): what a user sees on disk.

A durable fact is written to a journal, found by an agent's searches on several days,
and the nightly dream promotes it into MEMORY.md with its source anchor and trailers,
logs a summary in DREAMS.md, keeps a pre-image and re-indexes, so the new entry is
searchable at once. Dreaming again promotes nothing new. ``dream off`` means no
dreaming state at all; ``preview`` and ``rem`` are read-only; with no model configured
dreaming still promotes, append-only.

Days: the journal is written four days before ``FIXED_NOW`` (the CLI's clock), the
fact is searched on the three days after, and the dream runs on ``FIXED_NOW``.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_NOW, Paths, RunCli, adapters, plant
from reverie.clock import Clock
from reverie.dreaming.memory_file import render_entry
from reverie.dreaming.signals import promoted_importance
from reverie.engine import Reverie
from reverie.provenance.frames import GENERATED_BEGIN, GENERATED_END
from reverie.provenance.origin import Origin, SessionKind
from reverie.testing import scripted_judge

NOW = datetime.fromisoformat(FIXED_NOW)
JOURNAL_DAY = NOW - timedelta(days=4)
JOURNAL = f"memory/{JOURNAL_DAY.date().isoformat()}.md"
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
FILLER = "Lunch was a sandwich again, nothing worth keeping."
QUERIES = (
    "staging database host orca-db-2 Frankfurt region",
    "which host does the staging database live on",
    "staging database in the Frankfurt region",
)
ENTRY_RE = re.compile(
    r"^- (?P<text>.+?) Source: (?P<anchor>\S+#L\d+-L\d+)"
    r" <!-- trigger: (?P<triggers>[^>]+?) --> <!-- importance: (?P<importance>\d+) -->$"
)

Open = Callable[..., Reverie]

KEEP = scripted_judge(keep_all=True)


@pytest.fixture
def open_at(paths: Paths, env: dict[str, str]) -> Any:
    """``open_at(days_from_now, **settings)``: an engine whose clock is that day."""
    engines: list[Reverie] = []

    def make(days: float = 0, **flags: Any) -> Reverie:
        flags.setdefault("embedder", "fake")
        flags.setdefault("judge", KEEP)  # the pipeline; the shipped judge: judge=None
        e = Reverie.open(
            paths.workspace,
            paths.state,
            environ=env,
            clock=Clock(NOW + timedelta(days=days)),
            **flags,
        )
        engines.append(e)
        return e

    yield make
    for e in engines:
        e.close()


def write_fact(open_at: Open, origin: Origin = Origin.OWNER) -> int:
    """Init, journal the filler and the fact four days ago, index; the fact's line."""
    e = open_at(-4)
    e.init()
    plant(e, FILLER, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    appended = plant(e, FACT, origin=origin, session=SessionKind.INTERACTIVE)
    assert appended is not None
    e.index()
    e.close()
    return appended.first_line


def farm(
    open_at: Open, queries: tuple[str, ...] = QUERIES, days: tuple[int, ...] = (-3, -2, -1)
) -> None:
    """The agent searches: every query once on each day (recorded, as agent calls are)."""
    for day in days:
        e = open_at(day)
        for q in queries:
            assert any(h.path == JOURNAL for h in e.search(q).hits), q
        e.close()


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its hash, minus SQLite's WAL/SHM side files and
    lock files (readers create those; they hold no state)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.endswith(("-wal", "-shm", ".lock")):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def recall_rows(paths: Paths) -> int:
    """Recall events on disk, read without the engine (which would create the store)."""
    db = paths.state / "main" / "recall.sqlite"
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM recall_events").fetchone()[0])
    finally:
        conn.close()


# -- promotion ----------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [Origin.OWNER, Origin.AGENT])
def test_a_durable_fact_is_promoted_with_anchor_trailers_summary_and_preimage(
    paths: Paths, open_at: Open, origin: Origin
) -> None:
    line = write_fact(open_at, origin)
    farm(open_at)
    old_memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")

    e = open_at(0, judge=None)  # the shipped judge
    report = e.dream()

    key = f"{JOURNAL}:{line}:{line}"
    assert report.promoted == [key]
    assert report.mode == "append-only"  # no model configured (the default)
    cand = next(c for c in report.candidates if c.key == key)
    assert cand.decision == "promote" and cand.score >= 0.75

    memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert memory.startswith(old_memory.rstrip("\n"))  # the person's text is untouched
    promoted = [m for m in map(ENTRY_RE.match, memory.splitlines()) if m]
    assert len(promoted) == 1
    entry = promoted[0]
    day = JOURNAL.removeprefix("memory/").removesuffix(".md")
    # no list marker, no HH:MM stamp; who said it (the line names no speaker); the day said
    assert entry["text"] == f"{'Owner' if origin is Origin.OWNER else 'Agent'}: {FACT} ({day})"
    assert entry["anchor"] == f"{JOURNAL}#L{line}-L{line}"
    assert int(entry["importance"]) == promoted_importance(cand.score)
    assert 1 <= len([t for t in re.split("[,;]", entry["triggers"]) if t.strip()]) <= 3
    assert FILLER not in memory

    dreams = (paths.workspace / "DREAMS.md").read_text(encoding="utf-8")
    assert "append-only" in dreams and "added 1" in dreams and FACT in dreams

    images = e.preimages()
    assert len(images) == 1
    assert images[0].read_text(encoding="utf-8") == old_memory

    hits = e.search("orca-db-2 staging database host", record=False).hits
    assert any(h.path == "MEMORY.md" and h.kind == "curated" for h in hits), "index not re-synced"

    # The same inputs again: nothing new, MEMORY.md byte for byte the same.
    before = (paths.workspace / "MEMORY.md").read_bytes()
    again = open_at(0).dream()
    assert again.promoted == []
    assert (paths.workspace / "MEMORY.md").read_bytes() == before
    # an already-promoted line never takes a place in the candidate pool
    assert all(c.key != key for c in again.candidates)
    assert {"key": key, "reason": "already promoted to MEMORY.md"} in again.dropped
    assert len(open_at(0).preimages()) == 1


def test_a_fact_recalled_too_little_is_not_promoted(paths: Paths, open_at: Open) -> None:
    """One query on one day: every gate is shown, MEMORY.md stays as it was."""
    write_fact(open_at)
    farm(open_at, QUERIES[:1], (-1,))
    before = (paths.workspace / "MEMORY.md").read_bytes()
    report = open_at(0).dream()
    assert report.promoted == [] and report.mode == "none"
    (cand,) = report.candidates
    failed = {g["name"] for g in cand.gates if not g["passed"]}
    assert {"min_recalls", "min_queries"} <= failed
    assert (paths.workspace / "MEMORY.md").read_bytes() == before


def test_recall_is_credited_to_the_matching_line_of_a_long_chunk(
    paths: Paths, open_at: Open
) -> None:
    e = open_at(-4)
    e.init()
    for i in range(20):
        plant(
            e,
            f"Routine note number {i} about the weekly grocery list and errands.",
            origin=Origin.OWNER,
            session=SessionKind.INTERACTIVE,
        )
    appended = plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    assert appended is not None
    e.index()
    hits = e.search(QUERIES[0]).hits
    assert hits and hits[0].path == JOURNAL and hits[0].end_line >= appended.first_line
    keys = [s.key for s in adapters(e).recall_log.stats()]
    assert keys == [f"{JOURNAL}:{appended.first_line}:{appended.first_line}"]


# -- no model -----------------------------------------------------------------------------


def test_no_model_configured_means_append_only(paths: Paths, open_at: Open, cli_json: Any) -> None:
    """R-DREAM-11: with ``llm = none`` dreaming still runs and promotes, append-only."""
    line = write_fact(open_at)
    farm(open_at)
    preview = open_at(0, llm="none").dream(dry_run=True)
    assert preview.promoted == [f"{JOURNAL}:{line}:{line}"]
    data = cli_json("dream", "run", env={"REVERIE_LLM": "none"})
    assert data["mode"] == "append-only"
    assert data["promoted"] == [f"{JOURNAL}:{line}:{line}"]
    assert "no model configured" in data["fallback_reason"]
    assert f"Source: {JOURNAL}#L{line}-L{line}" in (paths.workspace / "MEMORY.md").read_text()
    assert "no model configured" in (paths.workspace / "DREAMS.md").read_text()


# -- human control ------------------------------------------------------------------------


def test_dream_off_writes_no_dreaming_state_and_on_resumes(
    paths: Paths, open_at: Open, run_cli: RunCli, cli_json: Any
) -> None:
    line = write_fact(open_at)
    assert cli_json("dream", "off") == {"enabled": False}
    ws_before = tree(paths.workspace)
    state_before = tree(paths.state)

    farm(open_at)  # agent searches (recorded calls) while dreaming is off
    run_cli("search", "--record", QUERIES[0])
    report = cli_json("dream", "run")
    assert report["enabled"] is False and report["promoted"] == []
    status = cli_json("dream", "status")
    assert status["enabled"] is False and status["last_run"] is None

    assert recall_rows(paths) == 0
    assert not (paths.state / "main" / "dreams" / "state.json").exists()
    assert not (paths.workspace / "memory" / ".dreams" / "reports").exists()
    assert not (paths.state / "main" / "preimages").exists()
    assert tree(paths.workspace) == ws_before
    added = set(tree(paths.state)) - set(state_before)
    assert not [p for p in added if "recall" in p or "dream" in p or "preimage" in p], added

    assert cli_json("dream", "on") == {"enabled": True}
    farm(open_at)
    assert recall_rows(paths) == 3 * len(QUERIES)
    report = cli_json("dream", "run")
    assert report["promoted"] == [f"{JOURNAL}:{line}:{line}"]
    assert (paths.state / "main" / "dreams" / "state.json").exists()
    assert cli_json("dream", "status")["last_run"] == report["at"]


def test_preview_and_rem_write_nothing(
    paths: Paths, open_at: Open, run_cli: RunCli, cli_json: Any
) -> None:
    line = write_fact(open_at)
    farm(open_at)
    ws_before, state_before, rows = tree(paths.workspace), tree(paths.state), recall_rows(paths)

    preview = cli_json("dream", "preview")
    assert preview["dry_run"] is True
    assert preview["promoted"] == [f"{JOURNAL}:{line}:{line}"]
    cand = next(c for c in preview["candidates"] if c["key"] == f"{JOURNAL}:{line}:{line}")
    assert cand["decision"] == "promote" and {g["name"] for g in cand["gates"]} >= {
        "provenance",
        "min_recalls",
        "min_queries",
        "min_score",
    }
    rem = cli_json("dream", "rem")
    assert {c["key"] for c in rem["candidates"]} == {c["key"] for c in preview["candidates"]}
    explained = cli_json("dream", "explain", f"{JOURNAL}#L{line}-L{line}")
    assert explained["decision"] == "promote"
    [said] = explained["judgement"]  # the classifier's view, with the labelled lines nearest
    assert said["label"] in ("fact", "pref") and said["keep"] >= 0.5 and len(said["nearest"]) == 3
    assert open_at(0).dream(dry_run=True).promoted == preview["promoted"]

    assert tree(paths.workspace) == ws_before
    # (the durable-line judge's embedder may leave its ready snapshot: a cache)
    assert {k: v for k, v in tree(paths.state).items() if not k.startswith("models/")} == {
        k: v for k, v in state_before.items() if not k.startswith("models/")
    }
    assert recall_rows(paths) == rows
    assert "Source:" not in (paths.workspace / "MEMORY.md").read_text()


def test_rem_shows_recurring_themes(paths: Paths, open_at: Open, cli_json: Any) -> None:
    """Three notes about the API gateway, each recalled: REM reports an 'api gateway'
    theme (a multi-word concept, issue 14) with a reflection, read-only (MEMORY.md
    untouched)."""
    e = open_at(-2)
    e.init()
    notes = (
        "The API gateway listens on port 8443 behind the office firewall.",
        "Restart the API gateway after rotating the TLS certificates.",
        "The API gateway logs rotate weekly and are kept for ninety days.",
    )
    for n in notes:
        plant(e, n, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    e.index()
    e.close()
    e = open_at(-1)
    for q in ("api gateway port firewall", "restart api gateway", "api gateway logs rotate"):
        e.search(q)
    e.close()
    memory = (paths.workspace / "MEMORY.md").read_bytes()
    rem = open_at(0).dream(dry_run=True)  # (every sentence kept: the themes, not the judge)
    themes = {t["tag"]: t for t in rem.themes}
    assert "api gateway" in themes and len(themes["api gateway"]["keys"]) == 3
    assert any("api gateway" in r for r in rem.reflections)
    assert (paths.workspace / "MEMORY.md").read_bytes() == memory


# -- the budget holds (issue 26, R-DREAM-Q2) ------------------------------------------------

ARCH_FACT = "Caroline adopted a golden retriever named Oscar from the Leeds shelter."
ARCH_QUERIES = (
    "golden retriever named Oscar",
    "which dog did Caroline adopt from the shelter",
    "Leeds shelter golden retriever adoption",
)
ARCH_OLD = "The team offsite in Lisbon was moved to the Alfama district venue."
ARCH_MINE = "- I keep my passport in the blue drawer."


def test_a_full_memory_archives_its_weakest_entry_which_search_and_forget_still_reach(
    paths: Paths, open_at: Open
) -> None:
    e = open_at(-4)
    e.init()
    old = render_entry(ARCH_OLD, "memory/2026-01-02.md#L3-L3", 3, ())
    memory = (
        f"# Memory\n\n{ARCH_MINE}\n\n{GENERATED_BEGIN}\n## Promoted by dreaming\n\n{old}\n\n"
        f"{GENERATED_END}\n"
    )
    (paths.workspace / "MEMORY.md").write_text(memory, encoding="utf-8")
    plant(e, ARCH_FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    e.index()
    for day in (-3, -2, -1):
        d = open_at(day)
        for q in ARCH_QUERIES:
            d.search(q)
    budget = len(memory) + 110  # room for the new entry only if the old one leaves
    report = open_at(0, memory_max_chars=budget).dream()
    assert report.promoted, report.candidates
    text = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert len(text) <= budget
    assert ARCH_FACT in text and ARCH_OLD not in text and ARCH_MINE in text
    archive = (paths.workspace / "memory" / "archive.md").read_text(encoding="utf-8")
    assert ARCH_OLD in archive and "memory/2026-01-02.md#L3-L3" in archive
    assert "archived 1" in (paths.workspace / "DREAMS.md").read_text(encoding="utf-8")

    hits = open_at(0).search("offsite Lisbon Alfama venue", record=False).hits
    assert any(h.path == "memory/archive.md" and "Alfama" in h.snippet for h in hits)

    out = open_at(0).curation.forget("Alfama district venue")
    assert "memory/archive.md" in out.files
    assert "Alfama" not in (paths.workspace / "memory" / "archive.md").read_text(encoding="utf-8")
    again = open_at(0).search("offsite Lisbon Alfama venue", record=False).hits
    assert not any("Alfama" in h.snippet for h in again)
