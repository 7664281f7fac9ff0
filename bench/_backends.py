"""LoCoMo's figures on both index backends, side by side (issue 23: every figure of
``bench/locomo.py --backend postgres`` within 0.01 of SQLite's).

    python bench/tenants.py ... --locomo sqlite.json pg.json

reads two ``bench/locomo.py --out`` files (run once with each backend), prints the
headline figures of each (the agent's view per category, hybrid session recall@5 and
B2k overall, decay on) and the largest difference over every figure the two files
hold (each lane's table with decay on and off, both agent's views, the question
counts; run times and what each build indexed left out), with MET or MISSED against
``TOLERANCE``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TOLERANCE = 0.01
_SKIP = frozenset({"seconds", "config", "data", "conversations"})  # runs and builds


def _figures(node: Any, path: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in _SKIP:
                yield from _figures(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _figures(value, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, float(node)


def compare(sqlite: Path, postgres: Path) -> tuple[list[str], bool]:
    """The printed lines and whether every figure is within :data:`TOLERANCE`."""
    a = json.loads(sqlite.read_text(encoding="utf-8"))
    b = json.loads(postgres.read_text(encoding="utf-8"))
    fa, fb = dict(_figures(a)), dict(_figures(b))
    shared = sorted(set(fa) & set(fb))
    only = sorted(set(fa) ^ set(fb))
    lines = [f"{'LoCoMo (decay on)':<28} {'sqlite':>8} {'postgres':>8}"]
    for cat, value in a["views"]["ours"].items():
        lines.append(f"{'agent view ' + cat:<28} {value:>8.3f} {b['views']['ours'][cat]:>8.3f}")
    for fig in ("S@5", "B2k"):
        x = a["summary"]["hybrid/decay"]["overall"][fig]
        y = b["summary"]["hybrid/decay"]["overall"][fig]
        lines.append(f"{'hybrid overall ' + fig:<28} {x:>8.3f} {y:>8.3f}")
    worst = max(((abs(fa[k] - fb[k]), k) for k in shared), default=(0.0, "-"))
    ok = worst[0] <= TOLERANCE and not only
    lines.append(
        f"{len(shared)} figures compared, largest difference {worst[0]:.4f} ({worst[1]})"
        + (f"; {len(only)} in one file only" if only else "")
        + f"; within {TOLERANCE}: {'MET' if ok else 'MISSED'}"
    )
    return lines, ok
