"""The command line imports a command's module only when that command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from reverie.cli.app import COMMANDS, cli, load_command


def test_every_listed_command_loads_under_its_own_name_and_shows_in_help() -> None:
    for name in COMMANDS:
        command = load_command(name)
        assert command is not None and command.name == name
    assert load_command("no-such-command") is None
    out = CliRunner().invoke(cli, ["--help"]).output
    assert all(f"  {name} " in out for name in COMMANDS)


def test_a_one_shot_search_imports_no_other_command(tmp_path: Path) -> None:
    """`reverie search` does not pay for the importer, the demo or the review page."""
    probe = (
        "import json, sys\n"
        "from reverie.cli.app import cli\n"
        "try:\n"
        "    cli.main(sys.argv[1:], standalone_mode=False)\n"
        "finally:\n"
        "    mods = sorted(m for m in sys.modules if m.startswith('reverie.cli.'))\n"
        "    print(json.dumps(mods), file=sys.stderr)\n"
    )
    ws, state = tmp_path / "ws", tmp_path / "state"
    args = ["--workspace", str(ws), "--state-dir", str(state), "--embedder", "fake"]
    assert CliRunner().invoke(cli, [*args, "init"]).exit_code == 0
    run = subprocess.run(
        [sys.executable, "-c", probe, *args, "search", "standup", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    loaded = set(json.loads(run.stderr.strip().splitlines()[-1]))
    assert "reverie.cli.recall" in loaded
    for other in ("importer", "demo", "ui", "install", "serve", "sync", "dream", "curation"):
        assert f"reverie.cli.{other}" not in loaded, sorted(loaded)
