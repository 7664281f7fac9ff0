"""``reverie sync`` against plain git (issue 25): two devices share 1,000 journal days;
device A changes 10 of them (one appended line each), then A syncs (commit, push) and B
syncs (fetch, merge, write the files). Timed against a plain ``git add -A && git commit
&& git push`` on one clone and ``git pull`` on another, of the same change. The sync
figure leaves the re-index out (``--reindex`` puts B's hash-incremental re-index in).

    nice -n 10 python bench/sync.py [--days 1000] [--changed 10] [--rounds 3] [--reindex]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path

from reverie import Reverie


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=cwd,
                   check=True, capture_output=True)  # fmt: skip


def _days(root: Path, days: int) -> list[Path]:
    first = date(2023, 1, 1)
    paths = []
    for i in range(days):
        day = first + timedelta(days=i)
        p = root / "memory" / f"{day.isoformat()}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"- 09:{k:02d} note {k} of {day}: the build uses python 3.11" for k in range(12)]
        p.write_text(f"# {day}\n\n" + "\n".join(lines) + "\n")
        paths.append(p)
    return paths


def _change(paths: list[Path], changed: int, round_: int) -> None:
    step = max(1, len(paths) // changed)
    for p in paths[::step][:changed]:
        with p.open("a") as fh:
            fh.write(f"- 18:{round_:02d} an appended line, round {round_}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--days", type=int, default=1000)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reindex", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="reverie-sync-bench-"))
    try:
        env = {"REVERIE_CONFIG": str(tmp / "none.toml")}
        # plain git: two clones of one bare repository
        _git("init", "-q", "--bare", "-b", "main", str(tmp / "plain.git"), cwd=tmp)
        pa, pb = tmp / "pa", tmp / "pb"
        _git("clone", "-q", str(tmp / "plain.git"), str(pa), cwd=tmp)
        plain_paths = _days(pa, args.days)
        _git("add", "-A", cwd=pa)
        _git("commit", "-qm", "days", cwd=pa)
        _git("push", "-q", "origin", "HEAD:main", cwd=pa)
        _git("clone", "-q", str(tmp / "plain.git"), str(pb), cwd=tmp)
        # reverie: two paired devices on another bare repository
        _git("init", "-q", "--bare", "-b", "main", str(tmp / "rev.git"), cwd=tmp)
        remote = str(tmp / "rev.git")
        a = Reverie.open(tmp / "a/ws", tmp / "a/state", environ=env, embedder="none")
        b = Reverie.open(tmp / "b/ws", tmp / "b/state", environ=env, embedder="none")
        a.init()
        b.init()
        rev_paths = _days(a.workspace.root, args.days)
        a.sync.run(remote)
        code = b.sync.pair(remote)["code"]
        a.sync.approve(code)
        b.sync.pair()
        b.index()
        plain, ours = [], []
        for r in range(args.rounds):
            _change(plain_paths, args.changed, r)
            t = time.perf_counter()
            _git("add", "-A", cwd=pa)
            _git("commit", "-qm", f"round {r}", cwd=pa)
            _git("push", "-q", "origin", "HEAD:main", cwd=pa)
            _git("pull", "-q", cwd=pb)
            plain.append(time.perf_counter() - t)
            _change(rev_paths, args.changed, r)
            t = time.perf_counter()
            a.sync.run()
            if args.reindex:
                b.sync.run()
            else:
                from reverie.sync import Syncer

                Syncer(b.workspace, now=datetime.now).sync()
            ours.append(time.perf_counter() - t)
        assert (
            b.workspace.root / rev_paths[0].relative_to(a.workspace.root)
        ).read_text() == rev_paths[0].read_text()
        result = {
            "days": args.days,
            "changed": args.changed,
            "rounds": args.rounds,
            "reindex": args.reindex,
            "plain_git_s": round(statistics.median(plain), 3),
            "reverie_sync_s": round(statistics.median(ours), 3),
            "ratio": round(statistics.median(ours) / statistics.median(plain), 2),
        }
        print(json.dumps(result))
        a.close()
        b.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
