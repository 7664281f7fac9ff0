"""``reverie forget``: what the owner forgets is gone from every file, the index, the
recall signals and search, and nothing brings it back (a re-ingested transcript, a
re-imported export, a journal write, a dream, a restore). ``--dry-run`` changes no
byte; ``--purge-history`` also empties it from pre-images and DREAMS.md.

Days as in test_dream_e2e: the fact is journaled four days before ``FIXED_NOW`` and
searched on the three days after.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlean as sqlite3

from conftest import FIXED_NOW, Paths, RunCli, plant
from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.errors import ReverieError
from reverie.provenance.origin import Origin, SessionKind
from reverie.storage.tombstones import Tombstones

NOW = datetime.fromisoformat(FIXED_NOW)
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
OTHER = "The release train leaves every second Tuesday."
QUERIES = (
    "staging database host orca-db-2 Frankfurt region",
    "which host does the staging database live on",
    "staging database in the Frankfurt region",
)
Open = Callable[..., Reverie]


@pytest.fixture
def open_at(paths: Paths, env: dict[str, str]) -> Any:
    engines: list[Reverie] = []

    def make(days: float = 0) -> Reverie:
        e = Reverie.open(
            paths.workspace,
            paths.state,
            environ=env,
            clock=Clock(NOW + timedelta(days=days)),
            embedder="fake",
        )
        engines.append(e)
        return e

    yield make
    for e in engines:
        e.close()


def tree(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.name.endswith(("-wal", "-shm", ".lock")):
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def everything(paths: Paths) -> str:
    """Every workspace file's text, and the index's and recall log's rows, as one string."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths.workspace.rglob("*.md")]
    conn = sqlite3.connect(str(paths.index))
    texts += [r[0] for r in conn.execute("SELECT text FROM chunks")]
    texts += [r[0] for r in conn.execute("SELECT body FROM chunks_fts")]
    conn.close()
    recall = paths.state / "main" / "recall.sqlite"
    if recall.exists():
        conn = sqlite3.connect(str(recall))
        texts += [r[0] for r in conn.execute("SELECT snippet FROM recall_store")]
        conn.close()
    return "\n".join(texts)


def recall_keys(paths: Paths) -> list[str]:
    conn = sqlite3.connect(str(paths.state / "main" / "recall.sqlite"))
    try:
        return [r[0] for r in conn.execute("SELECT key FROM recall_events")]
    finally:
        conn.close()


def seed(open_at: Open, paths: Paths) -> Path:
    """A fact in a journal (owner), in a session transcript ingested into the corpus,
    in MEMORY.md and USER.md; searched on three days (recall signals). Returns the
    transcript."""
    e = open_at(-4)
    e.init()
    plant(e, OTHER, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    s = e.open_session(sender="alice", owner="alice", session_id="chat-1")
    s.record(f"Remember: {FACT}", source="owner")
    s.record("Noted, I will keep that in mind.", source="assistant")
    assert s.end().lines_written == 2
    with (paths.workspace / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(f"- {FACT} <!-- importance: 8 -->\n- {OTHER}\n")
    with (paths.workspace / "USER.md").open("a", encoding="utf-8") as fh:
        fh.write(f"- Alice told me: {FACT}\n")
    e.index()
    for day in (-3, -2, -1):
        d = open_at(day)
        for q in QUERIES:
            d.search(q)
    return s.path


def test_forget_removes_it_from_files_index_signals_and_search(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    assert FACT in everything(paths) and recall_keys(paths)
    out = cli_json("forget", "orca-db-2")
    assert out["removed_lines"] == 4 and not out["dry_run"]
    assert out["remains"] == []  # SQLite: the file and its WAL are rewritten, nothing stays
    assert set(out["files"]) == {
        "MEMORY.md",
        "USER.md",
        f"memory/{(NOW - timedelta(days=4)).date().isoformat()}.md",
        f"memory/.dreams/session-corpus/{(NOW - timedelta(days=4)).date().isoformat()}.md",
    }
    assert out["recall_signals"]
    text = everything(paths)
    assert "orca-db-2" not in text and "Frankfurt" not in text
    assert OTHER in (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")  # the rest stays
    assert recall_keys(paths) == [] or all("orca" not in k for k in recall_keys(paths))
    e = open_at(0)
    for q in QUERIES:
        assert all("orca" not in h.text.lower() for h in e.search(q, record=False).hits)
    # the tombstone file holds hashes, never the text
    stones = (paths.state / "main" / "tombstones.json").read_text()
    assert "orca" not in stones.lower() and "frankfurt" not in stones.lower()
    # one DREAMS.md entry, without the text
    dreams = (paths.workspace / "DREAMS.md").read_text(encoding="utf-8")
    assert "## Forget" in dreams and "MEMORY.md: 1 line(s) removed" in dreams


def test_dry_run_changes_no_byte_and_shows_what_would_go(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    before, signals = tree(paths.workspace, paths.state), recall_keys(paths)
    out = cli_json("forget", "orca-db-2", "--dry-run", "--purge-history")
    assert out["dry_run"] and out["removed_lines"] == 4 and out["tombstones"] >= 1
    shown = [h["text"] for hits in out["files"].values() for h in hits]
    assert all("orca-db-2" in t for t in shown)
    after = tree(paths.workspace, paths.state)
    # SQLite files may be checkpointed by any reader; their rows are compared instead
    assert {k: v for k, v in after.items() if not k.endswith(".sqlite")} == {
        k: v for k, v in before.items() if not k.endswith(".sqlite")
    }
    assert recall_keys(paths) == signals


def test_nothing_brings_it_back(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any], run_cli: RunCli
) -> None:
    transcript = seed(open_at, paths)
    backup = transcript.read_bytes()
    cli_json("forget", "orca-db-2")
    assert b"orca-db-2" not in transcript.read_bytes()  # the transcript is redacted too
    # the transcript put back from a backup and ingested again from the start
    transcript.write_bytes(backup)
    shutil.rmtree(paths.state / "main" / "ingest")
    result = open_at(0).ingest(transcript)
    assert result.lines_written <= 1 and result.forgotten == 1
    assert "orca-db-2" not in everything(paths)
    # a journal write of the same text (another phrasing of case and spacing) is refused
    proc = run_cli(
        "write", "the staging database lives on host ORCA-DB-2 in the Frankfurt region", check=False
    )
    assert proc.returncode != 0 and "forgotten" in proc.stderr
    # re-importing an export that holds it: on disk, but never indexed or found
    paths.write("memory/imports/export.md", f"# Old assistant\n\n- {FACT}\n- Kept line.\n")
    e = open_at(0)
    e.index()
    assert all("orca" not in h.text.lower() for h in e.search(QUERIES[0], record=False).hits)
    conn = sqlite3.connect(str(paths.index))
    assert not [r for r in conn.execute("SELECT text FROM chunks") if "orca" in r[0].lower()]
    conn.close()


def test_a_dream_after_a_forget_does_not_promote_it(paths: Paths, open_at: Open) -> None:
    seed(open_at, paths)
    # the tombstone alone (as if the signals had survived): the dream refuses the line
    e = open_at(0)
    assert e.dream(dry_run=True).promoted  # without the tombstone it would be promoted
    stones = Tombstones(paths.state / "main" / "tombstones.json")
    stones.save(stones.plan([FACT], "orca-db-2", at=FIXED_NOW, reason="test"))
    report = e.dream()
    assert report.promoted == []
    assert any("forgotten" in d["reason"] for d in report.dropped)
    assert MEMORY_FACT_COUNT(paths) == 1  # the seeded entry only; nothing new


def MEMORY_FACT_COUNT(paths: Paths) -> int:
    return (paths.workspace / "MEMORY.md").read_text(encoding="utf-8").count("orca-db-2")


def test_purge_history_empties_preimages_and_dreams(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    cli_json("forget", "orca-db-2")
    images = sorted((paths.state / "main" / "preimages").glob("*.md"))
    assert images and any("orca-db-2" in p.read_text() for p in images)  # history keeps it
    e = open_at(0)
    e.dream_restore()  # a restore of that pre-image never undoes the forget
    assert "orca-db-2" not in (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    out = cli_json("forget", "orca-db-2", "--purge-history")
    assert out["history"]
    for p in (paths.state / "main" / "preimages").glob("*.md"):
        assert "orca-db-2" not in p.read_text(encoding="utf-8"), p
    assert "orca-db-2" not in (paths.workspace / "DREAMS.md").read_text(encoding="utf-8")


def test_forget_by_key_session_and_source(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    day = (NOW - timedelta(days=4)).date().isoformat()
    journal = (paths.workspace / f"memory/{day}.md").read_text(encoding="utf-8").split("\n")
    line = next(i for i, t in enumerate(journal, 1) if "release train" in t)
    out = cli_json("forget", "--key", f"memory/{day}.md:{line}")
    # the same content goes from MEMORY.md too; the fact of the other line stays
    assert set(out["files"]) == {f"memory/{day}.md", "MEMORY.md"}
    assert "release train" not in everything(paths) and "orca-db-2" in everything(paths)
    out = cli_json("forget", "--session", "chat-1", "--dry-run")
    assert f"memory/.dreams/session-corpus/{day}.md" in out["files"]
    paths.write("memory/imports/wiki.md", "- An imported line about zeppelins.\n")
    out = cli_json("forget", "--source", "import")
    assert list(out["files"]) == ["memory/imports/wiki.md"]
    assert "zeppelins" not in everything(paths)


def test_bad_requests_name_the_problem(paths: Paths, run_cli: RunCli) -> None:
    run_cli("init")
    for args, said in (
        (("forget",), "exactly one"),
        (("forget", "a"), "too short"),
        (("forget", "--source", "aliens"), "not an origin"),
        (("forget", "--key", "nonsense"), "PATH:LINE"),
    ):
        proc = run_cli(*args, check=False)
        assert proc.returncode != 0 and said in proc.stderr, (args, proc.stderr)


def test_a_pending_agent_forget_changes_nothing_until_confirmed(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    e = open_at(0)
    before = tree(paths.workspace)
    req = e.curation.pending.request("forget", "orca-db-2", by="test agent")
    assert tree(paths.workspace) == before
    listed = cli_json("pending", "list")
    assert [r["id"] for r in listed] == [req.id]
    cli_json("pending", "confirm", req.id)
    assert "orca-db-2" not in everything(paths)
    with pytest.raises(ReverieError, match="already confirmed"):
        e.curation.pending.confirm(req.id)


def test_a_confirmed_correction_rewrites_the_entry_in_place(
    paths: Paths, open_at: Open, cli_json: Callable[..., Any]
) -> None:
    seed(open_at, paths)
    e = open_at(0)
    req = e.curation.pending.request(
        "correct", "orca-db-2", "The staging database moved to host narwhal-db-7.", by="agent"
    )
    rejected = e.curation.pending.request("forget", "release train", by="agent")
    cli_json("pending", "reject", rejected.id)
    assert "release train" in everything(paths)
    out = cli_json("pending", "confirm", req.id)
    memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert "orca-db-2" not in memory
    entry = next(ln for ln in memory.splitlines() if "narwhal-db-7" in ln)
    assert "<!-- importance: 8 -->" in entry  # the entry keeps its trailers
    assert "MEMORY.md" in out["written"]
    assert "orca-db-2" not in everything(paths)


def test_trusted_folders_are_the_owners_and_live_in_the_state_dir(
    paths: Paths, run_cli: RunCli, cli_json: Callable[..., Any]
) -> None:
    run_cli("init")
    paths.write("notes/garden.md", "- The tomato seedlings go out after the last frost.\n")
    run_cli("index")

    def origin() -> str:
        hits = cli_json("search", "tomato seedlings frost")["hits"]
        return str(next(h for h in hits if h["path"] == "notes/garden.md")["origin"])

    assert origin() == "untrusted"
    assert cli_json("trust", str(paths.workspace / "notes"))["trusted"] == ["notes"]
    assert origin() == "owner"
    assert not any("trusted" in p.name for p in paths.workspace.rglob("*"))
    assert json.loads((paths.state / "main" / "curation" / "trusted.json").read_text()) == ["notes"]
    proc = run_cli("trust", str(paths.workspace / "memory"), check=False)
    assert proc.returncode != 0 and "fixed classes" in proc.stderr
    cli_json("untrust", "notes")
    assert origin() == "untrusted"
