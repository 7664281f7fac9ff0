"""Labels for the dreaming bench, derived from the LoCoMo development split (ids only).

Every turn of a conversation gets one label, from the data's own structure plus hand
rules written for this file (kept apart from the engine's judgement in
``reverie.dreaming.content``, so the bench does not grade the judgement with itself):

- ``durable``: the turn is evidence of some question of the split (a question needed
  it: a fact about a person, a plan, a dated event), and it is not itself a question;
- ``chatter``: every sentence of the turn is a question or small talk (a greeting,
  thanks, a goodbye or a bare reaction: at most two words left once the small-talk
  words and the speakers' names are removed);
- ``statement``: any other turn (mostly facts nobody asked about; unknown).

The file ``bench/out/dreaming-labels.json`` holds ``{sample: {dia_id: label}}`` and no
text of the dataset (it is regenerated on every run, and ``bench/out`` is not
committed). ``python bench/_dreamlabels.py --data ...`` prints the counts.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

_SENT = re.compile(r"[^.!?。！？]+[.!?。！？]*")
# fmt: off
_SMALL_TALK = frozenset(["hey", "hi", "hello", "hiya", "yo", "bye", "goodbye", "thanks", "thank", "thx", "cheers", "congrats", "congratulations", "wow", "cool", "awesome", "great", "nice", "amazing", "lovely", "sweet", "fantastic", "wonderful", "incredible", "beautiful", "stunning", "gorgeous", "sounds", "sound", "good", "glad", "happy", "see", "you", "talk", "soon", "later", "care", "take", "have", "one", "day", "night", "oh", "ah", "aw", "aww", "haha", "lol", "yeah", "yes", "yep", "no", "nope", "sure", "totally", "definitely", "absolutely", "really", "so", "that's", "thats", "that", "is", "it's", "its", "what", "a", "how", "so", "much", "too", "i", "am", "i'm", "you're", "your", "me", "my", "it", "this", "to", "be", "for", "the", "and", "of", "well", "omg", "ok", "okay", "right", "agreed", "true", "hear", "love", "luck", "best", "keep", "up", "work", "doing", "going", "catch", "chat", "again", "mate", "buddy", "friend"])
# fmt: on
_WORD = re.compile(r"[A-Za-z']+")


def _body(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def is_chatter(text: str, speakers: tuple[str, ...] = ()) -> bool:
    """The bench's own rule for questions and small talk (see the module doc)."""
    names = {s.lower() for s in speakers}

    def filler(sentence: str) -> bool:
        if sentence.endswith(("?", "？")):
            return True
        words = [w.lower() for w in _WORD.findall(sentence)]
        return len([w for w in words if w not in _SMALL_TALK and w not in names]) <= 2

    sentences = [s.strip() for s in _SENT.findall(_body(text)) if s.strip()]
    return all(filler(s) for s in sentences)


def evidence_ids(raw: Any) -> list[str]:
    out: list[str] = []
    for item in raw or []:
        out.extend(p for p in re.split(r"[;,\s]+", str(item)) if p)
    return out


def label_sample(sample: dict[str, Any]) -> dict[str, str]:
    conv = sample["conversation"]
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    needed = {i for qa in sample.get("qa", []) for i in evidence_ids(qa.get("evidence"))}
    labels: dict[str, str] = {}
    for key, turns in conv.items():
        if not (key.startswith("session_") and isinstance(turns, list)):
            continue
        for turn in turns:
            did, text = str(turn["dia_id"]), str(turn.get("text", ""))
            if is_chatter(text, speakers):
                labels[did] = "chatter"
            elif did in needed:
                labels[did] = "durable"
            else:
                labels[did] = "statement"
    return labels


def build(data: list[dict[str, Any]], out: Path | None = None) -> dict[str, dict[str, str]]:
    labels = {str(s["sample_id"]): label_sample(s) for s in data}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(labels, indent=0, sort_keys=True), encoding="utf-8")
    return labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/work/shared/datasets/locomo/locomo-dev.json")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "dreaming-labels.json"))
    args = ap.parse_args()
    labels = build(json.loads(Path(args.data).read_text(encoding="utf-8")), Path(args.out))
    for sid, lab in labels.items():
        print(sid, dict(Counter(lab.values())))


if __name__ == "__main__":
    main()
