"""A warm engine (the daemon's hooks) reuses the bootstrap's entry selection while the
file stays the same, and never serves a stale one: an edit that changes only which
entries matter (an importance trailer, invisible in the injected text) changes what
is injected at the next turn."""

from __future__ import annotations

import os
from pathlib import Path

from reverie.recall.bootstrap import Bootstrapper


def memory(important: int) -> str:
    lines = ["# Long-term memory", ""]
    for i in range(40):
        mark = " <!-- importance: 10 -->" if i == important else " <!-- importance: 3 -->"
        lines.append(f"- Entry {i:02d}: a fact worth keeping about project {i}.{mark}")
    return "\n".join(lines) + "\n"


def test_the_selection_follows_an_edit_of_importance_only(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(memory(0), encoding="utf-8")
    boot = Bootstrapper(tmp_path)
    budgets = {"file_chars": 900, "total_chars": 900, "user_chars": 900}
    first = boot.load(**budgets).text
    assert "\n- Entry 00" in first and "left out to fit" in first
    assert boot.load(**budgets).text == first  # the same file: the same injection
    path.write_text(memory(7), encoding="utf-8")  # same length, same text once stripped
    os.utime(path, ns=(1, 1))  # a new stamp, whatever the clock's resolution
    second = boot.load(**budgets).text
    assert "\n- Entry 07" in second and "\n- Entry 00" not in second
