"""Big input costs bounded memory (issue 22, point 12), with scaled-down inputs: the
session-end hook reads a transcript one chunk at a time and skips, with a note naming
the line, a record larger than a chunk. (Full-size figures: ``bench/bigfiles.py``.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

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
