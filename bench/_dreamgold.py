"""A hand-labelled set for dreaming's content judgement (issue 26, point 2): ids only.

Every 8th turn of each conversation of the LoCoMo development split (turn index
``i % 8 == 3`` in session order; 345 turns), each read and labelled by a person, not
by any rule of the engine or the bench:

- ``D`` durable: a statement worth keeping about a person: a fact (a job, a pet, a
  family member), a preference ("Drawing flowers is one of my faves"), a plan or
  decision ("I'm starting a dance studio"), an event, with its date when said ("I
  took my kids to a park yesterday"). A line that mixes a reaction with such a
  statement is durable (the statement is what is kept).
- ``N`` not durable: questions, greetings, goodbyes, thanks, reactions to the other
  person ("Congrats on winning!"), encouragement and general advice ("Never give
  up"), general opinions with no fact about anyone ("Kids are amazingly resilient"),
  invitations, and fragments whose subject is only a pronoun for something shown or
  said before ("It was inspired by personal experiences", "Yep, I read that book
  and loved it!").

The dataset's text is never stored here (datasets are never bundled); the text is
read from ``--data`` when the figures are computed. ``python bench/_dreamgold.py``
prints the content judgement's precision and recall on the set.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

# fmt: off
_GOLD = {
    "conv-26": (
        "D1:4 N D1:12 N D2:2 N D2:10 D D3:1 D D3:9 N D3:17 N D4:2 N D4:10 D D4:18 N "
        "D5:8 D D5:16 N D6:8 N D6:16 D D7:8 D D7:16 D D7:24 N D8:5 N D8:13 N D8:21 N "
        "D8:29 N D8:37 N D9:6 D D9:14 N D10:5 D D10:13 N D10:21 N D11:5 N D11:13 N "
        "D12:4 N D12:12 N D12:20 N D13:7 D D13:15 D D14:5 D D14:13 N D14:21 N D14:29 D "
        "D15:2 D D15:10 N D15:18 N D15:26 D D16:6 N D16:14 N D17:2 N D17:10 D D17:18 N "
        "D17:26 N D18:8 N D18:16 N D18:24 N D19:8 N "
    ),
    "conv-30": (
        "D1:4 D D1:12 N D1:20 N D1:28 N D2:8 D D2:16 N D3:8 D D4:2 N D4:10 N D4:18 N "
        "D5:7 D D5:15 D D5:23 N D6:8 D D6:16 N D7:5 N D7:13 N D8:4 D D8:12 D D8:20 N "
        "D9:2 N D9:10 D D10:4 D D10:12 N D11:6 D D11:14 D D11:22 N D12:8 D D12:16 N "
        "D13:5 D D13:13 D D13:21 N D14:6 N D14:14 N D15:2 N D15:10 N D15:18 D D16:4 N "
        "D16:12 D D17:4 D D17:12 N D17:20 N D18:7 N D18:15 N D19:1 D D19:9 N "
    ),
    "conv-41": (
        "D1:4 D D1:12 N D2:4 D D2:12 N D2:20 N D2:28 D D3:8 N D3:16 N D4:7 N D4:15 N "
        "D4:23 N D5:5 D D5:13 D D6:5 D D6:13 N D6:21 N D7:7 D D7:15 N D8:6 N D8:14 N "
        "D8:22 N D9:4 D D9:12 N D10:2 N D10:10 D D10:18 N D11:8 N D11:16 D D12:3 D "
        "D12:11 D D12:19 N D13:4 N D13:12 D D13:20 D D13:28 N D13:36 N D14:7 N D14:15 D "
        "D14:23 N D15:8 N D15:16 N D16:5 N D16:13 N D17:2 N D17:10 N D18:2 D D18:10 N "
        "D18:18 N D19:3 D D19:11 N D19:19 N D20:1 N D20:9 D D20:17 N D21:7 D D21:15 N "
        "D21:23 N D22:2 N D22:10 D D22:18 D D23:5 N D23:13 N D24:7 N D24:15 N D25:6 N "
        "D25:14 N D26:2 D D26:10 D D27:1 D D27:9 D D28:1 D D28:9 N D28:17 N D29:6 D "
        "D29:14 N D30:4 D D30:12 N D30:20 N D31:5 N D31:13 N D31:21 N D32:6 N D32:14 D "
    ),
    "conv-42": (
        "D1:4 N D1:12 N D1:20 N D2:6 N D2:14 D D2:22 N D3:1 D D3:9 N D3:17 D D3:25 N "
        "D4:8 N D4:16 N D5:5 N D5:13 N D5:21 N D6:8 N D7:3 N D7:11 N D8:6 N D8:14 N "
        "D8:22 N D9:8 N D9:16 N D10:6 D D10:14 N D11:6 N D11:14 N D12:2 N D12:10 D "
        "D12:18 N D13:7 D D13:15 N D13:23 N D14:8 D D14:16 N D14:24 D D15:5 N D15:13 N "
        "D16:4 N D16:12 N D17:4 D D17:12 N D17:20 N D18:7 N D18:15 N D19:7 N D19:15 N "
        "D20:1 D D20:9 N D20:17 N D21:6 D D21:14 N D22:2 D D22:10 N D22:18 N D23:3 D "
        "D23:11 D D23:19 N D23:27 N D24:5 N D24:13 N D25:2 D D25:10 N D25:18 N D25:26 N "
        "D26:5 D D26:13 N D26:21 D D27:5 D D27:13 N D27:21 N D27:29 N D27:37 N D28:7 N "
        "D28:15 N D28:23 N D28:31 N D29:6 D D29:14 N "
    ),
    "conv-43": (
        "D1:4 N D1:12 N D1:20 N D2:8 N D2:16 N D3:5 D D3:13 D D3:21 D D3:29 N D4:2 N "
        "D4:10 D D5:3 N D5:11 N D5:19 N D6:7 N D6:15 D D6:23 N D7:8 N D7:16 N D8:8 N "
        "D8:16 D D8:24 D D8:32 D D9:3 N D9:11 N D10:4 D D10:12 N D11:3 D D11:11 D "
        "D11:19 D D11:27 N D12:5 N D12:13 N D12:21 D D12:29 N D13:8 D D13:16 N D14:2 N "
        "D14:10 N D14:18 N D15:3 D D15:11 D D15:19 N D15:27 N D15:35 N D16:5 N D16:13 N "
        "D17:4 N D17:12 N D18:1 D D18:9 N D19:2 N D19:10 D D19:18 N D20:3 N D20:11 N "
        "D20:19 N D20:27 N D20:35 N D20:43 N D21:8 D D21:16 N D22:5 N D22:13 D D23:3 D "
        "D23:11 N D24:3 N D24:11 N D24:19 N D25:7 N D25:15 N D26:6 D D26:14 N D26:22 N "
        "D26:30 D D26:38 N D27:8 D D27:16 N D27:24 D D27:32 N D27:40 N D28:8 N D28:16 N "
        "D29:3 D D29:11 N "
    ),
}
# the held-out set: every 16th turn (i % 16 == 7, apart from the set above), labelled
# by a person before the judgement was run on it or any rule was changed after it
_HELD = {
    "conv-26": (
        "D1:8 N D2:6 N D3:5 N D3:21 N D4:14 N D5:12 D D6:12 N D7:12 N D8:1 N D8:17 D "
        "D8:33 N D9:10 D D10:9 N D11:1 D D11:17 N D12:16 N D13:11 D D14:9 N D14:25 N "
        "D15:6 N D15:22 N D16:10 N D17:6 N D17:22 N D18:12 N D19:4 N "
    ),
    "conv-30": (
        "D1:8 D D1:24 D D2:12 N D3:12 N D4:14 N D5:11 N D6:4 D D7:1 N D7:17 N D8:16 N "
        "D9:6 N D10:8 N D11:10 N D12:4 N D13:1 N D13:17 N D14:10 N D15:6 N D15:22 N "
        "D16:16 N D17:16 N D18:11 N D19:5 N "
    ),
    "conv-41": (
        "D1:8 D D2:8 N D2:24 D D3:12 N D4:11 N D5:1 D D6:1 D D6:17 N D7:11 N D8:10 N "
        "D8:26 N D9:16 N D10:14 N D11:12 D D12:7 D D12:23 N D13:16 D D13:32 N D14:11 N "
        "D15:4 N D16:1 D D16:17 N D17:14 N D18:14 N D19:7 N D19:23 D D20:13 N D21:11 N "
        "D21:27 N D22:14 N D23:9 N D24:11 D D25:10 N D26:6 D D27:5 N D28:5 D D29:2 D "
        "D29:18 N D30:16 N D31:9 N D32:2 N "
    ),
    "conv-42": (
        "D1:8 D D2:2 N D2:18 D D3:5 N D3:21 N D4:12 D D5:9 N D6:4 N D7:7 N D8:10 D "
        "D9:4 D D10:2 N D11:2 N D11:18 N D12:14 D D13:11 N D14:4 N D14:20 D D15:9 N "
        "D16:8 D D17:8 D D18:3 D D19:3 D D19:19 N D20:13 N D21:10 D D22:6 N D22:22 N "
        "D23:15 D D24:1 N D24:17 N D25:14 N D26:1 D D26:17 N D27:9 N D27:25 D D28:3 D "
        "D28:19 N D29:2 N "
    ),
    "conv-43": (
        "D1:8 N D2:4 D D3:1 D D3:17 N D3:33 N D4:14 N D5:15 D D6:11 N D7:4 N D8:4 N "
        "D8:20 D D8:36 N D9:15 N D10:16 N D11:15 D D12:1 N D12:17 N D13:4 D D13:20 N "
        "D14:14 N D15:7 D D15:23 N D16:1 D D16:17 N D17:16 N D18:13 N D19:14 D D20:7 N "
        "D20:23 N D20:39 N D21:12 N D22:9 N D23:7 D D24:7 N D25:3 N D26:2 N D26:18 N "
        "D26:34 D D27:12 N D27:28 D D28:4 N D28:20 N D29:15 N "
    ),
}
# promoted entries, read and labelled by a person after a month simulation (this
# revision, defaults, no model: conv-26, conv-30, conv-43; three of conv-26 from a later
# run of this revision), every promoted line that is in
# neither set above; chosen by the engine's output, so they measure the precision of
# what is promoted, never the judgement's recall
_PROMOTED = {
    "conv-30": (
        "D1:7 D D1:3 D D2:4 D D1:6 D D2:7 N D1:17 D D2:1 D D3:6 D D2:5 N D3:4 N D2:6 D "
        "D3:1 D D5:2 D D5:16 D D7:2 D D5:5 D D6:1 D D7:4 D D9:8 D D8:13 D D8:17 D "
        "D5:20 D D10:7 N D12:1 D D11:3 D D8:1 D D13:4 D D15:3 D D13:9 N D11:9 D "
        "D15:1 D D12:6 D D18:2 D D13:8 D D13:3 D D16:3 D D17:2 N D12:10 N D19:6 N "
        "D15:5 D D18:6 D D9:1 D D14:4 N D12:12 D D15:16 N D14:15 N D9:5 D D14:3 D "
        "D11:5 N D18:10 D D14:8 D D16:8 D D18:3 N "
    ),
    "conv-26": (
        "D12:1 D D15:3 D D16:9 D "
        "D2:12 D D1:3 D D2:7 D D2:1 D D1:7 D D1:14 D D4:3 N D4:15 D D4:11 D D3:11 D "
        "D4:6 D D1:11 D D4:5 D D6:9 D D1:9 D D5:3 D D5:13 D D3:13 D D8:2 D D8:9 D "
        "D5:1 D D7:5 D D8:32 D D6:11 D D7:11 D D8:11 D D10:3 D D5:4 D D7:1 D D7:18 D "
        "D5:5 D D10:10 D D6:4 D D6:7 D D11:2 N D5:10 D D11:4 D D10:7 D D8:6 D D12:7 N "
        "D11:8 N D10:16 D D14:19 N D14:33 D D13:1 D D13:3 D D10:12 D D3:10 N D14:4 D "
        "D4:8 D D14:1 D D18:7 N D7:20 D D16:7 N D17:3 N D17:8 D D15:28 D D12:15 D "
        "D17:7 N D14:32 N D19:1 D D8:34 D D18:17 N D11:3 D D7:7 D D18:3 D D17:1 D "
        "D16:17 N D18:1 D D19:2 D D7:9 D D18:5 N D3:22 D D14:15 N D14:23 D D13:4 D "
        "D13:6 D D14:10 D D17:21 N "
    ),
    "conv-43": (
        "D1:3 D D2:1 D D3:30 D D1:11 D D3:25 D D3:19 D D3:3 D D3:27 D D2:11 N D4:1 D "
        "D3:14 N D3:15 D D4:8 D D5:2 D D4:5 D D6:17 D D6:8 N D7:7 N D7:1 D D8:22 D "
        "D5:1 D D9:4 D D6:13 D D7:6 D D8:14 D D7:11 N D3:11 D D10:8 N D10:10 D D12:2 D "
        "D8:12 D D13:1 D D11:7 D D14:3 D D13:6 N D15:30 D D15:14 D D2:2 D D9:7 D "
        "D16:7 D D14:9 D D9:9 D D16:10 D D1:15 D D9:5 D D11:17 D D12:26 N D14:16 D "
        "D3:6 D D19:9 N D9:6 D D19:6 D D21:9 D D21:1 D D19:20 D D16:6 D D15:32 D "
        "D22:2 D D12:10 D D19:16 D D15:9 N D23:9 D D12:18 D D19:8 N D2:13 D "
    ),
}
# promoted entries of conv-41 and conv-42 (and one of conv-43) that were in no set above,
# from a month simulation at 7605d58 (defaults, no model), read and labelled the same way
# after that run, before any rule was read from them: the judgement's rules had never
# seen these two conversations' promoted lines, so these labels measured it blind
_PROMOTED_BLIND = {
    "conv-41": (
        "D1:3 D D1:10 D D2:1 D D3:1 D D5:8 D D3:14 N D4:16 D D4:13 D D2:14 D D7:16 D "
        "D3:15 D D4:12 D D6:9 D D8:15 D D8:13 N D8:4 D D9:8 D D6:4 D D9:6 D D7:2 D "
        "D3:11 D D10:13 D D8:18 D D11:5 D D13:3 D D8:1 D D11:1 D D14:10 D D9:10 D "
        "D12:18 D D12:17 D D6:16 N D17:12 D D5:10 D D17:11 D D4:2 D D15:18 D D15:13 D "
        "D18:17 D D21:22 D D20:7 N D21:5 D D10:1 D D15:3 D D12:5 D D23:1 D D16:2 D "
        "D17:1 D D11:10 D D24:1 D D24:3 D D22:5 N D19:18 D D28:11 D D18:3 D D27:8 N "
    ),
    "conv-42": (
        "D1:3 D D1:10 D D1:11 D D1:13 D D3:4 D D2:3 D D4:1 D D3:10 D D1:18 N D2:20 N "
        "D4:4 D D2:15 D D3:12 D D4:5 N D3:11 N D1:2 D D5:11 D D5:6 D D6:2 D D4:10 D "
        "D3:19 N D8:19 N D6:7 D D10:4 D D2:23 D D10:9 D D6:10 N D9:9 D D4:3 D D8:4 D "
        "D8:3 N D9:13 N D8:2 D D11:13 N D11:3 D D11:7 D D8:5 D D14:19 D D14:1 D "
        "D16:2 D D17:2 D D7:1 D D4:14 N D19:6 D D7:6 N D13:18 N D18:5 D D15:7 D "
        "D15:14 N D15:6 N D17:1 D D12:3 D D12:5 N D20:10 D D13:8 N D21:9 D D18:8 D "
        "D15:1 D D19:9 D D21:11 D D21:4 D D24:6 D D25:15 D D19:14 N D22:19 D D8:18 D "
        "D24:2 D D15:4 D D17:16 N D24:12 D D15:3 D D16:1 D D24:3 D D24:9 N D5:1 D "
        "D11:16 N "
    ),
    "conv-43": "D16:9 D ",
}
# the entries of the months at a45bc59 (four) and 6b0f1d2 (one) that were in no set
# above, labelled after each run
_PROMOTED_LATER = {
    "conv-26": "D11:14 D ",
    "conv-41": "D10:15 N ",
    "conv-42": "D19:13 N D23:17 D ",
    "conv-43": "D18:6 D ",
}
# the entries of the months at ae1fb79 (the named speaker's lines lifted) and 0a31777
# (two) that were in no set above, labelled after each
_PROMOTED_SPEAKER = {
    "conv-26": (
        "D1:15 N D2:3 N D4:13 D D7:22 D D5:7 N D9:12 D D5:6 D D9:4 D D8:14 N D17:4 D "
        "D16:2 D D1:16 D D18:19 D D15:23 D D15:16 D D16:18 N D8:27 N D16:8 D D16:5 N "
        "D2:5 D D8:8 D "
    ),
    "conv-30": (
        "D7:6 D D10:1 D D6:6 D D17:1 D D16:6 D D18:8 D D16:13 N D8:8 D "
    ),
    "conv-41": (
        "D2:10 N D1:14 D D7:5 D D8:2 D D8:8 N D7:4 D D12:1 D D7:10 N D12:9 D D14:1 D "
        "D12:13 N D20:4 D D22:16 N D14:21 D D25:11 D D23:8 N D25:17 D D5:6 D "
    ),
    "conv-42": (
        "D2:7 D D7:5 N D9:10 D D6:1 N D4:18 N D9:12 N D14:14 D D1:7 D D21:13 D D9:5 D "
        "D18:10 N D22:9 D D20:2 D D24:8 D D19:8 N D26:10 D D21:15 N D1:17 N D25:27 D "
    ),
    "conv-43": (
        "D3:7 N D6:2 D D11:13 N D1:16 D D12:4 D D1:9 D D4:7 D D3:2 D D15:1 D D18:3 D "
        "D6:6 D D15:26 N D10:11 N D12:20 D D16:14 D D22:10 N D11:5 N D1:2 D D17:3 D "
    ),
}
# fmt: on


def gold(which: str = "dev") -> dict[str, dict[str, bool]]:
    """``{sample_id: {dia_id: durable}}``: ``dev`` the 345 turns the rules were read
    against, ``held`` the 172 held-out turns, ``all`` both; ``promoted`` the labelled
    promoted entries (``blind`` those of conv-41/42 labelled blind), ``every`` all of them
    (for the precision of what is promoted)."""
    sets = {
        "dev": [_GOLD],
        "held": [_HELD],
        "all": [_GOLD, _HELD],
        "promoted": [_PROMOTED, _PROMOTED_BLIND, _PROMOTED_LATER, _PROMOTED_SPEAKER],
        "blind": [_PROMOTED_BLIND],
        "every": [_GOLD, _HELD, _PROMOTED, _PROMOTED_BLIND, _PROMOTED_LATER, _PROMOTED_SPEAKER],
    }[which]
    out: dict[str, dict[str, bool]] = {}
    for sid, text in ((k, v) for d in sets for k, v in d.items()):
        parts = text.split()
        out.setdefault(sid, {}).update(
            {parts[i]: parts[i + 1] == "D" for i in range(0, len(parts), 2)}
        )
    return out


def turn_line(turn: dict[str, Any]) -> str:
    """A turn as the month simulation journals it (``Speaker: text [shares a photo: ...]``)."""
    text = f"{turn['speaker']}: {' '.join(str(turn.get('text', '')).split())}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares a photo: {' '.join(str(caption).split())}]"
    return text


def turns(data: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[str, tuple[str, ...]]]:
    """(sample, dia_id) -> (the journalled line, the two speakers) for every turn."""
    out = {}
    for sample in data:
        conv = sample["conversation"]
        names = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
        for key, value in conv.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
                for t in value:
                    out[(str(sample["sample_id"]), str(t["dia_id"]))] = (turn_line(t), names)
    return out


def scores(predicted: dict[tuple[str, str], bool], which: str = "dev") -> dict[str, float | int]:
    """Precision and recall of ``predicted`` (durable or not) on the labelled turns
    it covers."""
    g = gold(which)
    tp = fp = fn = tn = 0
    for (sid, did), said in predicted.items():
        truth = g.get(sid, {}).get(did)
        if truth is None:
            continue
        tp += said and truth
        fp += said and not truth
        fn += (not said) and truth
        tn += (not said) and not truth
    return {
        "labelled": tp + fp + fn + tn,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def judge_all(data: list[dict[str, Any]], which: str = "dev") -> dict[tuple[str, str], bool]:
    """The engine's content judgement on every labelled turn."""
    from reverie.dreaming.judge import Judge

    judge = Judge(lambda: None)
    g = gold(which)
    out = {}
    for (sid, did), (line, _names) in turns(data).items():
        if did in g.get(sid, {}):
            out[(sid, did)] = judge(line).durable  # as dreaming's gate calls it
    return out


def promoted_precision(files: list[str]) -> dict[str, Any]:
    """Per conversation and overall: promoted entries that are labelled turns (any set),
    and the share of them labelled durable."""
    labels = gold("every")
    out: dict[str, Any] = {}
    right = total = 0
    for f in files:
        ids = json.loads(Path(f).read_text(encoding="utf-8"))["promoted_ids"]
        seen = {(sid, did) for sid, did in ids}
        judged = [labels[sid][did] for sid, did in seen if did in labels.get(sid, {})]
        right, total = right + sum(judged), total + len(judged)
        for sid in {sid for sid, _ in seen}:
            out[sid] = {"promoted": len(seen), "labelled": len(judged), "durable": sum(judged)}
    out["precision"] = right / total if total else 0.0
    out["labelled"] = total
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/work/shared/datasets/locomo/locomo-dev.json")
    ap.add_argument("--show", action="store_true", help="print the disagreements")
    ap.add_argument("--set", choices=("dev", "held", "all"), default="dev", dest="which")
    ap.add_argument("--promoted", nargs="+", default=[], help="bench/dreaming.py --out files")
    args = ap.parse_args()
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if args.promoted:  # the precision of the promoted entries that are labelled
        print(json.dumps(promoted_precision(args.promoted)))
        return
    said = judge_all(data, args.which)
    print(json.dumps(scores(said, args.which)))
    if args.show:
        g, lines = gold(args.which), turns(data)
        for (sid, did), v in sorted(said.items()):
            if v != g[sid][did]:
                print(f"{'FP' if v else 'FN'} {sid} {did} {lines[(sid, did)][0][:140]}")


if __name__ == "__main__":
    main()
