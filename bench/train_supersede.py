"""How far a small classifier judges "B replaces A" (issue 38, point 4): a first fit on
the labelled pairs of ``bench/data/supersede/`` (how they were labelled: its
``LABELLING.md``), reported on a held-out split. Nothing here ships yet: the figure
says whether the linker of point 1 can reach precision >= 0.95 without a model.

Features of a pair (A earlier, B later), from the shipped embedder (``--features``):
``whole``, the elementwise product and absolute difference of the two vectors, their
cosine, the share of words they have in common, and log(1 + days apart);
``new-words`` (default), those three scalars and what B adds: the vector of B's words
that A lacks, and cosines between the lines, their own words and their shared words
(:func:`features`). A logistic regression; L2 chosen
on dev log-loss; the threshold the lowest on dev with precision >= ``--precision``.
Splits fixed before fitting: written pairs by chain (else by a hash of A's text),
LongMemEval pairs by question (3/5 train, 1/5 dev, 1/5 test).

    python bench/train_supersede.py [--precision 0.95] [--features whole|new-words]
        [--out bench/out/supersede-fit.json]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import re
import sys
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _durable_pick import LME

from reverie.storage.embedders.usem3 import Usem3Embedder

DATA = Path(__file__).resolve().parent / "data" / "supersede"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Pair:
    earlier: str
    later: str
    days: int
    replaces: bool
    source: str
    lang: str
    shape: str
    split: str


def _split(key: str) -> str:
    r = zlib.crc32(key.encode("utf-8")) % 5
    return "test" if r == 0 else "dev" if r == 1 else "train"


def _lme_turns() -> dict[str, str]:
    out: dict[str, str] = {}
    with gzip.open(LME, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for sid, sess in zip(
                row["haystack_session_ids"], row["haystack_sessions"], strict=True
            ):
                for t, turn in enumerate(sess):
                    out[f"lme:{sid}:{t}"] = " ".join(str(turn.get("content", "")).split())
    return out


def load() -> list[Pair]:
    pairs: list[Pair] = []
    for path in sorted(DATA.glob("written-pairs*.tsv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                key = r["chain"] or r["earlier"]
                pairs.append(
                    Pair(r["earlier"], r["later"], int(r["days_apart"]),
                         r["label"] == "replaces", "written", r["lang"], r["shape"], _split(key))
                )  # fmt: skip
    turns = _lme_turns()
    with (DATA / "lme-ku-pairs.tsv").open(encoding="utf-8", newline="") as fh:
        for n, r in enumerate(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 2):
            sides = []
            for side in ("earlier", "later"):
                full = turns[r[f"{side}_id"]]
                start, length = int(r[f"{side}_start"]), int(r[f"{side}_len"])
                text = full[start : start + length]
                if f"{zlib.crc32(text.encode('utf-8')):08x}" != r[f"{side}_crc"]:
                    raise SystemExit(f"{DATA / 'lme-ku-pairs.tsv'}:{n}: {side} text changed")
                sides.append(text)
            pairs.append(
                Pair(sides[0], sides[1], int(r["days_apart"]), r["label"] == "replaces",
                     "lme", "en", "lme", _split(r["question_id"]))
            )  # fmt: skip
    return pairs


def _words(text: str) -> set[str]:
    w = {t.lower() for t in _WORD.findall(text)}
    return w | {c for c in text if "\u4e00" <= c <= "\u9fff"}


def _tokens(text: str) -> list[str]:
    """Words in order (lowercased), Chinese as characters."""
    out: list[str] = []
    for m in _WORD.findall(text):
        out += list(m) if any("\u4e00" <= c <= "\u9fff" for c in m) else [m.lower()]
    return out


def _only(text: str, other: str) -> str:
    """The words of ``text`` that ``other`` lacks, in order (what one line adds)."""
    seen = set(_tokens(other))
    return " ".join(t for t in _tokens(text) if t not in seen) or "-"


def _shared(text: str, other: str) -> str:
    seen = set(_tokens(other))
    return " ".join(t for t in _tokens(text) if t in seen) or "-"


def features(pairs: list[Pair], emb: Usem3Embedder, kind: str = "new-words") -> np.ndarray:
    """``whole``: the pair's vectors (product, difference), cosine, shared words, days.
    ``new-words``: cosine, shared words, days, and what the later line adds: the vector
    of its words the earlier lacks, its cosine with the earlier's own words, the vector
    of the shared words against each line, the share of each line's words that are its
    own."""
    va = emb.embed_documents([p.earlier for p in pairs])
    vb = emb.embed_documents([p.later for p in pairs])
    if kind == "new-words":
        vao = emb.embed_documents([_only(p.earlier, p.later) for p in pairs])
        vbo = emb.embed_documents([_only(p.later, p.earlier) for p in pairs])
        vs = emb.embed_documents([_shared(p.earlier, p.later) for p in pairs])
    rows = []
    for i, (p, a, b) in enumerate(zip(pairs, va, vb, strict=True)):
        wa, wb = _words(p.earlier), _words(p.later)
        share = len(wa & wb) / max(1, len(wa | wb))
        base = [float(a @ b), share, math.log1p(p.days) / 6]
        if kind == "whole":
            rows.append([*(a * b), *np.abs(a - b), *base])
            continue
        ao, bo, sv = vao[i], vbo[i], vs[i]
        own_a = len(wa - wb) / max(1, len(wa))
        own_b = len(wb - wa) / max(1, len(wb))
        scalars = [float(ao @ bo), float(sv @ a), float(sv @ b), float(ao @ b), float(bo @ a)]
        rows.append([*base, *scalars, own_a, own_b, *bo])
    return np.array(rows)


def average_precision(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(-p)
    hits = np.cumsum(y[order])
    ranks = np.arange(1, len(y) + 1)
    return float((hits / ranks)[y[order] == 1].sum() / max(1, y.sum()))


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 2000) -> tuple[np.ndarray, float]:
    w, b = np.zeros(x.shape[1]), 0.0
    pos = max(1, int(y.sum()))
    cw = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * max(1, len(y) - pos)))
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    for t in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * cw / len(y)
        gw, gb = x.T @ g + l2 * w, float(g.sum())
        m, v = 0.9 * m + 0.1 * gw, 0.999 * v + 0.001 * gw * gw
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        w -= 0.02 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        b -= 0.02 * (mb / (1 - 0.9**t)) / (math.sqrt(vb / (1 - 0.999**t)) + 1e-8)
    return w, b


def metrics(p: np.ndarray, y: np.ndarray, t: float) -> dict[str, float]:
    keep = p >= t
    tp = int((keep & (y == 1)).sum())
    return {
        "n": len(y),
        "replaces": int(y.sum()),
        "marked": int(keep.sum()),
        "precision": round(tp / keep.sum(), 3) if keep.sum() else 1.0,
        "recall": round(tp / y.sum(), 3) if y.sum() else 1.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--precision", type=float, default=0.95)
    ap.add_argument("--out", type=Path, default=Path("bench/out/supersede-fit.json"))
    ap.add_argument("--features", choices=("whole", "new-words"), default="new-words")
    args = ap.parse_args()
    pairs = load()
    x = features(pairs, Usem3Embedder(cache_dir=Path("/tmp/reverie-usem3")), args.features)
    y = np.array([int(p.replaces) for p in pairs])
    split = np.array([p.split for p in pairs])
    tr, dv = split == "train", split == "dev"
    mu, sd = x[tr].mean(axis=0), x[tr].std(axis=0) + 1e-6
    xs = (x - mu) / sd
    best = None
    for l2 in (0.01, 0.03, 0.1, 0.3, 1.0):
        w, b = fit(xs[tr], y[tr], l2)
        p = 1 / (1 + np.exp(-(xs[dv] @ w + b)))
        loss = float(-(y[dv] * np.log(p + 1e-9) + (1 - y[dv]) * np.log(1 - p + 1e-9)).mean())
        print(f"l2 {l2}: dev log-loss {loss:.4f}")
        best = (l2, loss) if best is None or loss < best[1] else best
    assert best is not None
    w, b = fit(xs[tr], y[tr], best[0])
    p = 1 / (1 + np.exp(-(xs @ w + b)))
    t = next(
        (round(float(c), 2) for c in np.arange(0.5, 1.0, 0.01)
         if (p[dv] >= c).sum() >= 3 and metrics(p[dv], y[dv], c)["precision"] >= args.precision),
        0.99,
    )  # fmt: skip
    te = split == "test"
    report: dict[str, object] = {
        "features": args.features,
        "l2": best[0],
        "threshold": t,
        "ap_dev": round(average_precision(p[dv], y[dv]), 3),
        "ap_test": round(average_precision(p[te], y[te]), 3),
    }
    print(f"{args.features}: AP dev {report['ap_dev']}, test {report['ap_test']}, threshold {t}")
    groups: dict[str, list[int]] = defaultdict(list)
    for i, pr in enumerate(pairs):
        for key in (
            pr.split,
            f"{pr.split}/{pr.source}",
            f"{pr.split}/{pr.lang}",
            f"{pr.split}/{pr.shape}",
        ):
            groups[key].append(i)
    for key in sorted(groups):
        idx = np.array(groups[key])
        report[key] = metrics(p[idx], y[idx], t)
        if not key.startswith("train"):
            print(key, report[key])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
