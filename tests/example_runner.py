"""Run one of ``examples/`` as a user would (its own process), for the adapter tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(name: str, folder: Path) -> str:
    """``python examples/<name> FOLDER``: its standard output (it must exit 0)."""
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout
