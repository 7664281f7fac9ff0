"""Errors, not tracebacks (issue 14, defect 15, the command-line and path part).

Before: ``get --lines -1``, ``--from 0`` and ``search -n -3`` were accepted; a
5,000-character path, a NUL byte in an MCP path, ``init`` on an uncreatable path and a
full disk during ``index`` ended in a traceback or "internal error". Each now gives a
clear message naming the file or argument, with the documented exit code, and leaves
the files and the index as they were.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlean
from click.testing import CliRunner

from conftest import Paths, RunCli
from reverie.cli.app import cli
from reverie.engine import Reverie
from reverie.mcp_server import MemoryTools


def _no_traceback(proc: Any) -> None:
    out = proc.stderr if hasattr(proc, "stderr") else proc.output
    assert "Traceback" not in out and "internal error" not in out


@pytest.mark.parametrize(
    "args",
    [
        ("get", "MEMORY.md", "--lines", "-1"),
        ("get", "MEMORY.md", "--from", "0"),
        ("search", "gateway", "-n", "-3"),
        ("search", "gateway", "-n", "0"),
    ],
)
def test_out_of_range_numbers_are_refused(run_cli: RunCli, args: tuple[str, ...]) -> None:
    run_cli("init")
    proc = run_cli(*args, check=False)
    assert proc.returncode == 2, proc.stdout
    assert "is not in the range x>=1" in proc.stderr
    _no_traceback(proc)


def test_library_calls_refuse_them_too(engine_factory: Callable[..., Reverie]) -> None:
    from reverie.errors import ReverieError

    engine = engine_factory(embedder="fake")
    engine.init()
    with pytest.raises(ReverieError, match="count from 1"):
        engine.get("MEMORY.md", from_line=0)
    with pytest.raises(ReverieError, match="count from 1"):
        engine.get("MEMORY.md", lines=-1)
    with pytest.raises(ReverieError, match="at least 1"):
        engine.search("gateway", max_results=-3)


@pytest.mark.parametrize("bad", ["a" * 5000 + ".md", "memory/x\x00.md", "memory/" + "d/" * 600])
def test_bad_paths_are_a_clear_error_on_the_cli_and_over_mcp(
    run_cli: RunCli, engine_factory: Callable[..., Reverie], bad: str
) -> None:
    run_cli("init")
    if "\x00" not in bad:  # a NUL cannot even be passed as a process argument
        proc = run_cli("get", bad, check=False)
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.startswith("error: ")
        _no_traceback(proc)
    result = MemoryTools(engine_factory(embedder="fake")).get(bad, 1, 10)
    assert result.is_error
    said = result.content[0].text  # type: ignore[union-attr]
    assert "internal error" not in said
    assert "refused" in said or "characters" in said or "too long" in said.lower()


def test_init_on_an_uncreatable_path_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(
        cli,
        ["--workspace", str(blocker / "ws"), "--state-dir", str(tmp_path / "st"), "init"],
        env={"REVERIE_CONFIG": str(tmp_path / "none.toml")},
    )
    assert result.exit_code == 3, result.output
    assert "cannot create the workspace" in result.output and str(blocker) in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_full_disk_during_index_is_an_error_and_the_index_stays_usable(
    paths: Paths, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli("init")
    paths.write("memory/2026-04-30.md", "# 2026-04-30\n\n- zqfull the first note\n")
    run_cli("index")
    paths.write("memory/2026-05-01.md", "# 2026-05-01\n\n- zqfull the second note\n")
    from reverie.backends.sqlite import store

    def full(*args: Any, **kwargs: Any) -> None:
        raise sqlean.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "write_file", full)
    argv = ["--workspace", str(paths.workspace), "--state-dir", str(paths.state)]
    env = {"REVERIE_CONFIG": str(paths.workspace.parent / "none.toml")}
    result = CliRunner().invoke(cli, [*argv, "--embedder", "fake", "index", "--json"], env=env)
    assert result.exit_code == 4, result.output
    assert "disk is full" in result.output
    assert json.loads(result.output.splitlines()[0])["error"] == "IndexUnusable"
    monkeypatch.undo()
    found = json.loads(run_cli("search", "zqfull first", "--json").stdout)
    assert any("zqfull the first" in h["snippet"] for h in found["hits"])  # still usable


def test_an_os_error_names_the_file(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["--workspace", str(paths.workspace), "--state-dir", str(paths.state)]
    env = {"REVERIE_CONFIG": str(paths.workspace.parent / "none.toml")}
    CliRunner().invoke(cli, [*argv, "init"], env=env)
    from reverie.storage import workspace

    def enospc(self: object) -> list[str]:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(paths.workspace / "MEMORY.md"))

    monkeypatch.setattr(workspace.Workspace, "walk", enospc)
    result = CliRunner().invoke(cli, [*argv, "--embedder", "fake", "index"], env=env)
    assert result.exit_code == 3, result.output
    assert "MEMORY.md" in result.output and "No space left" in result.output


# -- issue 40.13: bad input is a clear error, never a traceback --------------------------
@pytest.mark.parametrize("every", ["nan", "inf", "-1", "0"])
def test_sync_every_a_non_number_of_minutes_is_a_usage_error(run_cli: RunCli, every: str) -> None:
    run_cli("init")
    done = run_cli("sync", "--every", every, check=False)
    assert done.returncode == 2, done.stderr
    assert "--every" in done.stderr and "Traceback" not in done.stderr


def test_an_mcp_memory_file_holding_a_lone_surrogate_imports(
    paths: Paths, run_cli: RunCli, tmp_path: Path
) -> None:
    memory = tmp_path / "memory.json"
    record = {"type": "entity", "name": "zq\\ud800x", "entityType": "t", "observations": []}
    text = json.dumps(record).replace("\\\\ud800", "\\ud800")  # the escape, as JSON holds it
    obs = '"observations": ["zqsurrogate before \\ud800 after"]'
    memory.write_text(text.replace('"observations": []', obs) + "\n")
    run_cli("init")
    done = run_cli("import", "mcp-memory", str(memory), "--json", check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads(done.stdout)["new"] == 1
    journal = "".join(p.read_text("utf-8") for p in (paths.workspace / "memory").glob("*.md"))
    assert "zqsurrogate before \ufffd after" in journal


def test_a_huge_settings_file_is_refused_naming_it(
    paths: Paths, run_cli: RunCli, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('search_max_results = 6\nnote = """' + "x" * (12 << 20) + '"""\n')
    run_cli("init")
    done = run_cli("search", "anything", "--json", check=False, env={"REVERIE_CONFIG": str(config)})
    assert done.returncode == 2 and done.stdout == ""
    error = json.loads(done.stderr)
    assert str(config) in error["message"] and "KiB" in error["message"]
