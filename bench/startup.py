"""Start-up against the memory's size (issue 41 points 2 and 5): a warm process (a
daemon, an MCP server) opened on 10,000 and on 300,000 chunks, timed from a fresh
interpreter to its first answer, as a ratio of the two in one run.

The corpora are `bench/search.py`'s (synthetic chunks with random unit vectors under
the shipped embedder's identity; built once and cached). Each size is first warmed once
(which writes the warm lanes' snapshot beside the index when there is none); then, for
``--runs`` fresh processes each: import the engine, ``Reverie.open``, ``warm()``, one
hybrid search with the real query embedder; the child reports its CPU seconds, wall
seconds, peak RSS (``ru_maxrss``) and its RSS once answered (``/proc/self/statm``).
CPU is the figure on a loaded machine. ``--cold`` removes the snapshots first (the
start-up before this issue's change, for the record).

    python bench/startup.py [--sizes 10000,300000] [--runs 3] [--cold] [--out r.json]

Goals: start-up at the largest size within 1.5x of the smallest (CPU); peak RSS at most
the answered RSS + 10%.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, os, resource, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from reverie.engine import Reverie
base = sys.argv[1]
eng = Reverie.open(base + "/workspace", base + "/state", environ={})
eng.warm()
hits = eng.search("garden fence paint weekend", record=False).hits
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
page = os.sysconf("SC_PAGE_SIZE")
with open("/proc/self/statm") as fh:
    rss = int(fh.read().split()[1]) * page / 2**20
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"cpu": cpu, "wall": wall, "rss_mb": rss, "peak_mb": peak, "hits": len(hits)}))
eng.close()
"""


def child(base: Path) -> dict[str, float]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(base)], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    from search import build_corpus

    from reverie.settings import load_settings
    from reverie.storage.embedders.factory import make_embedder

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,300000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/reverie-bench-search"))
    ap.add_argument("--cold", action="store_true", help="no snapshots (before issue 41)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    identity = make_embedder(load_settings({}, environ={})).identity
    report: dict[str, dict[str, float]] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        base = args.cache_dir / str(size)
        build_corpus(base, size, identity)
        warm = base / "state" / "main" / "index.warm"
        if args.cold:
            shutil.rmtree(warm, ignore_errors=True)
        else:
            child(base)  # writes the snapshot when there is none
        runs = []
        for _ in range(args.runs):
            if args.cold:
                shutil.rmtree(warm, ignore_errors=True)
            runs.append(child(base))
        row = {k: statistics.median(r[k] for r in runs) for k in ("cpu", "wall", "rss_mb")}
        row["peak_mb"] = max(r["peak_mb"] for r in runs)
        report[str(size)] = row
        print(
            f"{size:>7} chunks: start-up to first answer {row['cpu']:.2f} s CPU, "
            f"{row['wall']:.2f} s wall; RSS answered {row['rss_mb']:.0f} MB, "
            f"peak {row['peak_mb']:.0f} MB"
        )
    sizes = list(report)
    small, large = report[sizes[0]], report[sizes[-1]]
    ratio = large["cpu"] / small["cpu"]
    peak = large["peak_mb"] / large["rss_mb"]
    print(f"start-up {sizes[-1]} / {sizes[0]}: {ratio:.2f}x CPU (goal <= 1.5)")
    print(f"peak RSS / answered RSS at {sizes[-1]}: {peak:.2f} (goal <= 1.10)")
    if args.out:
        args.out.write_text(json.dumps({"sizes": report, "ratio": ratio, "peak": peak}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
