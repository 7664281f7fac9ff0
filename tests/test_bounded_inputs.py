"""Big input costs bounded memory (issue 22, point 12), with scaled-down inputs: the
session-end hook reads a transcript one chunk at a time and skips, with a note naming
the line, a record larger than a chunk; an export zip is streamed one conversation at
a time (peak RSS of the import process stays flat). Full-size figures: ``bench/bigfiles.py``."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli, cli_command
from reverie.engine import Reverie
from reverie.integrations import claude_mirror
from reverie.integrations.claude_mirror import Mirror

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code"


def _huge(line_no: int) -> bytes:
    rec = {
        "type": "user",
        "sessionId": "5d0c7e1a-3b2f-4c9e-9a41-7f3e2b8c6d10",
        "uuid": f"00000000-0000-4000-8000-00000000{line_no:04d}",
        "timestamp": "2026-04-30T10:30:00.000Z",
        "message": {"role": "user", "content": "zqhuge " * 2000},
    }
    return json.dumps(rec).encode() + b"\n"


def test_the_hook_reads_a_transcript_in_chunks_and_skips_a_record_over_one(
    engine_factory: Callable[..., Reverie], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part1 = (FIXTURES / "transcript_part1.jsonl").read_bytes()
    part2 = (FIXTURES / "transcript_part2.jsonl").read_bytes()
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(part1 + part2)
    big = tmp_path / "big.jsonl"
    huge_line = part1.count(b"\n") + 1
    big.write_bytes(part1 + _huge(huge_line) + part2)
    engine = engine_factory(embedder="fake")
    engine.init()
    expected = Mirror(engine, "whole", owner=True).sync(whole, end=True)
    monkeypatch.setattr(claude_mirror, "CHUNK_BYTES", 2048)  # many chunks, one record over
    got = Mirror(engine, "big", owner=True).sync(big, end=True)
    assert got.recorded == expected.recorded and got.origins == expected.origins
    assert got.lines_read == expected.lines_read  # every line but the huge one was read
    note = f"{big}:{huge_line}: a record over 2048 bytes; skipped"
    assert note in got.warnings
    corpus = "".join(p.read_text() for p in engine.workspace.root.rglob("*.md"))
    assert "zqhuge" not in corpus


def _export_zip(path: Path, megabytes: float) -> int:
    """A ChatGPT export zip whose conversations.json holds ``megabytes`` of JSON."""
    filler = "lorem ipsum dolor " * 60
    n, written = 0, 0
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("conversations.json", "w") as fh,
    ):
        fh.write(b"[")
        while written < megabytes * 1e6:
            mapping: dict[str, Any] = {}
            for i in range(10):
                mapping[f"m{i}"] = {
                    "id": f"m{i}",
                    "parent": f"m{i - 1}" if i else None,
                    "children": [f"m{i + 1}"] if i < 9 else [],
                    "message": {
                        "id": f"c{n}m{i}",
                        "author": {"role": "user" if i % 2 == 0 else "assistant"},
                        "content": {"content_type": "text", "parts": [f"c{n} t{i} {filler}"]},
                    },
                }
            conv = {"conversation_id": f"c{n}", "mapping": mapping, "current_node": "m9"}
            data = (b"," if n else b"") + json.dumps(conv).encode()
            fh.write(data)
            written += len(data)
            n += 1
        fh.write(b"]")
    return n


PEAK = (
    "import json,resource,subprocess,sys;"
    "p=subprocess.run(json.loads(sys.argv[1]),capture_output=True,text=True);"
    "print(json.dumps([p.returncode,p.stdout,p.stderr,"
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024]))"
)


def test_an_export_zip_is_streamed_one_conversation_at_a_time(
    run_cli: RunCli, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    run_cli("init")
    export = tmp_path / "export.zip"
    conversations = _export_zip(export, 80)
    cmd = cli_command(paths, "import", "chatgpt", str(export), "--dry-run", "--json")
    out = subprocess.run(
        [sys.executable, "-c", PEAK, json.dumps(cmd)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    code, stdout, stderr, peak_mb = json.loads(out.stdout)
    assert code == 0, stderr
    assert json.loads(stdout)["conversations"] == conversations
    # 80 MB of JSON read whole costs ~2.4x its size (~190 MB at 40 MB before the fix);
    # streamed, one conversation at a time, it stays near the interpreter's own ~40 MB
    assert peak_mb < 120, f"peak RSS {peak_mb:.0f} MB"
