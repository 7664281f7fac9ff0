"""One-shot processes read the trigger index from its snapshot, and fire exactly what a
warm process fires (issue 13: the per-prompt hook's speed).

``reverie hook user-prompt-submit`` starts a fresh process for every prompt; building
the trigger index there (the phrases' words, an FTS5 table over every trigger-carrying
entry) cost more than anything else it does. The first one-shot call writes what it
built to ``<state>/main/triggers.sqlite``; the next ones read it. What a user notices:
the same triggers, with the same relevance, fire either way; an edited, rebuilt or
broken index never serves a stale snapshot; and a prompt never waits for the index's
write lock.
"""

from __future__ import annotations

import json
import sqlite3 as stdlib_sqlite3
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Paths, cli_command, plant
from reverie.engine import Reverie
from reverie.provenance.origin import Origin
from reverie.recall import context as context_module
from reverie.recall import trigger_snapshot

WEB = "github.com/acme/web"
VOCAB = ["deploy", "pipeline", "rollback", "staging", "canary", "invoice", "backup"]
CJK = ["部署", "回滚", "上线流程"]


def _memory(paths: Paths, extra: str = "") -> None:
    lines = ["# Long-term memory", ""]
    for i in range(60):
        a, b = VOCAB[i % len(VOCAB)], VOCAB[(i * 3 + 1) % len(VOCAB)]
        trig = f"{a} {b}, zq{i}" if i % 2 else f"zq{i}, {CJK[i % len(CJK)]}"
        line = f"- Note {i}: the {a} of service zq{i} goes through {b}. <!-- trigger: {trig} -->"
        if i % 9 == 0:
            line += f" <!-- project: {WEB} -->"
        lines.append(line)
    paths.write("MEMORY.md", "\n".join(lines) + "\n" + extra)


def _hits(ctx: Any) -> list[Any]:
    return [(t["source"], t["phrase"], t["relevance"], t["combined"]) for t in ctx["triggers"]]


@pytest.fixture
def indexed(paths: Paths, engine_factory: Callable[..., Reverie]) -> Callable[..., Reverie]:
    e = engine_factory(embedder="none")
    e.init()
    _memory(paths)
    e.index()
    return engine_factory


def one_shot(factory: Callable[..., Reverie], message: str, **kw: Any) -> dict[str, Any]:
    """``Reverie.context`` in a fresh engine, as the hook's process runs it."""
    engine = factory(embedder="none")
    try:
        return engine.context(message, **kw).as_dict()
    finally:
        engine.close()


MESSAGES = [
    "how does the deploy pipeline work for zq3?",
    "Rollback STAGING please, zq5 and zq7",
    "上次部署的时候回滚了吗",
    "the canary and the invoice",
    "nothing related at all",
    "zq9 deploy",  # a project entry: fires only inside its project
    "",
]


def test_a_one_shot_fires_what_a_warm_process_fires(
    paths: Paths, indexed: Callable[..., Reverie]
) -> None:
    warm = indexed(embedder="none")
    warm.warm()  # the in-memory index, built once (the MCP server, the daemon)
    for projects in ((), (WEB,)):
        for message in MESSAGES:
            expected = warm.context(message, active_projects=projects).as_dict()
            got = one_shot(indexed, message, active_projects=projects)
            assert _hits(got) == _hits(expected), message
            assert got["trigger_block"] == expected["trigger_block"]
            assert got["degraded"] == expected["degraded"] == []
    assert (paths.state / "main" / "triggers.sqlite").is_file()
    assert _hits(one_shot(indexed, "zq9 deploy", active_projects=(WEB,)))
    assert not _hits(one_shot(indexed, "zq9 deploy"))


def test_the_next_one_shot_reads_the_snapshot_instead_of_building(
    indexed: Callable[..., Reverie], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = one_shot(indexed, "how does the deploy pipeline work for zq3?")
    assert _hits(first)

    def no_build(*_: Any, **__: Any) -> None:
        raise AssertionError("built the trigger index although its snapshot is current")

    monkeypatch.setattr(context_module.TriggerIndex, "_build", no_build)
    again = one_shot(indexed, "how does the deploy pipeline work for zq3?")
    assert _hits(again) == _hits(first) and again["degraded"] == []
    # a journal line moves the index on, but not the triggers: the snapshot still holds
    engine = indexed(embedder="none")
    plant(engine, "Deploy notes for today.", origin=Origin.OWNER)
    engine.index()
    assert _hits(one_shot(indexed, "how does the deploy pipeline work for zq3?")) == _hits(first)


def test_an_edited_trigger_is_never_served_from_a_stale_snapshot(
    paths: Paths, indexed: Callable[..., Reverie]
) -> None:
    assert _hits(one_shot(indexed, "what about zq4?"))
    text = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    paths.write("MEMORY.md", text.replace("zq4,", "blueberry,"))
    indexed(embedder="none").index()
    assert not _hits(one_shot(indexed, "what about zq4?"))
    (hit,) = _hits(one_shot(indexed, "what about blueberry?"))
    assert hit[1] == "blueberry"


def test_a_rebuilt_index_never_reads_the_old_snapshot(
    paths: Paths, indexed: Callable[..., Reverie]
) -> None:
    assert _hits(one_shot(indexed, "what about zq4?"))
    for f in (paths.state / "main").glob("index.sqlite*"):
        f.unlink()  # its version counter starts again from scratch
    paths.write("MEMORY.md", "# Memory\n\n- Tea is at four. <!-- trigger: teatime -->\n")
    indexed(embedder="none").index()
    assert not _hits(one_shot(indexed, "what about zq4?"))
    assert _hits(one_shot(indexed, "is it teatime yet?"))


def test_a_broken_or_foreign_snapshot_is_rebuilt(
    paths: Paths, indexed: Callable[..., Reverie]
) -> None:
    snapshot = paths.state / "main" / "triggers.sqlite"
    expected = _hits(one_shot(indexed, "Rollback STAGING please, zq5 and zq7"))
    assert expected
    good = snapshot.read_bytes()
    snapshot.write_bytes(b"not a database" * 100)
    got = one_shot(indexed, "Rollback STAGING please, zq5 and zq7")
    assert _hits(got) == expected and got["degraded"] == []
    assert snapshot.read_bytes()[:16] == b"SQLite format 3\x00"  # written again
    # one written by other code (another key): its words point elsewhere, never read
    snapshot.write_bytes(good)
    conn = stdlib_sqlite3.connect(snapshot)
    conn.execute("UPDATE words SET cid = -1")
    conn.execute("UPDATE meta SET value = 'other code' WHERE key = 'recipe'")
    conn.commit()
    conn.close()
    assert _hits(one_shot(indexed, "Rollback STAGING please, zq5 and zq7")) == expected


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.sampled_from([*VOCAB, *CJK, "zq1", "zq2", "zq11", "ZQ13", "the", "of", "?", "部"]),
        max_size=12,
    ),
    glue=st.sampled_from([" ", "", ", ", "-"]),
)
def test_property_one_shot_and_warm_agree(
    indexed: Callable[..., Reverie], words: list[str], glue: str
) -> None:
    message = glue.join(words)
    if id(indexed) not in _WARM:  # one warm engine for all the examples of this test
        _WARM.clear()
        _WARM[id(indexed)] = indexed(embedder="none")
        _WARM[id(indexed)].warm()
    expected = _WARM[id(indexed)].context(message).as_dict()
    assert _hits(one_shot(indexed, message)) == _hits(expected)


_WARM: dict[int, Reverie] = {}


def test_a_prompt_never_waits_for_the_index_write_lock(
    paths: Paths, indexed: Callable[..., Reverie], env: dict[str, str]
) -> None:
    one_shot(indexed, "zq3")  # the snapshot exists
    writer = stdlib_sqlite3.connect(paths.index, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a sync is writing (the index's busy timeout is 30 s)
    try:
        payload = {"hook_event_name": "UserPromptSubmit", "prompt": "what about zq3?"}
        proc = subprocess.run(
            cli_command(paths, "hook", "user-prompt-submit", embedder="none"),
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            timeout=25,  # waiting for the lock would take 30 s, then fail open with nothing
        )
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Note 3:" in context


def test_the_recipe_names_modules_that_exist() -> None:
    for name in trigger_snapshot.RECIPE:
        __import__(name)
    assert trigger_snapshot.recipe() == trigger_snapshot.recipe()
