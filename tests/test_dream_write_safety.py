"""Write safety of the consolidation turn (R-DREAM-7..9) and restore (R-DREAM-10).

The model (a ScriptedLLM) gets MEMORY.md and the promoted candidates and returns a
revised file. A user must see that:

- a person's edit made *during* the model turn survives: the rewrite is dropped and
  the promotion is appended to the file as it is now, with the reason in DREAMS.md;
- a rewrite that loses too much, drops a person's line, loses an anchor or a trailer,
  breaks the budget, or is not (schema-)valid JSON falls back to append-only, the
  reason in DREAMS.md and in the JSON report;
- a valid rewrite is applied as is (mode ``rewrite``), the person's entries kept;
- kill -9 at any moment of a MEMORY.md write leaves the old or the new file;
- ``reverie dream restore`` puts the previous version back.

One farmed workspace (a fact recalled by three queries on three days) is built per
module and copied for each test; the dream runs on ``FIXED_NOW``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_NOW, Paths, adapters, base_env, cli_command, merged_env, plant
from reverie.clock import Clock
from reverie.dreaming.memory_file import append_generated
from reverie.engine import Reverie
from reverie.llm.base import Message
from reverie.llm.fake import ScriptedLLM, SimulatedTimeout
from reverie.provenance.origin import Origin, SessionKind

NOW = datetime.fromisoformat(FIXED_NOW)
JOURNAL = f"memory/{(NOW - timedelta(days=4)).date().isoformat()}.md"
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
QUERIES = (
    "staging database host orca-db-2 Frankfurt region",
    "which host does the staging database live on",
    "staging database in the Frankfurt region",
)
HUMAN = ("- Always answer in British English.", "- The owner's cat is called Miso.")
DUPLICATE = "The VPN endpoint is vpn.example.org."
GENERATED = [
    f"- {DUPLICATE} Source: memory/2026-03-30.md#L3-L3 <!-- importance: 6 -->",
    f"- {DUPLICATE} Source: memory/2026-04-02.md#L5-L5 <!-- importance: 6 -->",
    "- Deploys happen on Tuesdays. Source: memory/2026-04-03.md#L3-L3 <!-- importance: 7 -->",
    "- The CI runners use Python 3.11. Source: memory/2026-04-04.md#L4-L4 <!-- importance: 5 -->",
    "- Backups run nightly at 02:00 UTC. Source: memory/2026-04-05.md#L3-L3 <!-- importance: 6 -->",
    "- The design review is every Thursday. Source: memory/2026-04-06.md#L6-L6 <!-- importance: 5 -->",
    "- The wiki lives at wiki.example.org. Source: memory/2026-04-07.md#L3-L3 <!-- importance: 4 -->",
    "- Grafana dashboards are in the ops folder. Source: memory/2026-04-08.md#L3-L3 <!-- importance: 4 -->",
]
MERGED = (  # the two VPN entries merged into one that cites both sources
    f"- {DUPLICATE} Source: memory/2026-03-30.md#L3-L3 Source: memory/2026-04-02.md#L5-L5 "
    "<!-- importance: 6 -->"
)
OLD_MEMORY = append_generated("# Long-term memory\n\n" + "\n".join(HUMAN) + "\n", GENERATED)
PERSON_EDIT = "- Edited by a person while the dream was running."


@dataclass(frozen=True)
class Site:
    paths: Paths
    env: dict[str, str]

    def open(self, days: float = 0, **flags: Any) -> Reverie:
        return Reverie.open(
            self.paths.workspace,
            self.paths.state,
            environ=self.env,
            clock=Clock(NOW + timedelta(days=days)),
            **{"embedder": "fake", **flags},
        )

    @property
    def memory(self) -> Path:
        return self.paths.workspace / "MEMORY.md"

    @property
    def dreams(self) -> str:
        return (self.paths.workspace / "DREAMS.md").read_text(encoding="utf-8")

    def cli(
        self, *args: str, env: dict[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cli_command(self.paths, *args),
            env=merged_env(self.env, env),
            capture_output=True,
            text=True,
            timeout=120,
        )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("template")
    site = Site(Paths(root / "ws", root / "state"), base_env(root))
    with site.open(-4) as e:
        e.init()
        site.memory.write_text(OLD_MEMORY, encoding="utf-8")
        plant(
            e,
            "Lunch was a sandwich again, nothing worth keeping.",
            origin=Origin.OWNER,
            session=SessionKind.INTERACTIVE,
        )
        plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
        e.index()
    for day in (-3, -2, -1):
        with site.open(day) as e:
            for q in QUERIES:
                e.search(q)
    with site.open() as e:
        assert len(e.dream(dry_run=True).promoted) == 1, "the template must have one promotion"
    return site


@pytest.fixture
def site(template: Site, tmp_path: Path) -> Site:
    shutil.copytree(template.paths.workspace, tmp_path / "ws")
    shutil.copytree(
        template.paths.state, tmp_path / "state", ignore=shutil.ignore_patterns("*.lock")
    )
    return Site(Paths(tmp_path / "ws", tmp_path / "state"), base_env(tmp_path))


# -- the scripted model ---------------------------------------------------------------------


def prompt(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The MEMORY.md and the candidates the consolidation turn was given."""
    user = messages[-1].content
    memory = user.split("<<<MEMORY\n", 1)[1].rsplit("\nMEMORY>>>", 1)[0]
    return memory, json.loads(user.split("CANDIDATES (data):\n", 1)[1])


def rewrite(
    messages: Sequence[Message],
    *,
    drop: Sequence[str] = tuple(GENERATED[:2]),
    entry: Callable[[dict[str, Any]], str] = lambda c: str(c["entry"]),
    extra: Sequence[str] = (MERGED,),
) -> dict[str, Any]:
    """What a well-behaved model returns: the file with ``drop`` lines removed and
    ``extra`` added (by default the two duplicate VPN entries merged into one that cites
    both) and the candidates added."""
    memory, cands = prompt(messages)
    kept = "".join(ln for ln in memory.splitlines(keepends=True) if ln.rstrip("\n") not in drop)
    new = append_generated(kept, [entry(c) for c in cands] + list(extra))
    return {"memory": new, "operations": [{"candidate": c["id"], "op": "added"} for c in cands]}


def with_model(site: Site, *replies: Any) -> tuple[Reverie, ScriptedLLM]:
    model = ScriptedLLM(list(replies))
    return site.open(llm=model), model


def append_only_result(model: ScriptedLLM, base: str = OLD_MEMORY) -> str:
    """MEMORY.md after an append-only promotion of what the model was offered."""
    _memory, cands = prompt(model.calls[0].messages)
    return append_generated(base, [c["entry"] for c in cands])


def assert_fell_back(site: Site, report: Any, reason: str) -> None:
    assert report.mode == "append-only"
    assert reason in (report.fallback_reason or ""), report.fallback_reason
    assert reason in json.loads(json.dumps(report.as_dict()))["fallback_reason"]
    assert f"why: {report.fallback_reason}" in site.dreams
    text = site.memory.read_text(encoding="utf-8")
    assert all(h in text for h in HUMAN)
    assert f"Source: {JOURNAL}#L" in text


# -- tests ----------------------------------------------------------------------------------


def test_a_valid_rewrite_is_applied(site: Site) -> None:
    replies: list[dict[str, Any]] = []

    def model_turn(messages: Sequence[Message]) -> dict[str, Any]:
        replies.append(rewrite(messages))
        return replies[-1]

    engine, model = with_model(site, model_turn)
    with engine:
        report = engine.dream()
        images = engine.preimages()
    assert report.mode == "rewrite" and report.fallback_reason is None
    assert len(report.promoted) == 1
    assert site.memory.read_text(encoding="utf-8") == replies[0]["memory"]
    new = site.memory.read_text(encoding="utf-8")
    assert all(h in new for h in HUMAN)
    assert new.count(DUPLICATE) == 1  # the model merged the duplicate
    assert report.counts["added"] == 1
    assert [p.read_text(encoding="utf-8") for p in images] == [OLD_MEMORY]
    assert "rewrite" in site.dreams and "added 1" in site.dreams
    # the model saw the data with provenance and the anchor (R-DREAM-7)
    _memory, cands = prompt(model.calls[0].messages)
    assert cands[0]["provenance"] == "owner" and cands[0]["source"].startswith(JOURNAL)
    assert model.calls[0].json_schema is not None


@pytest.mark.parametrize("case", ["names a source no entry had", "drops a source"])
def test_a_merge_naming_a_source_no_entry_had_or_dropping_one_is_refused(
    site: Site, case: str
) -> None:
    """Issue 39: a merged duplicate cites both its sources (as ``rewrite`` does by
    default, and ``test_a_model_may_merge_old_entries_it_can_trace``), never a third
    no entry had, and never only one of them."""
    forged = {
        "names a source no entry had": MERGED.replace(
            " <!--", " Source: memory/2026-01-01.md#L9-L9 <!--"
        ),
        "drops a source": GENERATED[0],
    }[case]
    engine, model = with_model(site, lambda m: rewrite(m, extra=[forged]))
    with engine:
        report = engine.dream()
    why = "names a source no gate passed" if case.startswith("names") else "dropped a source"
    assert_fell_back(site, report, why)
    assert site.memory.read_text(encoding="utf-8") == append_only_result(model)


def test_a_restatement_from_its_source_words_and_day_is_accepted(site: Site) -> None:
    """Issue 39 point 1: the model may restate a promoted line (reworded, the day
    written), using the source's words, its day and function words only."""

    def third_person(c: dict[str, Any]) -> str:
        day = str(c["observed"])[:10]
        said = "The staging database has been on host orca-db-2, in the Frankfurt region"
        return str(c["entry"]).replace(FACT.rstrip("."), f"{said} ({day})", 1)

    engine, _model = with_model(site, lambda m: rewrite(m, entry=third_person))
    with engine:
        report = engine.dream()
    assert report.mode == "rewrite", report.fallback_reason
    text = site.memory.read_text("utf-8")
    assert "The staging database has been on host orca-db-2, in the Frankfurt" in text


def test_the_model_never_sees_a_stored_address_and_the_rewrite_keeps_it(site: Site) -> None:
    """Issue 22.5: every path to a model is redacted; the consolidation turn gets
    numbered placeholders, and what it returns gets the values back (nothing lost)."""
    kept = "- The on-call phone is +1 415 555 0100, mail oncall@acme.example for pages."
    site.memory.write_text(OLD_MEMORY.replace(HUMAN[1], f"{HUMAN[1]}\n{kept}"), encoding="utf-8")
    engine, model = with_model(site, rewrite)
    with engine:
        report = engine.dream()
    shown = model.calls[0].messages[-1].content
    assert "oncall@acme.example" not in shown and "415 555 0100" not in shown
    assert "[REDACTED:email:" in shown and "[REDACTED:phone:" in shown
    assert report.mode == "rewrite", report.fallback_reason
    assert kept in site.memory.read_text(encoding="utf-8")


def test_a_person_edit_during_the_model_turn_survives(site: Site) -> None:
    def model_turn(messages: Sequence[Message]) -> dict[str, Any]:
        with site.memory.open("a", encoding="utf-8") as fh:  # a person saves in an editor
            fh.write(PERSON_EDIT + "\n")
        return rewrite(messages)

    engine, model = with_model(site, model_turn)
    with engine:
        report = engine.dream()
    assert_fell_back(site, report, "MEMORY.md was edited during the dream")
    text = site.memory.read_text(encoding="utf-8")
    assert PERSON_EDIT in text
    assert text.count(DUPLICATE) == 2  # the rewrite (which merged them) was dropped
    assert text == append_only_result(model, OLD_MEMORY + PERSON_EDIT + "\n")


def _drop_three_generated(m: Sequence[Message]) -> Any:
    return rewrite(m, drop=GENERATED[2:5])  # 3 of 10 entries: 30%


def _drop_human(m: Sequence[Message]) -> Any:
    return rewrite(m, drop=HUMAN[:1])


def _no_anchor(m: Sequence[Message]) -> Any:
    return rewrite(m, entry=lambda c: str(c["entry"]).replace(f" Source: {c['source']}", ""))


def _no_importance(m: Sequence[Message]) -> Any:
    return rewrite(m, entry=lambda c: str(c["entry"]).split(" <!-- importance:")[0])


def _over_budget(m: Sequence[Message]) -> Any:
    return rewrite(m, extra=["- " + "A very long padding entry. " * 400])


def _no_operations(m: Sequence[Message]) -> Any:
    return {**rewrite(m), "operations": []}


def _unbalanced_markers(m: Sequence[Message]) -> Any:
    data = rewrite(m)
    return {**data, "memory": data["memory"] + "<!-- reverie:generated -->\n"}


def _unsourced_word(m: Sequence[Message]) -> Any:
    return rewrite(m, entry=lambda c: str(c["entry"]).replace("- ", "- Secretly, ", 1))


BAD_REPLIES: dict[str, tuple[Any, str]] = {
    "adds a word no source holds": (_unsourced_word, "says what its sources did not (secret"),
    "loses 30% of entries": (_drop_three_generated, "loss: 3 of 10"),
    "drops a person's entry": (_drop_human, "person's text dropped"),
    "omits a source anchor": (_no_anchor, "anchors"),
    "drops the importance trailer": (_no_importance, "trailers"),
    "exceeds the budget": (_over_budget, "budget"),
    "not JSON": ("Sure! I merged the duplicates and added the new fact.", "not valid JSON"),
    "schema-invalid": ({"memory": 42, "operations": "none"}, "schema"),
    "no operation per candidate": (_no_operations, "operations"),
    "does not parse": (_unbalanced_markers, "structure"),
    "times out": (SimulatedTimeout(), "consolidation turn failed"),
}


@pytest.mark.parametrize("case", list(BAD_REPLIES))
def test_a_bad_rewrite_falls_back_to_append_only(site: Site, case: str) -> None:
    reply, reason = BAD_REPLIES[case]
    engine, model = with_model(site, reply)
    with engine:
        report = engine.dream()
    assert_fell_back(site, report, reason)
    assert site.memory.read_text(encoding="utf-8") == append_only_result(model)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("not json at all", "not valid JSON"),
        ({"memory": "# Long-term memory\n", "operations": []}, "rewrite rejected"),
    ],
)
def test_cli_json_report_names_the_fallback(
    site: Site, tmp_path: Path, reply: Any, reason: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply]))
    proc = site.cli(
        "dream",
        "run",
        "--json",
        env={"REVERIE_LLM": "fake", "REVERIE_FAKE_LLM_SCRIPT": str(script)},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "append-only" and len(data["promoted"]) == 1
    assert reason in data["fallback_reason"]
    assert f"why: {data['fallback_reason']}" in site.dreams


def test_restore_brings_the_previous_version_back(site: Site) -> None:
    with site.open() as e:
        assert e.dream().mode == "append-only"
    promoted = site.memory.read_text(encoding="utf-8")
    assert promoted != OLD_MEMORY
    listed = site.cli("dream", "restore", "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    (name,) = json.loads(listed.stdout)
    proc = site.cli("dream", "restore", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"restored": name}
    assert site.memory.read_text(encoding="utf-8") == OLD_MEMORY
    with site.open() as e:
        # the version it replaced is kept too, and the index follows the file
        assert promoted in [p.read_text(encoding="utf-8") for p in e.preimages()]
        hits = e.search("orca-db-2 staging database host", record=False).hits
        assert not [h for h in hits if h.path == "MEMORY.md"]
    proc = site.cli("dream", "restore", "no-such-image.md", "--json")
    assert proc.returncode != 0


# -- kill -9 --------------------------------------------------------------------------------

WRITER = """
import itertools, sys
from pathlib import Path
from reverie.storage.files import atomic_write
target, a, b = Path(sys.argv[1]), Path(sys.argv[2]).read_text(), Path(sys.argv[3]).read_text()
print("ready", flush=True)
for i in itertools.count():
    atomic_write(target, b if i % 2 == 0 else a)
"""


def test_kill_9_during_memory_writes_leaves_old_or_new(site: Site, tmp_path: Path) -> None:
    """SIGKILL a process that rewrites MEMORY.md with the dreamer's atomic write, at
    random moments: the file is always one whole version. A killed write may leave its
    ``.MEMORY.md.*.tmp`` behind; such a file is never indexed or read as memory."""
    old = (
        OLD_MEMORY + "\n".join(f"- Old filler entry {i} about nothing." for i in range(4000)) + "\n"
    )
    new = (
        OLD_MEMORY
        + "\n".join(f"- New filler entry {i} about zanzibarite." for i in range(4000))
        + "\n"
    )
    (tmp_path / "a.md").write_text(old)
    (tmp_path / "b.md").write_text(new)
    site.memory.write_text(old)
    rng = random.Random(1234)
    for _ in range(8):
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(site.memory),
                str(tmp_path / "a.md"),
                str(tmp_path / "b.md"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=rng.uniform(0.0, 0.08))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        text = site.memory.read_text()
        assert text in (old, new), "MEMORY.md is neither the old nor the new version"
    leftovers = sorted(
        p.name
        for p in site.paths.workspace.iterdir()
        if p.name not in {"AGENTS.md", "MEMORY.md", "USER.md", "DREAMS.md", "memory"}
    )
    assert all(n.startswith(".MEMORY.md.") and n.endswith(".tmp") for n in leftovers), leftovers
    # whatever was left behind is not memory: not indexed, not bootstrapped, not searchable
    with site.open() as e:
        e.index()
        sources = {r[0] for r in adapters(e).port.conn.execute("SELECT path FROM sources")}
        assert not [s for s in sources if s.endswith(".tmp")]
        boot = e.bootstrap()
        assert ".tmp" not in json.dumps(boot.as_dict(), default=str)
        hits = e.search("zanzibarite filler entry", max_results=20, record=False).hits
        assert {h.path for h in hits} <= {"MEMORY.md"}
    print(f"kill -9: {len(leftovers)} temp file(s) left behind: {leftovers}")


def test_kill_9_during_a_real_dream_leaves_old_or_new(
    site: Site, template: Site, tmp_path: Path
) -> None:
    """SIGKILL ``reverie dream run`` at a random moment: MEMORY.md is the old file or
    the promoted one, and the next dream completes the promotion."""
    finished = Site(Paths(tmp_path / "done-ws", tmp_path / "done-state"), site.env)
    shutil.copytree(site.paths.workspace, finished.paths.workspace)
    shutil.copytree(site.paths.state, finished.paths.state)
    assert finished.cli("dream", "run", "--json").returncode == 0
    new = finished.memory.read_text(encoding="utf-8")
    assert new != OLD_MEMORY
    rng = random.Random(99)
    for _ in range(3):
        child = subprocess.Popen(
            cli_command(site.paths, "dream", "run", "--json"),
            env=site.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            child.wait(timeout=rng.uniform(0.3, 0.9))
        except subprocess.TimeoutExpired:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        assert site.memory.read_text(encoding="utf-8") in (OLD_MEMORY, new)
    assert site.cli("dream", "run", "--json").returncode == 0
    assert site.memory.read_text(encoding="utf-8") == new
