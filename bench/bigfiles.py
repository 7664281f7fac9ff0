"""Peak memory of the big-input paths (issue 22, point 12), one fresh process each.

Generates, at ``--scale`` (1.0 = the issue's sizes), a ChatGPT export zip (400 MB of
``conversations.json``), a Claude Code transcript fed through the session-end hook
(150 MB), one journal of 9.5 MB to index, and a 5 MB ``MEMORY.md`` for a one-shot
``reverie context``; runs each as the CLI does and reports wall time and the peak RSS of
the child (``resource.getrusage(RUSAGE_CHILDREN)`` after each run, so each run is its own
process and the max is per run).

    nice -n 10 python bench/bigfiles.py [--scale 0.25] [--only zip,hook,journal,context]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def _peak_run(
    cmd: list[str], env: dict[str, str], stdin: str | None = None
) -> tuple[float, float, str]:
    """(seconds, peak RSS MB, last stdout/stderr line) of one child."""
    code = (
        "import resource,subprocess,sys,json,time;t=time.time();"
        "p=subprocess.run(json.loads(sys.argv[1]),input=sys.stdin.read() or None,"
        "capture_output=True,text=True);"
        "print(json.dumps([time.time()-t,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
        "(p.stdout+p.stderr).strip().splitlines()[-1:] ]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(cmd)],
        input=stdin or "",
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    secs, mb, tail = json.loads(out.stdout)
    return secs, mb, (tail or [""])[0][:160]


def _chatgpt(path: Path, mb: float) -> None:
    filler = "word " * 200
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("conversations.json", "w") as fh,
    ):
        fh.write(b"[")
        n, written = 0, 0
        while written < mb * 1e6:
            mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
            for i in range(20):
                mapping[f"m{i}"] = {
                    "id": f"m{i}",
                    "parent": "root" if i == 0 else f"m{i - 1}",
                    "children": [f"m{i + 1}"] if i < 19 else [],
                    "message": {
                        "id": f"c{n}m{i}",
                        "author": {"role": "user" if i % 2 == 0 else "assistant"},
                        "create_time": 1714464000 + i,
                        "content": {
                            "content_type": "text",
                            "parts": [f"conversation {n} turn {i} {filler}"],
                        },
                    },
                }
            conv = {
                "title": f"c{n}",
                "conversation_id": f"conv-{n}",
                "mapping": mapping,
                "current_node": "m19",
            }
            data = (b"," if n else b"") + json.dumps(conv).encode()
            fh.write(data)
            written += len(data)
            n += 1
        fh.write(b"]")


def _transcript(path: Path, mb: float) -> None:
    with path.open("w") as fh:
        i, written = 0, 0
        while written < mb * 1e6:
            rec = {
                "type": "user" if i % 2 == 0 else "assistant",
                "sessionId": "big",
                "uuid": f"u{i}",
                "timestamp": "2026-05-01T09:00:00Z",
                "cwd": "/tmp",
                "message": {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"turn {i} about the harbor registry mirror " + "lorem ipsum " * 80,
                },
            }
            line = json.dumps(rec) + "\n"
            fh.write(line)
            written += len(line)
            i += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.25)
    ap.add_argument("--only", default="zip,hook,journal,context")
    args = ap.parse_args()
    only = set(args.only.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="bigfiles-"))
    ws, st = tmp / "ws", tmp / "st"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_CONFIG"] = str(tmp / "none.toml")
    base = [
        sys.executable,
        "-m",
        "reverie.cli",
        "--workspace",
        str(ws),
        "--state-dir",
        str(st),
        "--embedder",
        "fake",
    ]
    subprocess.run([*base, "init"], env=env, check=True, capture_output=True)
    rows = []
    if "zip" in only:
        z = tmp / "export.zip"
        _chatgpt(z, 400 * args.scale)
        rows.append(
            (
                "import chatgpt zip",
                f"{400 * args.scale:.0f} MB json",
                *_peak_run([*base, "import", "chatgpt", str(z), "--dry-run"], env),
            )
        )
    if "hook" in only:
        t = tmp / "big.jsonl"
        _transcript(t, 150 * args.scale)
        payload = json.dumps(
            {
                "hook_event_name": "SessionEnd",
                "session_id": "big",
                "transcript_path": str(t),
                "cwd": str(tmp),
            }
        )
        rows.append(
            (
                "hook session-end",
                f"{150 * args.scale:.0f} MB",
                *_peak_run([*base, "hook", "session-end"], env, payload),
            )
        )
    if "journal" in only:
        j = ws / "memory" / "2026-05-01.md"
        with j.open("w") as fh:
            i = 0
            while fh.tell() < 9.5e6 * args.scale:
                fh.write(
                    f"- 09:{i % 60:02d} note {i} about the harbor registry mirror and lorem ipsum dolor\n"
                )
                i += 1
        rows.append(
            ("index journal", f"{9.5 * args.scale:.1f} MB", *_peak_run([*base, "index"], env))
        )
    if "context" in only:
        (ws / "MEMORY.md").write_text(
            "# Long-term memory\n\n"
            + "".join(
                f"- Fact {i} about the harbor registry mirror.\n"
                for i in range(int(5e6 * args.scale / 45))
            )
        )
        rows.append(
            (
                "context (one-shot)",
                f"{5 * args.scale:.2f} MB MEMORY.md",
                *_peak_run([*base, "context", "harbor"], env),
            )
        )
    for name, size, secs, mb, tail in rows:
        print(f"{name:22} {size:>18} {secs:7.1f} s {mb:8.0f} MB peak  | {tail}")


if __name__ == "__main__":
    main()
