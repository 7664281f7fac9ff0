"""Labelling sheets for the durable-line classifier (issue 39, point 2).

Sentences are drawn at random (fixed seed) from data nobody here wrote: every turn of
the LoCoMo development split, and the user turns of LongMemEval_S's development half
(turns that hold an answer drawn three times as often, since most user turns are
requests to an assistant). Each sentence is cut by the engine's own splitter
(``reverie.dreaming.content``) and named by a stable id with a CRC of its text, so
the committed labels hold ids only and no text of the datasets.

    python bench/_durable_pick.py --out /tmp/durable/sheets
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reverie.dreaming.content import sentences, split_speaker, strip_media

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
LOCOMO = SHARED / "locomo" / "locomo-dev.json"
LME = SHARED / "longmemeval" / "longmemeval-s-dev.jsonl.gz"
MAX_SENTENCE = 300  # longer pieces are code or pasted text, not a remark


def crc(text: str) -> str:
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def locomo_sentences(path: Path = LOCOMO) -> Iterator[tuple[str, str, str]]:
    """(id, context, sentence) for every sentence of every LoCoMo turn."""
    for conv in json.loads(path.read_text(encoding="utf-8")):
        c = conv["conversation"]
        keys = sorted(
            (k for k in c if k.startswith("session_") and isinstance(c[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for k in keys:
            prev = ""
            for turn in c[k]:
                text = " ".join(str(turn.get("text", "")).split())
                _, body = split_speaker(strip_media(text))
                for i, s in enumerate(sentences(body)):
                    if len(s) <= MAX_SENTENCE:
                        yield f"locomo:{conv['sample_id']}:{turn['dia_id']}:{i}", prev, s
                prev = f"{turn['speaker']}: {text}"[:200]


def lme_sessions(path: Path = LME) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Every distinct haystack session (id, turns) of the development half."""
    seen: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            for sid, turns in zip(
                row["haystack_session_ids"], row["haystack_sessions"], strict=True
            ):
                if sid not in seen:
                    seen.add(sid)
                    yield sid, turns


def lme_sentences(path: Path = LME) -> Iterator[tuple[str, str, str, bool]]:
    """(id, context, sentence, answer turn) for the user turns' sentences."""
    for sid, turns in lme_sessions(path):
        for t, turn in enumerate(turns):
            if turn.get("role") != "user":
                continue
            text = " ".join(str(turn.get("content", "")).split())
            for i, s in enumerate(sentences(text)):
                if len(s) <= MAX_SENTENCE:
                    yield f"lme:{sid}:{t}:{i}", "", s, bool(turn.get("has_answer"))


def texts() -> dict[str, str]:
    """Every pickable id's sentence text (to resolve the committed labels)."""
    out = {i: s for i, _, s in locomo_sentences()}
    out.update({i: s for i, _, s, _ in lme_sentences()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-conversation", type=int, default=300)
    ap.add_argument("--lme", type=int, default=700)
    ap.add_argument("--lme-answers", type=int, default=300)
    args = ap.parse_args()
    rng = random.Random(39)
    args.out.mkdir(parents=True, exist_ok=True)
    by_conv: dict[str, list[tuple[str, str, str]]] = {}
    for row in locomo_sentences():
        by_conv.setdefault(row[0].split(":")[1], []).append(row)
    for conv, rows in by_conv.items():
        pick = sorted(rng.sample(rows, min(args.per_conversation, len(rows))), key=rows.index)
        _write(args.out / f"locomo-{conv}.tsv", [(i, c, s) for i, c, s in pick])
    lme = list(lme_sentences())
    weights = [3.0 if answer else 1.0 for *_, answer in lme]
    chosen: dict[str, tuple[str, str, str]] = {}
    while len(chosen) < args.lme:
        i, c, s, _ = rng.choices(lme, weights=weights)[0]
        chosen[i] = (i, c, s)
    rows = sorted(chosen.values())
    half = len(rows) // 2
    _write(args.out / "lme-a.tsv", rows[:half])
    _write(args.out / "lme-b.tsv", rows[half:])
    # a third sheet from answer turns only: the first two held few facts
    answers = [(i, c, s) for i, c, s, answer in lme if answer and i not in chosen]
    picked = sorted(random.Random(3939).sample(answers, min(args.lme_answers, len(answers))))
    _write(args.out / "lme-c.tsv", picked)
    # a second round, drawn after the first was fitted (recall was the limit): more
    # sentences of the training conversations, more answer turns
    taken = set(chosen) | {i for i, _, _ in picked}
    for conv in ("conv-26", "conv-30", "conv-41"):
        rows = by_conv[conv]
        left = [r for r in rows if r[0] not in _sheet_ids(args.out, conv)]
        more = sorted(random.Random(3940).sample(left, min(200, len(left))), key=rows.index)
        _write(args.out / f"locomo-r2-{conv}.tsv", more)
    answers = [(i, c, s) for i, c, s, answer in lme if answer and i not in taken]
    again = sorted(random.Random(3941).sample(answers, min(args.lme_answers, len(answers))))
    _write(args.out / "lme-d.tsv", again)


def _sheet_ids(folder: Path, conv: str) -> set[str]:
    path = folder / f"locomo-{conv}.tsv"
    return {line.split("\t", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()}


def _write(path: Path, rows: list[tuple[str, str, str]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tcrc\tcontext\tsentence\tlabel\n")
        for i, c, s in rows:
            clean = [x.replace("\t", " ") for x in (c, s)]
            fh.write(f"{i}\t{crc(s)}\t{clean[0]}\t{clean[1]}\t\n")


if __name__ == "__main__":
    main()
