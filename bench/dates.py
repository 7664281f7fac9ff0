"""Relative dates in promoted entries (issue 39, point 3): does dreaming write the days
a relative time expression meant, against the day it was said?

Reads ``bench/data/dates/`` (texts written for this by writers who never read the
resolver; its ``FORMAT.md``): each text's phrases are labelled with the days they mean
(``exact``) or as having none (``vague``: "a few weeks ago", 前阵子). Each text goes
through :func:`reverie.dreaming.dates.resolve` at its day, as a promoted line does, and
each phrase is counted as the months' judge counts it (``bench/_monthlabels.py``): a
phrase with no bracket right after it is left unreadable. A bracket is then read back
into days and held against the label: right, wrong (other days), or, for a vague
phrase, anchored (it says which day it was said against).

    python bench/dates.py [--set a|b|all] [--show]

``dates-a.json`` is the development set (its misses may be read); ``dates-b.json`` is
held out (its totals only).
"""

from __future__ import annotations

import argparse
import calendar
import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

from reverie.dreaming.dates import resolve

DATA = Path(__file__).resolve().parent / "data" / "dates"
_MONTHS = {m: n for n, m in enumerate(calendar.month_name) if m}
_ISO = r"(\d{4}-\d{2}-\d{2})"


def days(note: str) -> tuple[date, date] | None:
    """The days a bracket written by the resolver names, or None (an anchor, not days)."""
    n = note.strip()
    if m := re.fullmatch(rf"{_ISO}(?: (?:to|至) {_ISO})?", n):
        a = date.fromisoformat(m[1])
        return a, date.fromisoformat(m[2]) if m[2] else a
    if m := re.fullmatch(rf"(?:week of )?{_ISO}(?: 那周)?", n):
        a = date.fromisoformat(m[1])
        return a, date.fromordinal(a.toordinal() + 6)
    if m := re.fullmatch(r"(\w+) (\d{4})|(\d{4})-(\d{2})", n):
        y, mo = (int(m[2]), _MONTHS.get(m[1], 0)) if m[1] else (int(m[3]), int(m[4]))
        if mo:
            return date(y, mo, 1), date(y, mo, calendar.monthrange(y, mo)[1])
    if m := re.fullmatch(r"(\d{4})年?", n):
        return date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)
    return None


def judge(text: str, said_on: date, phrases: list[dict[str, str | None]]) -> list[tuple[str, str]]:
    """(verdict, phrase) for each labelled phrase of ``text`` once resolved."""
    out_text = resolve(text, said_on)
    verdicts = []
    for p in phrases:
        words = str(p["words"])
        at = out_text.find(words)
        m = (
            re.match(r"(?:['’]s)?\s*[(（]([^)）]*)[)）]", out_text[at + len(words) :])
            if at >= 0
            else None
        )
        if m is None:
            verdicts.append(("left", words))
            continue
        if p["kind"] == "vague":
            verdicts.append(("anchored", words))
            continue
        got = days(m[1])
        want = (date.fromisoformat(str(p["first"])), date.fromisoformat(str(p["last"])))
        verdicts.append(("right" if got == want else f"wrong {m[1]}", words))
    return verdicts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", choices=("a", "b", "all"), default="all")
    ap.add_argument("--show", action="store_true", help="print each phrase not right")
    args = ap.parse_args()
    names = ["a", "b"] if args.set == "all" else [args.set]
    for name in names:
        rows = json.loads((DATA / f"dates-{name}.json").read_text(encoding="utf-8"))
        tally: Counter[str] = Counter()
        for r in rows:
            said = date.fromisoformat(r["said_on"])
            for p, (verdict, words) in zip(
                r["phrases"], judge(r["text"], said, r["phrases"]), strict=True
            ):
                key = verdict.split()[0]
                tally[f"{r['lang']}/{p['kind']}/{key}"] += 1
                tally[f"all/{p['kind']}/{key}"] += 1
                if args.show and key not in ("right", "anchored"):
                    print(
                        f"  {name} {r['lang']} {p['kind']} {verdict}: {words!r} on {said} | {resolve(r['text'], said)}"
                    )
        print(f"dates-{name}.json: {len(rows)} texts")
        for lang in ("en", "zh", "all"):
            ex = {k: tally[f"{lang}/exact/{k}"] for k in ("right", "wrong", "left")}
            va = {k: tally[f"{lang}/vague/{k}"] for k in ("anchored", "left")}
            n_ex, n_va = sum(ex.values()), sum(va.values())
            left = ex["left"] + va["left"]
            print(
                f"  {lang:>3}: exact {n_ex}: right {ex['right']}, wrong {ex['wrong']}, "
                f"left {ex['left']}; vague {n_va}: anchored {va['anchored']}, left {va['left']}; "
                f"unreadable {left} of {n_ex + n_va} ({left / max(1, n_ex + n_va):.3f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
