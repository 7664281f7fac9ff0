"""Labels written with a month's turns (``bench/data/month/``, its ``FORMAT.md``): how
``bench/dreaming.py`` judges what was promoted from a conversation it was not fitted on.

Each turn of a written month carries ``durable`` (its sentences worth keeping, by
``bench/data/durable/LABELLING.md``) and ``relative`` (the relative time words inside
them), written with the turn before the engine ever read it. A promoted entry is:

- ``right`` when every sentence it keeps is one of its source turns' durable sentences
  (or most of one, 60% of its letters: the splitter may cut a sentence at an
  abbreviation; a short remark inside a durable sentence is no match);
- ``chatter`` when none is;
- ``mixed`` otherwise (a durable sentence with chatter beside it): not right.

An entry is ``unreadable`` when it keeps a labelled relative time word with no date
written after it (after its 's: "tonight's (2024-05-08) dinner" is dated). The layout of the file at the month's end: every generated entry
dated in its text and under a subject heading.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from reverie.dreaming.content import sentences, split_speaker
from reverie.dreaming.memory_file import DAY_RE, SUBJECT_HEADING, lines

_SOURCE = re.compile(r"\s*Source:\s*\S+.*$")
_BRACKET = re.compile(r"\s*\([^)]*\d{4}[^)]*\)|（[^）]*\d{4}[^）]*）")


def written(data: list[dict[str, Any]]) -> bool:
    """True when the data's turns carry written labels (a month of ``bench/data/month``)."""
    return any("durable" in t for s in data for t in turns(s).values())


def turns(sample: dict[str, Any]) -> dict[str, dict[str, Any]]:
    conv = sample["conversation"]
    return {
        str(t["dia_id"]): t
        for k, v in conv.items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    }


def labels(sample: dict[str, Any]) -> dict[str, str]:
    """``{dia_id: "durable" | "chatter"}`` from the written labels."""
    return {d: "durable" if t.get("durable") else "chatter" for d, t in turns(sample).items()}


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def body(entry: str) -> str:
    """An entry's said words: no list marker, source, day, speaker or resolved dates."""
    text = _SOURCE.sub("", re.sub(r"^\s*[-*+]\s+", "", entry))
    text = DAY_RE.sub("", text)
    _, text = split_speaker(text.strip())
    return _BRACKET.sub("", text).strip()


def _part(a: str, b: str) -> bool:
    """``a`` is ``b``, or most of it (a splitter's cut), never a short word inside it."""
    return a in b and len(a) >= 0.6 * len(b)


def judge(entry: str, sources: Iterable[dict[str, Any]]) -> str:
    """``right``, ``mixed`` or ``chatter`` (see the module doc)."""
    durable = [_norm(d) for t in sources for d in t.get("durable", [])]
    durable = [d for d in durable if d]
    said = [_norm(s) for s in sentences(body(entry))]
    said = [s for s in said if s]
    ok = [any(_part(s, d) or _part(d, s) for d in durable) for s in said]
    if ok and all(ok):
        return "right"
    return "mixed" if any(ok) else "chatter"


def unresolved(entry: str, sources: Iterable[dict[str, Any]]) -> list[str]:
    """The labelled relative time words the entry keeps with no date written after."""
    text = _SOURCE.sub("", entry)
    out = []
    for t in sources:
        for word in t.get("relative", []):
            at = text.find(word)
            if at >= 0 and not re.match(r"(?:['’]s)?\s*[(（]", text[at + len(word) :]):
                out.append(word)
    return out


def language(text: str) -> str:
    """``zh`` when a third of the letters are CJK, else ``en``."""
    letters = [ch for ch in text if ch.isalpha()]
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in letters)
    return "zh" if letters and cjk / len(letters) >= 1 / 3 else "en"


def layout(memory: str) -> dict[str, int]:
    """Generated entries of the file, and how many lack a day or a subject heading."""
    heading = False
    out = {"entries": 0, "undated": 0, "unheaded": 0}
    for ln in lines(memory):
        if ln.kind == "marker":
            heading = False
        if not ln.generated:
            continue
        if ln.kind == "heading":
            heading = ln.raw.startswith(SUBJECT_HEADING)
        elif ln.kind == "entry":
            out["entries"] += 1
            out["undated"] += not DAY_RE.search(_SOURCE.sub("", ln.raw).rstrip() + " Source:")
            out["unheaded"] += not heading
    return out


__all__ = ["body", "judge", "labels", "language", "layout", "turns", "unresolved", "written"]
