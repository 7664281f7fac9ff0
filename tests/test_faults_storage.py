"""Storage under faults (issue 14): damaged bytes, killed syncs, FIFOs, symlinks, an
unreachable embedder, rowid-dependent ties, a lost signing key.

Every test asserts what a user would notice: a line that cannot be found, a sync that
never ends, a status that lies, a trust class that silently changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import Paths, RunCli, adapters, cli_command, merged_env, plant
from reverie.backends.sqlite.db import connect
from reverie.engine import Reverie
from reverie.errors import PathEscapeError
from reverie.provenance.markers import render_marker
from reverie.provenance.origin import Origin
from reverie.storage.embedders.fake import ENV_DELAY, FakeEmbedder
from reverie.storage.embedders.openai import OpenAIEmbedder

Engine = Callable[..., Reverie]


def _engine(engine_factory: Engine, **kwargs: Any) -> Reverie:
    engine = engine_factory(use_embedder=FakeEmbedder(), **kwargs)
    engine.init()
    return engine


def _found(engine: Reverie, query: str) -> dict[str, str]:
    """source -> origin of the hits for ``query`` (keyword lane: exact words)."""
    response = engine.search(query, lanes="keyword", record=False, max_results=50)
    return {f"{h.path}#L{h.start_line}": h.origin.value for h in response.hits}


# -- 5. one bad byte never hides the rest of its file ------------------------------------


def test_one_invalid_utf8_byte_hides_only_its_own_line(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    good = [f"- 09:0{i} kestrel note number{i}" for i in range(9)]
    data = "\n".join(good[:4]).encode() + b"\n- 09:10 torn \xff\xfe write\n"
    paths.write("memory/2026-05-01.md", data + ("\n".join(good[4:]) + "\n").encode())
    stats = engine.index()
    assert any("memory/2026-05-01.md:5" in w and "UTF-8" in w for w in stats.warnings)
    for i in range(9):
        assert _found(engine, f"number{i}"), f"good line {i} not findable"
    assert _found(engine, "torn write")  # the damaged line itself, with the bytes replaced
    # a later write that day is findable too
    plant(engine, "osprey arrives later that day", origin=Origin.AGENT)
    engine.index()
    assert _found(engine, "osprey")


def test_a_nul_byte_keeps_the_text_lines_and_drops_stale_rows(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    paths.write("memory/2026-05-01.md", "- 09:00 heron first version\n")
    engine.index()
    # a torn write: new lines, then a run of NUL bytes (a zero-filled block)
    paths.write(
        "memory/2026-05-01.md",
        b"- 09:00 plover second version\n- 09:01 bit\x00tern\n" + b"\x00" * 600 + b"\n",
    )
    stats = engine.index()
    assert any("memory/2026-05-01.md:2" in w and "control" in w for w in stats.warnings)
    assert any("memory/2026-05-01.md:3" in w for w in stats.warnings)
    assert _found(engine, "plover")
    assert _found(engine, "bittern")  # the control character is dropped, the text kept
    assert not _found(engine, "heron")  # no stale rows of the old version
    assert "memory/2026-05-01.md" in stats.changed_paths


def test_a_damaged_line_never_reads_above_its_default_trust(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    key = paths.key
    owner = render_marker("- 09:00 grebe owner fact", Origin.OWNER, key=key)
    flipped = render_marker("- 09:01 avocet owner fact", Origin.OWNER, key=key)
    # the HMAC covers the text: one changed byte (invalid UTF-8) breaks the signature
    flipped_bytes = flipped.encode().replace(b"avocet", b"avoc\xffet")
    # damage inside the marker: dropping the control character re-forms a valid marker,
    # which must not verify on a damaged line
    in_marker = render_marker("- 09:02 dunlin owner fact", Origin.OWNER, key=key)
    in_marker_bytes = in_marker.encode().replace(b"sig: ", b"sig: \x01")
    intact = render_marker("- 09:03 curlew owner fact", Origin.OWNER, key=key)
    paths.write(
        "memory/2026-05-01.md",
        b"\n".join([owner.encode(), flipped_bytes, in_marker_bytes, intact.encode()]) + b"\n",
    )
    engine.index()
    assert set(_found(engine, "grebe").values()) == {"owner"}
    assert set(_found(engine, "curlew").values()) == {"owner"}
    assert set(_found(engine, "dunlin").values()) == {"agent"}  # the journal default
    hits = engine.search("avoc", lanes="keyword", record=False).hits
    assert all(h.origin is not Origin.OWNER for h in hits if "avoc" in h.text)


# -- 7. a killed sync leaves the index dirty ---------------------------------------------

QUERIES = ["alpha observation", "bravo deploy", "charlie backup", "build step", "note 7"]
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def _write_corpus(paths: Paths, version: int, rng: random.Random, n: int = 200) -> None:
    """~``n`` journal and import files; ``version`` changes a random part of them."""
    for i in range(n):
        rel = (
            f"memory/2026-0{1 + i % 4}-{1 + i // 8:02d}.md" if i % 2 else f"memory/imports/n{i}.md"
        )
        if version and rng.random() < 0.6:
            continue  # unchanged in this version
        lines = [
            f"- 09:{j:02d} {rng.choice(WORDS)} observation {j} v{version}: build step {i} note {j}"
            for j in range(rng.randint(1, 6))
        ]
        paths.write(rel, "\n".join(lines) + "\n")
    for _ in range(rng.randint(0, 3)):  # a few deletions
        victim = paths.workspace / f"memory/imports/n{2 * rng.randrange(n // 2)}.md"
        victim.unlink(missing_ok=True)


def _snapshot(engine: Reverie) -> tuple[list[tuple[Any, ...]], list[list[str]]]:
    """What a user sees: every chunk (content, lines, origin) and the hits of queries."""
    rows = (
        adapters(engine)
        .port.conn.execute(
            "SELECT c.path, c.start_line, c.end_line, c.part, c.text, p.origin, c.has_vector "
            "FROM chunks c JOIN provenance p ON p.chunk_id = c.id"
        )
        .fetchall()
    )
    hits = [[h.key for h in engine.search(q, record=False).hits] for q in QUERIES]
    return sorted(rows), hits


def _reference(paths: Paths, env: dict[str, str], tmp: Path) -> tuple[Any, ...]:
    """A from-scratch ``--force`` build of the same files (same signing key)."""
    state = tmp / f"ref-state-{time.monotonic_ns()}"
    state.mkdir()
    shutil.copy(paths.state / "origin.key", state / "origin.key")
    with Reverie.open(paths.workspace, state, environ=env, use_embedder=FakeEmbedder()) as ref:
        ref.index(force=True)
        return _snapshot(ref)


def _stale(paths: Paths) -> bool:
    """The registry does not match the files (what a complete sync guarantees)."""
    conn = connect(paths.index, readonly=True)
    try:
        registry = dict(conn.execute("SELECT path, hash FROM sources"))
    finally:
        conn.close()
    files = {
        p.relative_to(paths.workspace).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in paths.workspace.rglob("*.md")
        if "imports" in p.parts or p.parent.name == "memory"
    }
    return any(registry.get(rel) != digest for rel, digest in files.items()) or any(
        rel not in files for rel in registry if rel.startswith("memory/")
    )


def _start_sync(paths: Paths, env: dict[str, str], delay: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cli_command(paths, "index", "--json", embedder="fake"),
        env=merged_env(env, {ENV_DELAY: str(delay)}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_a_sync_killed_midway_leaves_the_index_dirty(
    engine_factory: Engine, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    rng = random.Random(7)
    engine = _engine(engine_factory)
    _write_corpus(paths, 0, rng)
    engine.index()
    assert engine.status()["dirty"] is False
    engine.close()
    _write_corpus(paths, 1, rng)  # an editor changed files: nobody marked the index dirty
    proc = _start_sync(paths, env, delay=0.4)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the first group of files committed
            time.sleep(0.05)
            conn = connect(paths.index, readonly=True)
            try:
                (done,) = conn.execute(
                    "SELECT count(*) FROM chunks WHERE text LIKE '%v1%'"
                ).fetchone()
            finally:
                conn.close()
            if done:
                break
        assert proc.poll() is None, "the sync finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert _stale(paths)
    engine = engine_factory(use_embedder=FakeEmbedder())
    assert engine.status()["dirty"] is True  # so `reverie mcp` syncs at start-up
    engine.index()
    assert engine.status()["dirty"] is False and not _stale(paths)
    assert _snapshot(engine) == _reference(paths, env, tmp_path)


def test_a_sync_that_raises_leaves_the_index_dirty(
    engine_factory: Engine, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _engine(engine_factory)
    paths.write("memory/2026-05-01.md", "- 09:00 first\n")
    engine.index()
    paths.write("memory/2026-05-01.md", "- 09:00 second\n")

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("reverie.backends.sqlite.store.write_file", boom)
    with pytest.raises(OSError):
        engine.index()
    monkeypatch.undo()
    assert engine.status()["dirty"] is True
    engine.index()
    assert engine.status()["dirty"] is False and _found(engine, "second")


# -- 16. ties at the candidate cut-off never depend on rowids -----------------------------


def test_incremental_and_rebuilt_indexes_rank_the_same(
    engine_factory: Engine, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    engine = _engine(engine_factory)
    names = [f"memory/imports/t{i:02d}.md" for i in range(60)]
    # many files with equal-score chunks around the cut-off (k = 24 per lane), written
    # and indexed in reverse order, some rewritten: rowids unlike a rebuild's
    for batch in range(6):
        for rel in reversed(names[batch::6]):
            paths.write(rel, "- the wombat burrow faces north\n- wombat tracks near the fence\n")
        engine.index()
    for rel in names[::7]:
        paths.write(rel, "- the wombat burrow faces north\n- wombat tracks near the fence\n\n")
        engine.index()
    queries = ["wombat", "wombat burrow", "fence tracks", "north", "burrow faces"]
    for lanes in ("hybrid", "keyword", "vector"):
        got = [[h.key for h in engine.search(q, lanes=lanes, record=False).hits] for q in queries]
        state = tmp_path / f"ref-{lanes}"
        state.mkdir()
        shutil.copy(paths.state / "origin.key", state / "origin.key")
        with Reverie.open(paths.workspace, state, environ=env, use_embedder=FakeEmbedder()) as ref:
            ref.index(force=True)
            want = [[h.key for h in ref.search(q, lanes=lanes, record=False).hits] for q in queries]
        assert got == want, lanes
    # a warm process (vectors in memory) ranks the same as a cold one
    cold = [[h.key for h in engine.search(q, lanes="vector", record=False).hits] for q in queries]
    engine.warm()
    assert adapters(engine).port.vector_lane.warm
    warm = [[h.key for h in engine.search(q, lanes="vector", record=False).hits] for q in queries]
    assert warm == cold


def _registry(paths: Paths) -> tuple[dict[str, Any], str | None]:
    conn = connect(paths.index, readonly=True)
    try:
        rows = dict(conn.execute("SELECT path, hash || ':' || generation FROM sources"))
        dirty = conn.execute("SELECT value FROM meta WHERE key = 'dirty'").fetchone()
    finally:
        conn.close()
    return rows, dirty[0] if dirty else None


@pytest.mark.slow
@pytest.mark.timeout(900)  # up to 60 trials; a loaded machine is slow
def test_kill_9_at_random_moments_never_leaves_a_stale_index_marked_clean(
    engine_factory: Engine, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    """20 ``reverie index`` processes over ~200 files changed behind the index's back
    (an editor: nobody marked it dirty), each killed with SIGKILL at a random moment.
    A sync that got as far as touching the index leaves it fresh or dirty, and one more
    sync gives exactly what a from-scratch ``--force`` build gives."""
    rng = random.Random(2026)
    engine = _engine(engine_factory)
    _write_corpus(paths, 0, rng)
    engine.index()
    engine.close()
    _write_corpus(paths, 1, rng)
    t0 = time.monotonic()
    assert _start_sync(paths, env, delay=0.15).wait(timeout=120) == 0
    budget = time.monotonic() - t0  # one whole process: start-up and sync
    # at least 20 kills, and more (up to 60) until 5 landed mid-sync: a loaded machine
    # shifts when a sync gets going, and the window follows what the kills saw
    trials, started, partial, clean_stale, diverged = 0, 0, 0, 0, 0
    while trials < 60 and (trials < 20 or partial < 5):
        trials += 1
        trial = trials + 1
        before = _registry(paths)
        _write_corpus(paths, trial, rng)
        proc = _start_sync(paths, env, delay=0.15)
        time.sleep(rng.uniform(0.3 * budget, budget))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        after = _registry(paths)
        touched = after != before  # the sync began: it wrote the flag or a file
        started += touched
        mid = after[0] != before[0] and _stale(paths)  # some files, not all
        partial += mid
        if not touched:  # killed before the sync began: aim later next time
            budget *= 1.25
        elif not _stale(paths):  # the sync had finished: aim earlier next time
            budget *= 0.85
        with Reverie.open(
            paths.workspace, paths.state, environ=env, use_embedder=FakeEmbedder()
        ) as e:
            clean_stale += touched and _stale(paths) and not e.status()["dirty"]
            e.index()
            diverged += _snapshot(e) != _reference(paths, env, tmp_path)
    print(
        f"\nkill -9 trials: {trials}; the sync had begun in {started}, had committed part of "
        f"the files in {partial}; stale but marked clean: {clean_stale}; "
        f"not converging to --force: {diverged}"
    )
    assert partial >= 5  # many kills really landed mid-sync
    assert clean_stale == 0 and diverged == 0


# -- 8. a FIFO (any non-regular file) never blocks a reader --------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_workspace_is_skipped_with_a_warning(run_cli: RunCli, paths: Paths) -> None:
    run_cli("init")
    paths.write("memory/2026-04-30.md", "- 09:00 the ibis is fine\n")
    os.mkfifo(paths.workspace / "memory" / "2026-05-01.md")
    (paths.workspace / "notes").mkdir()
    os.mkfifo(paths.workspace / "notes" / "x.md")
    os.mkfifo(paths.workspace / "MEMORY.md.tmp")  # not Markdown: not even looked at
    (paths.workspace / "MEMORY.md").unlink()
    os.mkfifo(paths.workspace / "MEMORY.md")
    proc = run_cli("index", "--json", timeout=20)
    stats = json.loads(proc.stdout)
    for rel in ("memory/2026-05-01.md", "notes/x.md", "MEMORY.md"):
        assert any(rel in w and "not a regular file" in w for w in stats["warnings"]), rel
    assert "the ibis is fine" in run_cli("search", "ibis", timeout=60).stdout
    # get and the bootstrap (context) refuse it too, and return
    got = run_cli("get", "memory/2026-05-01.md", check=False, timeout=60)
    assert got.returncode != 0 and "regular file" in got.stderr
    ctx = run_cli("context", "hello", "--json", timeout=60)
    assert "MEMORY.md" in ctx.stdout and "regular file" in ctx.stdout


# -- 14. an unreachable embedder never costs the keyword index -------------------------------


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_an_unreachable_openai_embedder_still_commits_the_keyword_index(
    run_cli: RunCli, paths: Paths
) -> None:
    run_cli("init")
    paths.write("memory/2026-05-01.md", "- 09:00 the magpie nests in the oak\n")
    env = {
        "REVERIE_EMBED_BASE_URL": f"http://127.0.0.1:{_unused_port()}",
        "REVERIE_EMBED_MODEL": "x",
        "REVERIE_EMBED_TIMEOUT": "5",
    }
    proc = run_cli("index", "--json", env=env, embedder="openai", timeout=60)
    stats = json.loads(proc.stdout)
    assert stats["files_changed"] >= 1 and stats["keyword_only"] is True
    assert any("openai" in w and "keyword" in w for w in stats["warnings"])  # reported
    status = json.loads(run_cli("status", "--json", env=env, embedder="openai").stdout)
    assert "openai" in str(status["embedder_error"]) and status["dirty"] is False
    found = run_cli("search", "magpie", "--lanes", "keyword", env=env, embedder="openai")
    assert "memory/2026-05-01.md" in found.stdout
    # a hybrid search answers keyword-only and names the provider: never a silent
    # downgrade, never a failed search while the keyword lane answers (issue 22)
    hybrid = json.loads(run_cli("search", "magpie", "--json", env=env, embedder="openai").stdout)
    assert hybrid["mode"] == "keyword-only" and "openai" in hybrid["degraded"]
    assert any(h["path"] == "memory/2026-05-01.md" for h in hybrid["hits"])


def test_vectors_are_filled_in_once_the_provider_is_back(
    engine_factory: Engine, paths: Paths
) -> None:
    up = {"now": False}
    fake = FakeEmbedder(dims=16)

    def handler(request: httpx.Request) -> httpx.Response:
        if not up["now"]:
            raise httpx.ConnectError("connection refused", request=request)
        texts = json.loads(request.content)["input"]
        vectors = fake.embed_documents(texts)
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        return httpx.Response(200, json={"data": data})

    embedder = OpenAIEmbedder("http://embed.test/v1", "m", transport=httpx.MockTransport(handler))
    engine = engine_factory(use_embedder=embedder)
    engine.init()
    paths.write("memory/2026-05-01.md", "- 09:00 the magpie nests in the oak\n")
    stats = engine.index()
    assert stats.files_changed >= 1 and any("openai" in w for w in stats.warnings)
    assert _found(engine, "magpie")
    assert engine.status()["vectors"] == 0
    up["now"] = True
    stats = engine.index()
    status = engine.status()
    assert status["vectors_missing"] == 0 and status["vectors"] > 0
    assert status["embedder_error"] is None
    assert engine.search("magpie", record=False).mode == "hybrid"


# -- 11. one symlink policy: bootstrap, index and get alike --------------------------------


def test_a_symlink_out_of_the_workspace_is_refused_everywhere(
    engine_factory: Engine, paths: Paths, tmp_path: Path
) -> None:
    engine = _engine(engine_factory)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "MEMORY.md").write_text("# Memory\n\n- the vault code is pelican\n")
    (outside / "2026-05-01.md").write_text("- 09:00 the cormorant line\n")
    (paths.workspace / "MEMORY.md").unlink()
    (paths.workspace / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    (paths.workspace / "memory" / "2026-05-01.md").symlink_to(outside / "2026-05-01.md")
    stats = engine.index()
    for rel in ("MEMORY.md", "memory/2026-05-01.md"):
        assert any(rel in w and "outside the workspace" in w for w in stats.warnings), rel
        with pytest.raises(PathEscapeError):
            engine.get(rel)
    assert not _found(engine, "pelican") and not _found(engine, "cormorant")
    boot = engine.bootstrap()
    assert "pelican" not in boot.text
    assert any("MEMORY.md" in w and "outside the workspace" in w for w in boot.warnings)


def test_a_symlink_inside_the_workspace_is_followed_with_the_lower_trust(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    paths.write("MEMORY.md", "# Memory\n\n- the lyrebird sings at dawn\n")
    paths.write("memory/imports/page.md", "- the bowerbird collects blue things\n")
    (paths.workspace / "USER.md").unlink()
    (paths.workspace / "USER.md").symlink_to("MEMORY.md")  # owner -> owner
    (paths.workspace / "memory" / "2026-05-02.md").symlink_to("imports/page.md")
    (paths.workspace / "AGENTS.md").unlink()
    (paths.workspace / "AGENTS.md").symlink_to("memory/imports/page.md")  # owner -> untrusted
    engine.index()
    assert _found(engine, "lyrebird") == {"MEMORY.md#L3": "owner", "USER.md#L3": "owner"}
    # read through a journal-named link, the import stays untrusted
    assert _found(engine, "bowerbird") == {
        "memory/imports/page.md#L1": "untrusted",
        "memory/2026-05-02.md#L1": "untrusted",
        "AGENTS.md#L1": "untrusted",
    }
    assert "bowerbird" in engine.get("memory/2026-05-02.md").text
    boot = engine.bootstrap()
    assert "lyrebird" in boot.text.split("USER.md", 1)[-1]  # USER.md injected via its link
    assert not any("USER.md" in w for w in boot.warnings)  # an equally trusted target
    assert "bowerbird" not in boot.text  # never injected as instructions
    assert any("AGENTS.md" in w and "less trusted" in w for w in boot.warnings)


# -- 12. a lost signing key lowers trust loudly, never silently ------------------------------


def test_a_regenerated_key_over_signed_lines_warns_and_says_how_to_restore(
    engine_factory: Engine, paths: Paths, tmp_path: Path
) -> None:
    engine = _engine(engine_factory)
    plant(engine, "the owner prefers tabs", origin=Origin.OWNER)
    engine.index()
    assert set(_found(engine, "tabs").values()) == {"owner"}
    assert engine.status()["key_warning"] is None
    engine.close()
    backup = tmp_path / "origin.key.backup"
    shutil.copy(paths.state / "origin.key", backup)
    shutil.rmtree(paths.state)  # the state dir is gone: a new key will be created
    engine = engine_factory(use_embedder=FakeEmbedder())
    stats = engine.index()  # never blocked: trust only lowers
    assert set(_found(engine, "tabs").values()) == {"agent"}
    loud = [w for w in stats.warnings if "origin.key" in w]
    assert loud and "backup" in loud[0] and "memory/2026-05-01.md" in loud[0]
    assert "backup" in str(engine.status()["key_warning"])
    # restoring the key from the backup restores the trust, and the warning goes
    engine.close()
    shutil.copy(backup, paths.state / "origin.key")
    engine = engine_factory(use_embedder=FakeEmbedder())
    stats = engine.index()
    assert not [w for w in stats.warnings if "origin.key" in w]
    assert engine.status()["key_warning"] is None
    assert set(_found(engine, "tabs").values()) == {"owner"}


def test_a_new_key_over_a_workspace_without_signed_lines_is_quiet(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    paths.write("memory/2026-05-01.md", "- 09:00 hand-written, unsigned\n")
    (paths.state / "origin.key").unlink()
    stats = engine.index()
    assert not [w for w in stats.warnings if "origin.key" in w]
    assert engine.status()["key_warning"] is None


def test_a_sync_sweeps_the_temp_files_a_killed_write_left(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    """A write killed before its rename leaves ``.<name>.<random>.tmp`` behind; the next
    sync removes those older than five minutes (a younger one may be a write in
    progress) and touches nothing else."""
    engine = engine_factory(embedder="fake")
    engine.init()
    paths.write("memory/2026-04-10.md", "- a journal line\n")
    engine.index()
    old = time.time() - 3600
    stale = [
        paths.workspace / ".MEMORY.md.k2j4.tmp",
        paths.workspace / "memory" / ".2026-04-10.md.x9a1.tmp",
        engine.workspace.agent_dir / ".intents.sqlite.q1.tmp",
    ]
    fresh = paths.workspace / ".USER.md.new1.tmp"
    for p in [*stale, fresh]:
        p.write_text("half a write", encoding="utf-8")
    for p in stale:
        os.utime(p, (old, old))
    before = (paths.workspace / "MEMORY.md").read_bytes()
    engine.index()
    assert not any(p.exists() for p in stale)
    assert fresh.exists()
    assert (paths.workspace / "MEMORY.md").read_bytes() == before
