"""One reader policy for every door (issue 22, point 11): a FIFO never hangs the review
page or ``reverie import``, and a ``CLAUDE.md`` linked out of the import root (to
``/etc/passwd``) is never followed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from conftest import Paths, RunCli, start_ui
from reverie.engine import Reverie

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def test_a_fifo_never_hangs_the_review_page_and_sigterm_stops_it(
    engine_factory: Callable[..., Reverie], paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    paths.write("memory/2026-05-01.md", "- 09:00 The gateway stays on loopback.\n")
    engine.index()
    engine.close()
    (paths.workspace / "MEMORY.md").unlink()
    os.mkfifo(paths.workspace / "MEMORY.md")  # nobody ever writes to it
    os.mkfifo(paths.workspace / "memory" / "2026-05-02.md")
    err = (tmp_path / "ui.log").open("w")
    proc, url = start_ui(paths, env, err)
    try:
        base = url.split("/?")[0]
        with httpx.Client(timeout=20, follow_redirects=False) as c:
            c.get(url)  # trades the token for the cookie
            for view in ("/", "/history", "/dream", "/file?path=memory/2026-05-02.md"):
                r = c.get(base + view)
                assert r.status_code == 400 and "FIFO" in r.text, (view, r.text)
            files = c.get(base + "/files")
            assert files.status_code == 200 and "memory/2026-05-01.md" in files.text
        proc.terminate()
        assert proc.wait(timeout=20) is not None  # SIGTERM still stops it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        err.close()


def test_import_follows_no_link_out_and_opens_no_fifo(
    paths: Paths, run_cli: RunCli, tmp_path: Path
) -> None:
    run_cli("init")
    export = tmp_path / "claude"
    (export / "proj").mkdir(parents=True)
    (export / "CLAUDE.md").symlink_to("/etc/passwd")
    (export / "proj" / "CLAUDE.md").write_text("- The build needs Python 3.11.\n")
    os.mkfifo(export / "proj" / "CLAUDE.local.md")
    os.mkfifo(export / "proj" / "session.jsonl")
    proc = run_cli("import", "claude-code", str(export), "--json", timeout=60)
    report = json.loads(proc.stdout)
    said = " ".join(report["warnings"])
    assert "link out of" in said and "FIFO" in said
    corpus = "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in paths.workspace.rglob("*.md")
    )
    assert "Python 3.11" in corpus and "root:" not in corpus and "/bin/" not in corpus
    fifo = tmp_path / "conversations.json"
    os.mkfifo(fifo)
    for fmt in ("chatgpt", "mcp-memory"):
        bad = run_cli("import", fmt, str(fifo), check=False, timeout=60)
        assert bad.returncode != 0 and "FIFO" in bad.stderr and "Traceback" not in bad.stderr
