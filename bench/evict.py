"""Eviction keeps what lasts (issue 39, point 4): when MEMORY.md is full, does what
leaves first hold the chatter?

A file inherited from an earlier night's rules holds durable entries and chatter
alike: here, every hand-labelled turn of a LoCoMo conversation (``_dreamgold``: read
and labelled by a person, durable or not), in dataset order, as generated entries
older than a month and needed alike. The file is full (its budget is its length).
Then, night by night, durable turns of another conversation are promoted, one a
night, each needed a little more than the inherited entries (so each displaces one).
Printed, with the learned classifier deciding chatter (``fit(chatter=...)``) and
without it (the weakest is the oldest, as before): the share of the inherited entries
still in the file that are labelled durable, and how many durable ones left.

    python bench/evict.py --data /work/shared/datasets/locomo/locomo-dev.json [--labels held]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dreamgold import gold, turns

from reverie.dreaming.budget import fit
from reverie.dreaming.consolidate import Promotion
from reverie.dreaming.judge import Judge
from reverie.dreaming.memory_file import ANCHOR_RE, render_entry

HEAD = "# Long-term memory\n\n"


def _promotion(n: int, text: str, score: float) -> Promotion:
    anchor = f"memory/2023-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}.md#L{n + 3}-L{n + 3}"
    return Promotion(
        key=f"k{n}", anchor=anchor, text=text, rendered=render_entry(text, anchor, 5, ()),
        score=score, importance=5, tags=(), origin="owner", session_kind="interactive",
        observed=None,
    )  # fmt: skip


def run(
    inherited: list[tuple[str, bool]], new: list[str], chatter: object
) -> tuple[float, int, int]:
    """(durable share of the inherited entries left, durable ones that left, nights)."""
    old = [_promotion(n, text, 0.5) for n, (text, _) in enumerate(inherited)]
    memory = fit(HEAD, old, 10**9).text
    budget, need = len(memory), {p.anchor: 0.5 for p in old}
    label = {p.anchor: durable for p, (_, durable) in zip(old, inherited, strict=True)}
    for night, text in enumerate(new):
        p = _promotion(10_000 + night, text, 0.6)
        memory = fit(memory, [p], budget, need, keep=chatter).text  # type: ignore[arg-type]
    left = [a for a in ANCHOR_RE.findall(memory) if a in label]
    lost = sum(label.values()) - sum(label[a] for a in left)
    return (sum(label[a] for a in left) / len(left) if left else 0.0), lost, len(new)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--labels", default="held", help="dev | held | all (_dreamgold)")
    args = ap.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    lines = turns(data)
    labelled = gold(args.labels)
    judge = Judge(lambda: None)
    convs = sorted(labelled)
    totals: dict[str, list[float]] = {"with": [], "without": []}
    for i, sid in enumerate(convs):
        inherited = [(lines[(sid, d)][0], v) for d, v in labelled[sid].items() if (sid, d) in lines]
        other = labelled[convs[(i + 1) % len(convs)]]
        donor = convs[(i + 1) % len(convs)]
        new = [lines[(donor, d)][0] for d, v in other.items() if v and (donor, d) in lines]
        new = new[: len(inherited) // 2]  # half the file is replaced
        share = sum(v for _, v in inherited) / len(inherited)
        with_, lost_w, nights = run(inherited, new, judge.keep)
        without, lost_wo, _ = run(inherited, new, None)
        totals["with"].append(with_)
        totals["without"].append(without)
        print(
            f"{sid}: {len(inherited)} inherited entries ({share:.2f} durable), {nights} nights: "
            f"durable share left {with_:.3f} with the classifier / {without:.3f} without; "
            f"durable entries that left {lost_w} / {lost_wo}"
        )
    for k, v in totals.items():
        print(f"mean durable share left, {k} the classifier: {sum(v) / len(v):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
