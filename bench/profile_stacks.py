"""Where a server's time goes: ``py-spy record`` on a running process (every thread, idle
ones too, so a wait on PostgreSQL's socket counts), then a summary of the samples whose
stack passes through a function (``bench/tenants.py --profile FILE``: the server while
the searches run).

    python bench/profile_stacks.py FILE.raw [--focus memory_search] [--top 25]

The summary: how many samples the focus holds, then each frame's inclusive share (the
samples with it anywhere on the stack) and self share (with it on top) among them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def record(pid: int, out: Path, rate: int = 250) -> subprocess.Popen[bytes]:
    """Start sampling ``pid`` into ``out`` (py-spy's raw, collapsed-stack format)."""
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    cmd = [exe, "record", "--pid", str(pid), "--idle", "--threads", "--rate", str(rate)]
    return subprocess.Popen(
        [*cmd, "--format", "raw", "--output", str(out), "--nonblocking"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)  # py-spy writes its file on Ctrl-C
    proc.wait(timeout=60)


def _short(frame: str) -> str:
    match = FRAME.match(frame.strip())
    if match is None:
        return frame.strip()
    path = match["file"]
    for anchor in ("site-packages/", "/src/", "/lib/python3"):
        if anchor in path:
            path = path.split(anchor, 1)[1]
            break
    return f"{match['func']} ({path})"


def stacks(raw: Path) -> list[tuple[list[str], int]]:
    out = []
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            out.append(([_short(f) for f in stack.split(";")], int(count)))
    return out


def summary(
    raw: Path, focus: str, top: int, *, seconds: float | None = None, calls: int = 0
) -> list[str]:
    """The focus's samples and frames; with the recording's ``seconds`` and the number of
    ``calls`` also the wall milliseconds per call inside the focus (every thread, idle or
    not, is sampled alike: the main thread's samples span the recording)."""
    every = stacks(raw)
    picked = [(s, n) for s, n in every if any(focus in f for f in s)]
    total = sum(n for _, n in picked)
    if not total:
        return [f"no sample passes through {focus!r}"]
    head = f"{total} samples through {focus!r}"
    main = sum(n for s, n in every if s and "MainThread" in s[0])
    if seconds and calls and main:
        ms = 1000 * seconds * total / main / calls
        head += f": {ms:.1f} ms per call of {calls} ({main / seconds:.0f} samples/s)"
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for frames, n in picked:
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    lines = [head, "inclusive:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(top)]
    lines.append("self (top of the stack):")
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("raw", type=Path)
    ap.add_argument("--focus", default="memory_search")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    print("\n".join(summary(args.raw, args.focus, args.top)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
