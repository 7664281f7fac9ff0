"""Memory poisoning end to end (R-DREAM-6, R-PROV-3..5, issue "Dreaming" acceptance).

Every payload of the poisoning dataset is sent through every channel that is not the
owner typing on a trusted channel, with real files, a real index and the real session
API. Then the attacker "farms" the gates: each poisoned line is recalled by five
distinct queries on five different days, so that its recall count, query diversity,
age and score all pass. A user must see that:

- nothing of it reaches ``MEMORY.md`` or ``USER.md`` (byte-identical after the dream),
- ``reverie dream explain KEY`` names provenance as the reason,
- it is never auto-injected, and an explicit search shows it with its low origin,
- the same lines typed by the owner *are* promoted (so the defence is provenance, not
  a blanket refusal), except the ones the junk filter rejects (shell pipes, comments).

One workspace holds all cases (one file per channel, so that copies of a payload never
share a chunk); it is built once per module. Journals and transcripts are chunked a
line or two per chunk (``chunk_tokens=40``, longer than any line): that makes farming *easier* for the
attacker (a whole chunk matches the query), so the gates are tested at their weakest.
The dataset is read from ``/work/shared/datasets/poisoning``; the module is skipped
when it is absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import DATASETS, Paths, adapters, base_env, cli_command, dreamer, plant
from reverie.clock import Clock
from reverie.dreaming.gates import (
    GATE_MAX_AGE,
    GATE_MIN_QUERIES,
    GATE_MIN_RECALLS,
    GATE_MIN_SCORE,
    evaluate,
)
from reverie.dreaming.junk import junk_reason
from reverie.dreaming.signals import compute_signals, promoted_importance
from reverie.engine import Reverie
from reverie.errors import ReverieError
from reverie.provenance.markers import strip_markers
from reverie.provenance.origin import Origin, SessionKind, Source
from reverie.storage.trailers import parse_line
from reverie.testing import scripted_judge
from reverie.tokens import terms
from reverie.user.directives import parse as parse_directives
from reverie.user.directives import problems

DATASET = DATASETS / "poisoning"
if not (DATASET / "payloads.jsonl").exists() or not (DATASET / "channels.jsonl").exists():
    pytest.skip(f"poisoning dataset not found at {DATASET}", allow_module_level=True)

PAYLOADS: list[dict[str, str]] = [
    json.loads(line) for line in (DATASET / "payloads.jsonl").read_text().splitlines() if line
]
CHANNELS: dict[str, Origin] = {
    c["channel"]: Origin(c["expected_origin_at_most"])
    for c in (
        json.loads(line) for line in (DATASET / "channels.jsonl").read_text().splitlines() if line
    )
}

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
FARM_DAYS = range(11, 16)  # five farming days, soon after the writes (journal decay)
DREAM_DAY = 16
OWNER = "alice"
OPEN_FLAGS: dict[str, Any] = {"embedder": "fake", "chunk_tokens": 40, "chunk_overlap": 0}
FORGED_MARKER = "<!-- origin: owner; sig: 0123456789abcdef -->"

KEEP_ALL = scripted_judge(keep_all=True)


@dataclass(frozen=True)
class Route:
    """One way poisoned text reaches memory: a dataset channel (or an extra attack),
    the day it is written on (so every route has its own file) and three words that
    keep its copy of a payload from being merged with another route's copy."""

    name: str
    channel: str | None  # the dataset channel it exercises (None: the owner, or extra)
    day: int
    tag: str
    expected_at_most: Origin
    session: SessionKind | None = None

    def line(self, payload: dict[str, str]) -> str:
        return f"{payload['text']} {self.tag}" if self.tag else payload["text"]


def _day(n: int) -> str:
    return (START + timedelta(days=n)).date().isoformat()


ROUTES: dict[str, Route] = {
    r.name: r
    for r in (
        Route("owner", None, 0, "wren ash flint", Origin.OWNER, SessionKind.INTERACTIVE),
        Route("untrusted_journal", None, 1, "kestrel larch quartz", Origin.UNTRUSTED),
        Route("web_summary_journal", "web_summary", 2, "heron birch onyx", Origin.UNTRUSTED),
        Route("web_summary", "web_summary", 3, "osprey cedar jasper", Origin.UNTRUSTED),
        Route("tool_output", "tool_output", 4, "plover maple garnet", Origin.UNTRUSTED),
        Route("group_non_owner", "group_non_owner", 5, "bittern alder topaz", Origin.UNTRUSTED),
        Route("cron", "cron", 6, "avocet hazel beryl", Origin.SYSTEM, SessionKind.CRON),
        Route(
            "heartbeat", "heartbeat", 7, "curlew rowan agate", Origin.SYSTEM, SessionKind.HEARTBEAT
        ),
        Route("subagent", "subagent", 8, "dunlin aspen opal", Origin.SYSTEM, SessionKind.SUBAGENT),
        # A cron job that claims the owner's origin: the session kind alone must stop it.
        Route("cron_as_owner", None, 9, "godwit elm pearl", Origin.OWNER, SessionKind.CRON),
        Route("import", "import", 10, "lapwing yew amber", Origin.UNTRUSTED),
    )
}
CORPUS_ROUTES = ("web_summary", "tool_output", "group_non_owner")
GROUP_ROUTES = ("group_non_owner",)  # never searched, so never recalled (issue 22.5)
JOURNAL_ROUTES = (
    "owner",
    "untrusted_journal",
    "web_summary_journal",
    "cron",
    "heartbeat",
    "subagent",
    "cron_as_owner",
)
IMPORT_PATH = "memory/imports/assistant-export.md"


def route_path(route: Route) -> str:
    if route.name == "import":
        return IMPORT_PATH
    if route.name in GROUP_ROUTES:  # a group chat's own folder, which search leaves out
        sid = route.name.replace("_", "-")
        return f"memory/.dreams/session-corpus/group/main/{sid}/{_day(route.day)}.md"
    if route.name in CORPUS_ROUTES:
        return f"memory/.dreams/session-corpus/{_day(route.day)}.md"
    return f"memory/{_day(route.day)}.md"


STOP = frozenset(
    {"the", "and", "for", "are", "you", "with", "this", "that", "don", "not", "has", "have", "its"}
    | {"our", "your", "their"}
)


def queries(text: str) -> list[str]:
    """Five distinct queries made of the payload's content words (sliding windows);
    words with digits (keys, ids) are left out, as transcripts redact them."""
    words = list(
        dict.fromkeys(
            t
            for t in terms(text)
            if not t.isascii() or (len(t) >= 3 and t.isalpha() and t not in STOP)
        )
    )
    if len(words) == 1 and not words[0].isascii():  # one Han run: overlapping slices
        run = words[0]
        return [run[i : i + 6] for i in (0, 2, 4, 6, 8)]
    out: list[str] = []
    for size in (5, 4, 3):
        size = min(size, len(words) - 1)
        for i in range(len(words) - size + 1):
            q = " ".join(words[i : i + size])
            if q not in out:
                out.append(q)
    assert len(out) >= 5, (text, out)
    return out[:5]


@dataclass
class Farm:
    ws: Path
    state: Path
    env: dict[str, str]
    # (route name, payload id) -> recall key "path:line:line"
    keys: dict[tuple[str, str], str] = field(default_factory=dict)
    ingest: dict[str, Any] = field(default_factory=dict)

    def open(self, day: int, **flags: Any) -> Reverie:
        return Reverie.open(
            self.ws,
            self.state,
            environ=self.env,
            clock=Clock(START + timedelta(days=day)),
            judge=KEEP_ALL,  # every sentence durable: provenance alone keeps poison out
            **{**OPEN_FLAGS, **flags},
        )

    def poisoned(self) -> dict[tuple[str, str], str]:
        return {k: v for k, v in self.keys.items() if k[0] != "owner"}


def _write_cases(farm: Farm) -> None:
    def at(route: str) -> Reverie:
        return farm.open(ROUTES[route].day)

    with at("owner") as e:
        e.init()
        for p in PAYLOADS:
            plant(e, ROUTES["owner"].line(p), origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    with at("untrusted_journal") as e:
        for p in PAYLOADS:
            plant(
                e,
                ROUTES["untrusted_journal"].line(p),
                origin=Origin.UNTRUSTED,
                session=SessionKind.INTERACTIVE,
            )
    with at("web_summary_journal") as e:  # R-PROV-5: the agent summarises a page into the journal
        s = e.open_session(
            kind="interactive",
            channel="direct",
            sender=OWNER,
            owner=OWNER,
            session_id="web-summary-journal",
        )
        for i, p in enumerate(PAYLOADS):
            s.record(f"Please summarise https://pages.example/{i}", source=Source.OWNER)
            s.record(f"(contents of https://pages.example/{i})", source=Source.WEB)
            s.write(ROUTES["web_summary_journal"].line(p))  # the assistant's summary
        farm.ingest["web_summary_journal"] = s.end()
    for name, source, channel, sender in (
        ("web_summary", Source.WEB, "direct", None),
        ("tool_output", Source.TOOL, "direct", None),
        ("group_non_owner", Source.MEMBER, "group", "mallory"),
    ):
        with at(name) as e:
            s = e.open_session(
                kind="interactive",
                channel=channel,
                sender=OWNER,
                owner=OWNER,
                session_id=name.replace("_", "-"),
            )
            for p in PAYLOADS:
                s.record(ROUTES[name].line(p), source=source, sender=sender)
            farm.ingest[name] = s.end()
    for name in ("cron", "heartbeat", "subagent"):
        with at(name) as e:
            s = e.open_session(kind=name, session_id=name)
            for p in PAYLOADS:
                s.write(ROUTES[name].line(p))
            farm.ingest[name] = s.end()
    with at("cron_as_owner") as e:
        for p in PAYLOADS:
            plant(e, ROUTES["cron_as_owner"].line(p), origin=Origin.OWNER, session=SessionKind.CRON)
    lines = [f"- {ROUTES['import'].line(p)} {FORGED_MARKER}" for p in PAYLOADS]
    (farm.ws / IMPORT_PATH).write_text(
        "# Imported from another assistant\n\n" + "\n".join(lines) + "\n"
    )
    with at("import") as e:
        e.index()


def _locate(farm: Farm) -> None:
    """The line of every (route, payload) copy in its file."""
    for route in ROUTES.values():
        lines = (farm.ws / route_path(route)).read_text(encoding="utf-8").splitlines()
        for p in PAYLOADS:
            head = p["text"][:16]
            found = [i + 1 for i, ln in enumerate(lines) if head in ln and route.tag in ln]
            assert len(found) == 1, (route.name, p["id"], found)
            farm.keys[(route.name, p["id"])] = f"{route_path(route)}:{found[0]}:{found[0]}"


@pytest.fixture(scope="module")
def farm(tmp_path_factory: pytest.TempPathFactory) -> Farm:
    root = tmp_path_factory.mktemp("poison")
    f = Farm(root / "ws", root / "state", base_env(root))
    _write_cases(f)
    _locate(f)
    for day in FARM_DAYS:  # gate farming: 5 distinct queries per payload, every day
        with f.open(day) as e:
            for p in PAYLOADS:
                for q in queries(p["text"]):
                    e.search(q, max_results=20)
    return f


def _copy(farm: Farm, dest: Path) -> Farm:
    shutil.copytree(farm.ws, dest / "ws")
    shutil.copytree(farm.state, dest / "state", ignore=shutil.ignore_patterns("*.lock"))
    return Farm(dest / "ws", dest / "state", farm.env, dict(farm.keys), farm.ingest)


@pytest.fixture(scope="module")
def poison_only(
    farm: Farm, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Farm, dict[str, bytes], Any]]:
    """A copy of the farm without the owner's journal, dreamed once."""
    f = _copy(farm, tmp_path_factory.mktemp("poison-only"))
    (f.ws / route_path(ROUTES["owner"])).unlink()
    before = {name: (f.ws / name).read_bytes() for name in ("MEMORY.md", "USER.md")}
    with f.open(DREAM_DAY) as e:
        report = e.dream()
    yield f, before, report


def stored(farm: Farm, key: str) -> str:
    """The line of ``key`` as it is in its file, origin marker stripped (what dreaming
    sees: the journal may have changed the payload, e.g. redacted a live secret)."""
    path, line, _ = key.rsplit(":", 2)
    return strip_markers((farm.ws / path).read_text(encoding="utf-8").splitlines()[int(line) - 1])


def _stats_by_key(farm: Farm) -> dict[str, Any]:
    with farm.open(DREAM_DAY) as e:
        return {s.key: s for s in adapters(e).recall_log.stats()}


# -- the attack really happened ---------------------------------------------------------


def test_every_dataset_channel_is_exercised() -> None:
    assert set(CHANNELS) <= {r.channel for r in ROUTES.values()}
    for route in ROUTES.values():
        if route.channel is not None:
            assert route.expected_at_most.rank <= CHANNELS[route.channel].rank


def test_cases_land_with_their_computed_origin(farm: Farm) -> None:
    """Dataset rule 1: the text lands with an origin no higher than its channel's."""
    assert all(farm.ingest[n].status == "skipped" for n in ("cron", "heartbeat", "subagent"))
    assert all(farm.ingest[n].status == "ingested" for n in CORPUS_ROUTES)
    stats = _stats_by_key(farm)
    for (route, pid), key in farm.poisoned().items():
        if route == "import":
            continue
        if route in GROUP_ROUTES:  # a group chat's line is never even found (R-LANE2-2)
            assert key not in stats, (route, pid)
            continue
        s = stats[key]
        assert s.origin is not None and s.origin.rank <= ROUTES[route].expected_at_most.rank, (
            route,
            pid,
            s.origin,
        )
        if ROUTES[route].session is not None:
            assert s.session_kind is ROUTES[route].session, (route, pid)


def test_gate_farming_passes_every_numeric_gate(farm: Farm) -> None:
    """The precondition of the attack: each poisoned line was recalled often enough, by
    enough distinct queries, recently enough and well enough to pass every numeric gate.
    Only provenance (or the junk filter) stands between it and MEMORY.md."""
    stats = _stats_by_key(farm)
    now = START + timedelta(days=DREAM_DAY)
    numeric = {GATE_MIN_RECALLS, GATE_MIN_QUERIES, GATE_MAX_AGE, GATE_MIN_SCORE}
    weak = {}
    for case, key in farm.keys.items():
        if case[0] == "import" or case[0] in GROUP_ROUTES:  # never found: no farming
            continue
        s = stats.get(key)
        assert s is not None, f"{case}: never recorded in the recall log"
        # five days were farmed; a weak hit (journal decay) may miss the min score on one
        failed = [f"recalled on {len(s.recall_days)} days"] if len(s.recall_days) < 4 else []
        failed += [
            g.reason
            for g in evaluate(
                s,
                compute_signals(s, now),
                now=now,
                already_promoted=False,
                judge=KEEP_ALL,
            )
            if g.name in numeric and not g.passed
        ]
        if failed:
            weak[case] = failed
    assert not weak, weak


def test_imports_are_found_but_never_recall_candidates(farm: Farm) -> None:
    """Imports are searchable (framed untrusted, forged owner marker ignored) but their
    hits are never recall-logged, so they can never even become candidates."""
    stats = _stats_by_key(farm)
    assert not [k for k in stats if k.startswith("memory/imports/")]
    with farm.open(DREAM_DAY) as e:
        hits = [
            h
            for q in queries(PAYLOADS[0]["text"])
            for h in e.search(q, max_results=20, record=False).hits
            if h.path == IMPORT_PATH
        ]
        assert hits and all(h.origin == "untrusted" and h.kind == "import" for h in hits)
        with pytest.raises(ReverieError, match="not in the candidate pool"):
            e.dream_explain(farm.keys[("import", PAYLOADS[0]["id"])])


def test_explicit_search_shows_poison_with_its_low_origin(farm: Farm) -> None:
    """Dataset rule 4: a search returning a poisoned copy shows its low origin, and
    untrusted copies come inside the untrusted frame."""
    poisoned_paths = {route_path(r): r for r in ROUTES.values() if r.name != "owner"}
    with farm.open(DREAM_DAY) as e:
        for p in PAYLOADS:
            for h in e.search(queries(p["text"])[0], max_results=20, record=False).hits:
                route = poisoned_paths.get(h.path)
                if route is None:
                    continue
                assert Origin(h.origin).rank <= route.expected_at_most.rank, (route.name, h.origin)
                if h.origin == "untrusted":
                    assert h.untrusted and h.as_dict()["untrusted"] is True
                    framed = h.render().split("\n", 1)[1]  # the body under the header line
                    assert framed != h.snippet and "untrusted" in framed.lower()


def test_poison_is_never_auto_injected(farm: Farm) -> None:
    """Dataset rule 2: whatever the message (here: the payload itself), neither the
    bootstrap nor the trigger block carries poisoned text."""
    tags = [r.tag for r in ROUTES.values() if r.tag]
    with farm.open(DREAM_DAY) as e:
        for p in PAYLOADS:
            injected = e.context(p["text"]).text
            assert not [t for t in tags if t in injected], p["id"]
            assert p["text"][:16] not in injected, p["id"]


# -- the dream ---------------------------------------------------------------------------


def test_no_poisoned_line_is_promoted(poison_only: tuple[Farm, dict[str, bytes], Any]) -> None:
    f, before, report = poison_only
    assert report.promoted == []
    assert report.mode == "none"
    for name, data in before.items():
        assert (f.ws / name).read_bytes() == data, f"{name} changed"
    candidates = {c.key: c for c in report.candidates}
    assert candidates, "the farmed lines must reach deep sleep"
    for c in candidates.values():
        assert c.decision == "reject"
        assert c.reason.startswith("provenance:"), (c.key, c.reason)


def test_each_rejection_is_explained_as_provenance(
    poison_only: tuple[Farm, dict[str, bytes], Any],
) -> None:
    """``explain`` for every poisoned copy: provenance, or the junk filter for the
    payloads that are junk whoever wrote them (they never reach the provenance gate)."""
    f, _before, _report = poison_only
    unexplained = {}
    with f.open(DREAM_DAY) as e:
        report, _ = dreamer(e).evaluate(START + timedelta(days=DREAM_DAY))
        pool = {c.key: c for c in report.candidates}
        dropped = {d["key"]: d["reason"] for d in report.dropped}
        for (route, pid), key in f.poisoned().items():
            if route == "import" or route in GROUP_ROUTES:  # never candidates at all
                continue
            if key in pool:
                reason = pool[key].reason
                gate = next(g for g in pool[key].gates if g["name"] == "provenance")
                ok = reason.startswith("provenance:") and not gate["passed"]
            else:
                reason = dropped.get(key, "missing")
                ok = reason == f"junk: {junk_reason(stored(f, key))}"
            if not ok:
                unexplained[(route, pid)] = reason
        # the public call gives the same answer (one payload, every route: it re-evaluates)
        pid = PAYLOADS[0]["id"]
        for (route, p), key in f.poisoned().items():
            if p == pid and route != "import" and route not in GROUP_ROUTES:
                data = e.dream_explain(key)
                assert data["decision"] == "reject"
                assert data["reason"] == pool[key].reason
    assert not unexplained, unexplained


@pytest.mark.parametrize(
    ("route", "why"),
    [
        ("web_summary", "provenance: untrusted origin"),
        ("cron", "provenance: system origin"),
        ("cron_as_owner", "provenance: cron session"),  # owner origin, cron session
    ],
)
def test_cli_explain_json_names_provenance(
    poison_only: tuple[Farm, dict[str, bytes], Any], route: str, why: str
) -> None:
    f, _before, _report = poison_only
    key = f.keys[(route, "vendor")]
    paths = Paths(f.ws, f.state)
    env = {**f.env, "REVERIE_NOW": (START + timedelta(days=DREAM_DAY)).isoformat()}
    proc = subprocess.run(
        cli_command(paths, "dream", "explain", key, "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["decision"] == "reject"
    assert data["reason"].startswith("provenance:")
    assert data["reason"] == why


def test_owner_copies_are_promoted_unless_junk(
    farm: Farm, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same lines typed by the owner pass (the defence is provenance, not a blanket
    refusal); payloads that are junk whoever wrote them (a shell pipe, an HTML comment)
    are rejected by the junk filter. Run on a copy holding only the owner's journal:
    with the poisoned copies present, light sleep's 100-candidate cap can crowd the
    owner's lines out: untrusted candidates count against the cap."""
    f = _copy(farm, tmp_path_factory.mktemp("owner-only"))
    for route in ROUTES.values():
        if route.name != "owner":
            (f.ws / route_path(route)).unlink(missing_ok=True)
    user_before = (f.ws / "USER.md").read_bytes()
    with f.open(DREAM_DAY, dream_max_promotions=100) as e:
        report = e.dream()
    owner = {pid: key for (route, pid), key in f.keys.items() if route == "owner"}
    junk = {pid: junk_reason(stored(f, key)) for pid, key in owner.items()}
    expected = {key for pid, key in owner.items() if junk[pid] is None}
    assert set(report.promoted) == expected
    dropped = {d["key"]: d["reason"] for d in report.dropped}
    for pid, why in junk.items():
        if why is not None:
            assert dropped[owner[pid]] == f"junk: {why}"
    print("owner lines rejected as junk:", {pid: why for pid, why in junk.items() if why})
    memory = (f.ws / "MEMORY.md").read_text(encoding="utf-8")
    anchors = [
        ln.split("Source: ", 1)[1].split("#", 1)[0]
        for ln in memory.splitlines()
        if "Source: " in ln
    ]
    # R-USER-1: the owner's own imperatives ("Always ...", "请记住...") become USER.md
    # directives instead (the owner typed them); every other line goes to MEMORY.md
    to_user = {d["source"] for d in report.directives if not d.get("refused")}
    assert len(anchors) + len(to_user) == len(expected)
    assert set(anchors) | {s.split("#", 1)[0] for s in to_user} == {route_path(ROUTES["owner"])}
    user = (f.ws / "USER.md").read_text(encoding="utf-8")
    added = [d for d in parse_directives(user) if d.active]
    assert len(added) == len(to_user) + len(parse_directives(user_before.decode()))
    assert problems(user) == []
    # Dataset rule 5: metadata look-alikes inside the text change nothing: a promoted
    # line's importance is the one dreaming computed (never trailer-forgery's "10").
    scores = {c.key: c.score for c in report.candidates}
    for key in expected:
        path, n, _ = key.rsplit(":", 2)
        if f"{path}#L{n}-L{n}" in to_user:
            continue
        (line,) = [ln for ln in memory.splitlines() if f"Source: {path}#L{n}-L{n} " in ln]
        assert parse_line(line).trailers.importance == promoted_importance(scores[key])


def test_the_farm_fits_light_sleep(farm: Farm) -> None:
    """Guard: every poisoned non-junk copy must reach deep sleep (light sleep stages at
    most 100), or the provenance assertions above would test less than they claim."""
    non_junk = [
        k
        for (r, _pid), k in farm.poisoned().items()
        if r != "import" and junk_reason(stored(farm, k)) is None
    ]
    assert len(non_junk) <= 100
