"""Bounded memory on big input (issue 22, point 12), measured with tracemalloc (the
Python heap at its peak: deterministic, unlike wall-clock): a session's own transcript
is streamed at ingestion and on reopen, a session-corpus day file stops at its cap and
says what it left out, a one-shot bootstrap reads at most its bounded share of a huge
``MEMORY.md``, and indexing a big journal never holds the vectors of the whole file.
Full-size figures (peak RSS of each command): ``bench/bigfiles.py``."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from reverie.engine import Reverie
from reverie.recall.bootstrap import Bootstrapper
from reverie.session import Session
from reverie.storage.index import sync
from reverie.write import ingest as ingest_mod

T = TypeVar("T")
MB = 1024 * 1024


def peak_mb(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and the peak of the Python heap it allocated on top of what was live."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, (peak - base) / MB


def _big_transcript(path: Path, megabytes: float) -> int:
    header = {"type": "session", "version": 1, "id": path.stem, "kind": "interactive"}
    header |= {"channel": "direct", "sender": "alice", "owner": "alice"}
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        while fh.tell() < megabytes * MB:
            n += 1
            text = f"zqline {n} about the harbor registry mirror " + "lorem ipsum " * 40
            rec = {"type": "message", "seq": n, "source": "owner", "role": "user", "text": text}
            rec |= {"origin": "owner", "ts": "2026-05-01T09:00:00+00:00"}
            fh.write(json.dumps(rec) + "\n")
    return n


@pytest.fixture
def engine(engine_factory: Callable[..., Reverie]) -> Iterator[Reverie]:
    e = engine_factory(embedder="fake")
    e.init()
    yield e
    e.close()


def test_ingesting_a_big_transcript_streams_it_and_caps_the_corpus_day(
    engine: Reverie, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = tmp_path / "big.jsonl"
    messages = _big_transcript(transcript, 12)
    monkeypatch.setattr(ingest_mod, "BATCH_BYTES", 256 * 1024, raising=False)
    ws = engine.workspace

    def run() -> ingest_mod.IngestResult:
        return ingest_mod.ingest(ws, transcript, now=engine.clock.now(), trust=True, cap=MB)

    result, peak = peak_mb(run)
    # read whole, the 12 MB transcript and its records cost several times its size;
    # streamed, what is held is one batch and the capped day file
    assert peak < 8, f"peak {peak:.1f} MB"
    corpus = ws.root / result.files[0]
    assert corpus.stat().st_size <= MB
    assert 0 < result.lines_written < messages
    (warning,) = [w for w in result.warnings if "cap" in w]
    assert f"{messages - result.lines_written} line(s)" in warning and str(transcript) in warning
    # nothing a person can see is lost: a day file already over the cap is left alone
    before = corpus.read_bytes() + b"- a line of my own\n" * 10
    corpus.write_bytes(before)
    again = ingest_mod.ingest(ws, transcript, now=engine.clock.now(), trust=True, cap=1024)
    assert corpus.read_bytes() == before and again.lines_written == 0


def test_reopening_a_session_over_a_big_transcript_does_not_keep_its_messages(
    engine: Reverie,
) -> None:
    session = engine.open_session(session_id="big")
    path = session.path
    with path.open("a", encoding="utf-8") as fh:
        for n in range(1, 30_000):
            rec = {"type": "message", "seq": n, "source": "owner", "role": "user"}
            rec |= {"origin": "owner", "text": f"zqturn {n} " + "lorem ipsum " * 30}
            fh.write(json.dumps(rec) + "\n")
    size = path.stat().st_size / MB
    reopened, peak = peak_mb(lambda: Session(engine, path))
    assert reopened._seq == 29_999  # the state is replayed from every record
    assert [t.text for t in reopened._turns][-1].startswith("zqturn 29999 ")
    assert peak < size / 4, f"peak {peak:.1f} MB for a {size:.1f} MB transcript"


def test_a_one_shot_bootstrap_reads_a_bounded_share_of_a_huge_memory_file(tmp_path: Path) -> None:
    facts = "".join(f"- Fact {i} about the harbor registry mirror.\n" for i in range(120_000))
    (tmp_path / "MEMORY.md").write_text("# Long-term memory\n\n" + facts, encoding="utf-8")
    size = (tmp_path / "MEMORY.md").stat().st_size
    boot = Bootstrapper(tmp_path)
    got, peak = peak_mb(lambda: boot.load(file_chars=20000, total_chars=60000, user_chars=8000))
    (f,) = got.files
    assert f.truncated and f.injected <= 20000
    assert f"of {size:,} bytes were read (bounded)" in got.text
    # the head (headings) and the newest entries, the ones selection keeps, as before
    assert "# Long-term memory" in got.text and "Fact 119999 about" in got.text
    # read whole, 5.4 MB cost ~55 MB of heap; bounded, the same whatever the file's size
    assert peak < 8, f"peak {peak:.1f} MB for {size / MB:.1f} MB"


def test_indexing_a_big_journal_never_holds_the_vectors_of_the_whole_file(
    engine: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = engine.workspace.root / "memory" / "2026-05-01.md"
    with journal.open("w", encoding="utf-8") as fh:
        for i in range(8000):
            fh.write(f"- 09:{i % 60:02d} note {i} about the harbor registry mirror\n")
    monkeypatch.setattr(sync, "EMBED_SLICE", 256, raising=False)
    stats, peak = peak_mb(engine.index)
    assert stats.chunks_written >= 8000 and stats.vectors_missing == 0
    hits = engine.search("note 7777 harbor registry", max_results=3, record=False)
    assert any("note 7777 " in h.snippet for h in hits.hits), hits
    # 8,000 vectors held at once (and every text kept in the token cache): ~32 MB
    assert peak < 18, f"peak {peak:.1f} MB"
