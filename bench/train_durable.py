"""Fit the durable-line classifier (issue 39, point 2) and write its weights into the
package (``src/reverie/durable/durable.npz``).

Labelled sentences come from ``bench/data/durable/`` (how they were labelled:
``LABELLING.md`` there):

- dataset sheets (``locomo-*.tsv``, ``lme-*.tsv``): ids, a CRC of the text and the label;
  the text is read from ``../shared/datasets/`` (``_durable_pick``), and a changed text
  (CRC mismatch) stops the fit;
- written sheets (``written-*.tsv``): text, label, language, domain, voice.

Splits are fixed before fitting: LoCoMo by conversation (conv-26, -30, -41 train;
conv-43 dev; conv-42 test), LongMemEval by session and written rows by a hash of the
text (3/5 train, 1/5 dev, 1/5 test). A softmax regression over the shipped embedder's
vectors and three shape features is fitted on train, its L2 strength chosen on dev's
log-loss, then refitted; the keep threshold is the lowest on dev whose precision
reaches ``--precision``. The written sets' training rows are copied beside the weights
(``durable_examples.tsv``): ``reverie dream explain`` shows the nearest of them. Test figures are printed beside dev, per source and language.

    python bench/train_durable.py [--precision 0.95] [--out bench/out/durable-fit.json]
        [--dry-run]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _durable_pick import crc, texts

from reverie.durable.model import LABELS, DurableModel, features, probabilities
from reverie.storage.embedders.usem3 import Usem3Embedder

DATA = Path(__file__).resolve().parent / "data" / "durable"
WEIGHTS = Path(__file__).resolve().parents[1] / "src" / "reverie" / "durable" / "durable.npz"
EXAMPLES = WEIGHTS.with_name("durable_examples.tsv")  # written training rows, shown by --explain
LOCOMO_SPLIT = {"conv-26": "train", "conv-30": "train", "conv-41": "train"}
LOCOMO_SPLIT |= {"conv-43": "dev", "conv-42": "test"}


@dataclass(frozen=True)
class Row:
    text: str
    label: str
    source: str  # locomo | lme | written-<name>
    lang: str
    split: str


def _by_hash(key: str) -> str:
    r = zlib.crc32(key.encode("utf-8")) % 5
    return "test" if r == 0 else "dev" if r == 1 else "train"


def _lang(text: str) -> str:
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"


def load_rows(data: Path = DATA) -> list[Row]:
    known = texts()
    rows: list[Row] = []
    for path in sorted(data.glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            for n, r in enumerate(reader, start=2):
                label = (r.get("label") or "").strip()
                if label not in LABELS:
                    raise SystemExit(f"{path}:{n}: label {label!r} is not one of {LABELS}")
                if path.name.startswith("written-"):
                    text = r["text"].strip()
                    source = path.stem
                    rows.append(
                        Row(text, label, source, r.get("lang") or _lang(text), _by_hash(text))
                    )
                    continue
                ident = r["id"]
                text = known.get(ident, "")
                if not text or crc(text) != r["crc"]:
                    raise SystemExit(f"{path}:{n}: {ident}: text not found or changed")
                kind, key = ident.split(":")[0], ident.split(":")[1]
                split = LOCOMO_SPLIT[key] if kind == "locomo" else _by_hash(key)
                rows.append(Row(text, label, kind, _lang(text), split))
    return rows


def fit(
    x: np.ndarray, y: np.ndarray, l2: float, steps: int = 1500
) -> tuple[np.ndarray, np.ndarray]:
    """Softmax regression, balanced class weights, Adam on the full batch."""
    n, d = x.shape
    k = len(LABELS)
    counts = np.bincount(y, minlength=k).astype(np.float64)
    cw = n / (k * np.maximum(counts, 1))
    sw = cw[y] / n
    onehot = np.eye(k)[y]
    w = np.zeros((d, k))
    b = np.zeros(k)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    lr, b1, b2 = 0.05, 0.9, 0.999
    for t in range(1, steps + 1):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * sw[:, None]
        grads = [x.T @ g + l2 * w, g.sum(axis=0)]
        for i, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[i] = b1 * m[i] + (1 - b1) * grad
            v[i] = b2 * v[i] + (1 - b2) * grad * grad
            param -= lr * (m[i] / (1 - b1**t)) / (np.sqrt(v[i] / (1 - b2**t)) + 1e-8)
    return w, b


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = x.mean(axis=0)
    sd = x.std(axis=0) + 1e-6
    return mu, sd


def folded(
    w: np.ndarray, b: np.ndarray, mu: np.ndarray, sd: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weights for raw features: (x - mu) / sd @ w + b == x @ w' + b'."""
    w2 = w / sd[:, None]
    return w2.astype(np.float32), (b - mu @ w2).astype(np.float32)


def keep_metrics(keep: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    tp = int((keep & gold).sum())
    kept = int(keep.sum())
    pos = int(gold.sum())
    return {
        "n": len(gold),
        "kept": kept,
        "durable": pos,
        "precision": round(tp / kept, 3) if kept else 1.0,
        "recall": round(tp / pos, 3) if pos else 1.0,
    }


def choose_threshold(pkeep: np.ndarray, gold: np.ndarray, target: float) -> float:
    for t in np.arange(0.30, 0.99, 0.01):
        keep = pkeep >= t
        if keep.sum() >= 5 and (keep & gold).sum() / keep.sum() >= target:
            return round(float(t), 2)
    return 0.99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--precision", type=float, default=0.95)
    ap.add_argument("--out", type=Path, default=Path("bench/out/durable-fit.json"))
    ap.add_argument("--dry-run", action="store_true", help="report only, weights untouched")
    args = ap.parse_args()
    rows = load_rows()
    print("rows:", Counter((r.split, r.source, r.label) for r in rows).most_common())
    emb = Usem3Embedder(cache_dir=Path("/tmp/reverie-usem3"))
    vec = emb.embed_documents([r.text for r in rows])
    x = features([r.text for r in rows], vec).astype(np.float64)
    y = np.array([LABELS.index(r.label) for r in rows])
    split = np.array([r.split for r in rows])
    tr, dv = split == "train", split == "dev"
    mu, sd = standardise(x[tr])
    xs = (x - mu) / sd
    best: tuple[float, float] | None = None
    for l2 in (0.003, 0.01, 0.03, 0.1, 0.3):
        w, b = fit(xs[tr], y[tr], l2)
        p = probabilities(DurableModel(w, b, 0.5, ""), xs[dv])
        loss = float(-np.log(p[np.arange(dv.sum()), y[dv]] + 1e-9).mean())
        print(f"l2 {l2}: dev log-loss {loss:.4f}")
        if best is None or loss < best[1]:
            best = (l2, loss)
    assert best is not None
    w, b = fit(xs[tr], y[tr], best[0])
    wf, bf = folded(w, b, mu, sd)
    model = DurableModel(wf, bf, 0.5, emb.identity.label())
    p = probabilities(model, x.astype(np.float32))
    pkeep = p[:, 0] + p[:, 1]
    gold = y != LABELS.index("chatter")
    threshold = choose_threshold(pkeep[dv], gold[dv], args.precision)
    report: dict[str, object] = {"l2": best[0], "threshold": threshold, "target": args.precision}
    groups: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(len(rows), bool))
    for i, r in enumerate(rows):
        for key in (r.split, f"{r.split}/{r.source}", f"{r.split}/{r.lang}"):
            groups[key][i] = True
    for key in sorted(groups):
        g = groups[key]
        report[key] = keep_metrics(pkeep[g] >= threshold, gold[g])
        report[key]["accuracy3"] = round(float((p[g].argmax(axis=1) == y[g]).mean()), 3)  # type: ignore[index]
        print(key, report[key])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not args.dry_run:
        meta = {"trained_on": str(int(tr.sum())), "l2": str(best[0])}
        np.savez_compressed(
            WEIGHTS, weights=wf, bias=bf, threshold=np.float32(threshold),
            embedder=np.array(emb.identity.label()), meta=np.array(json.dumps(meta)),
        )  # fmt: skip
        print("weights written:", WEIGHTS, WEIGHTS.stat().st_size, "bytes")
        shown = sorted(
            {
                (r.text, r.label)
                for r in rows
                if r.split == "train" and r.source.startswith("written-")
            }
        )
        EXAMPLES.write_text(
            "text\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in shown), encoding="utf-8"
        )
        print("labelled lines for --explain:", EXAMPLES, len(shown))


if __name__ == "__main__":
    main()
