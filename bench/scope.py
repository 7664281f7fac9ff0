"""Project-key look-ups (R-SCOPE-1): what one costs, against asking git.

A repository with a linked worktree is made in a temp dir; then ``--lookups`` project
keys are looked up from directories inside it, three ways, in the same run:

- ``git``: the baseline, one ``git config --get remote.origin.url`` process per look-up
  (what "one git call per message" would cost);
- ``cold``: Reverie's reader with a fresh cache each time (reads ``.git`` and ``config``);
- ``warm``: the per-process cache (one ``stat`` of the config per look-up).

It prints each one's mean per look-up and the ratio to the baseline, plus how many
processes the Reverie look-ups spawned (0). Nothing asserts on speed.

    python bench/scope.py [--lookups 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from reverie.scope.git import ProjectKeys

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lookups", type=int, default=1000)
    args = ap.parse_args()
    n = args.lookups
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        git("init", "-q", str(root))
        git("remote", "add", "origin", "git@github.com:Acme/Widgets.git", cwd=root)
        ident = ["-c", "user.name=b", "-c", "user.email=b@example.com"]
        git(*ident, "commit", "-q", "--allow-empty", "-m", "x", cwd=root)
        git("worktree", "add", "-q", "-b", "w", str(Path(tmp) / "wt"), cwd=root)
        deep = root / "a" / "b" / "c"
        deep.mkdir(parents=True)
        places = [root, deep, Path(tmp) / "wt"]

        t0 = time.perf_counter()
        for i in range(n):
            git("config", "--get", "remote.origin.url", cwd=places[i % 3])
        base = (time.perf_counter() - t0) / n

        spawned = 0
        real = subprocess.Popen

        def counting(*a: object, **k: object) -> object:
            nonlocal spawned
            spawned += 1
            return real(*a, **k)  # type: ignore[call-overload]

        subprocess.Popen = counting  # type: ignore[misc,assignment]
        try:
            t0 = time.perf_counter()
            for i in range(n):
                ProjectKeys().key(places[i % 3])
            cold = (time.perf_counter() - t0) / n
            keys = ProjectKeys()
            t0 = time.perf_counter()
            for i in range(n):
                keys.key(places[i % 3])
            warm = (time.perf_counter() - t0) / n
        finally:
            subprocess.Popen = real  # type: ignore[misc]
    print(f"load average {os.getloadavg()[0]:.2f}; {n} look-ups each")
    print(f"git process (baseline) {base * 1e6:9.1f} us/look-up  1.000")
    print(f"reverie, cold cache    {cold * 1e6:9.1f} us/look-up  {cold / base:.4f} of git")
    print(f"reverie, warm cache    {warm * 1e6:9.1f} us/look-up  {warm / base:.4f} of git")
    print(f"processes spawned by reverie look-ups: {spawned}")


if __name__ == "__main__":
    main()
