"""The score and gate re-fit on the month simulation's recall logs (issue 26, point 6).

``bench/dreaming.py --out FILE`` keeps every deep-sleep candidate of every night (its
score, signals, gates and decision). This reads those files and asks: does the score
separate durable facts from the rest among the lines that reach deep sleep? Labels:
``evidence`` (some question of the split needed the line, ``bench/_dreamlabels.py``)
against every other line, and the hand labels of ``bench/_dreamgold.py`` (both sets)
where a candidate is a labelled turn. Each line counts once, at its best night (the
highest score it reached). Printed: the AUC of the score (0.5: no separation), and per
threshold how many lines would pass it with the recall and query gates, and which share
of them is evidence or hand-labelled durable.

    python bench/_dreamfit.py /tmp/conv-*.json [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dreamgold import gold
from _dreamlabels import build as build_labels

_COUNT_GATES = ("min_recalls", "min_queries", "max_age")


def best_nights(log: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each line's candidate record at the night its score was highest."""
    out: dict[str, dict[str, Any]] = {}
    for c in log:
        if c["dia"] != "?" and (c["dia"] not in out or c["score"] > out[c["dia"]]["score"]):
            out[c["dia"]] = c
    return out


def auc(pos: list[float], neg: list[float]) -> float:
    """The chance that a random positive scores above a random negative (ties half)."""
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def rows(parts: list[dict[str, Any]], labels: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    hand = gold("all")
    out = []
    for part in parts:
        for sid, log in part.get("recall_log", {}).items():
            for dia, c in best_nights(log).items():
                out.append(
                    {
                        "score": c["score"],
                        "counts": all(c["gates"].get(g, True) for g in _COUNT_GATES),
                        "evidence": labels[sid].get(dia) == "durable",
                        "hand": hand.get(sid, {}).get(dia),
                        "promoted": any(x["decision"] == "promote" for x in log if x["dia"] == dia),
                    }
                )
    return out


def report(data: list[dict[str, Any]]) -> str:
    lines = [f"{len(data)} lines reached deep sleep; {sum(r['promoted'] for r in data)} promoted"]
    ev = [r["score"] for r in data if r["evidence"]]
    other = [r["score"] for r in data if not r["evidence"]]
    hd = [r["score"] for r in data if r["hand"] is True]
    hn = [r["score"] for r in data if r["hand"] is False]
    lines.append(f"AUC evidence vs other: {auc(ev, other):.3f} ({len(ev)} / {len(other)})")
    lines.append(f"AUC hand durable vs not: {auc(hd, hn):.3f} ({len(hd)} / {len(hn)})")
    counted = [r for r in data if r["counts"]]
    lines.append(f"{len(counted)} pass the recall, query and age gates")
    lines.append("threshold | pass | evidence share | hand-labelled durable share (n)")
    for t in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
        kept = [r for r in counted if r["score"] >= t]
        labelled = [r for r in kept if r["hand"] is not None]
        ev_share = sum(r["evidence"] for r in kept) / len(kept) if kept else 0.0
        hand_share = sum(bool(r["hand"]) for r in labelled) / len(labelled) if labelled else 0.0
        lines.append(f"{t:.2f} | {len(kept)} | {ev_share:.3f} | {hand_share:.3f} ({len(labelled)})")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--data", default="/work/shared/datasets/locomo/locomo-dev.json")
    args = ap.parse_args()
    labels = build_labels(json.loads(Path(args.data).read_text(encoding="utf-8")))
    parts = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.files]
    print(report(rows(parts, labels)))


if __name__ == "__main__":
    main()
