"""One bad byte in MEMORY.md never stops a dream (issue 22, point 10): ``dream preview``
and ``dream run`` read it with the byte replaced and say where it is (file, line, byte
offset); nothing rewrites a file whose bytes it cannot round-trip, so the person's
bytes stay exactly as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from conftest import FIXED_NOW, STAGING_QUERIES, Paths, RunCli, plant, recall_on_days
from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.provenance.origin import Origin, SessionKind

NOW = datetime.fromisoformat(FIXED_NOW)
MEMORY = b"# Long-term memory\n\n- The gateway stays on loopback.\n- Bad \xff byte here.\n"
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."


def test_a_bad_byte_in_memory_md_never_crashes_a_dream_and_is_never_rewritten(
    paths: Paths, run_cli: RunCli, cli_json: Callable[..., Any], env: dict[str, str]
) -> None:
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    e.init()
    plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    e.index()
    e.close()
    recall_on_days(paths, env, STAGING_QUERIES)  # it passes every gate
    paths.write("MEMORY.md", MEMORY)
    where = "MEMORY.md:4: invalid UTF-8 (byte 0xff at byte 7 of the line, offset 59 of the file)"
    for verb in ("preview", "run"):
        proc = run_cli("dream", verb, "--json", check=False, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        report = json.loads(proc.stdout)
        assert any(where in w for w in report["warnings"]), report["warnings"]
        assert (paths.workspace / "MEMORY.md").read_bytes() == MEMORY
        if verb == "preview":
            assert report["promoted"], "the fact would pass every gate"
    assert report["promoted"] == []  # run: nothing promoted into a file it cannot rewrite
    forget = run_cli("forget", "gateway stays on loopback", "--json", check=False)
    assert forget.returncode == 0 and "Traceback" not in forget.stderr
    assert any("MEMORY.md:4" in w for w in json.loads(forget.stdout)["warnings"])
    assert (paths.workspace / "MEMORY.md").read_bytes() == MEMORY
    # once the byte is fixed, the same dream promotes
    paths.write("MEMORY.md", MEMORY.replace(b"\xff", b"x"))
    fixed = cli_json("dream", "run")
    assert not any("invalid UTF-8" in w for w in fixed["warnings"]) and fixed["promoted"]
    assert "orca-db-2" in (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
