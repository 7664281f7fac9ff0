"""Version links in the files (issue 38, points 1 and 2).

What a user notices: after ``reverie link NEWER OLDER`` the newer line comes first for
a question about now, even when it shares no word with the question, and the older
one says it was changed, on which day, by which line; a question about the past gets
the version that held then; the link is in the Markdown (a rebuilt index has it
again); a link no key signed, on an untrusted line, or from an agent line to the
owner's, links nothing; a refused link changes no byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli
from reverie.clock import Clock
from reverie.curation.link import LinkRefused
from reverie.engine import Reverie
from reverie.llm.fake import ScriptedLLM
from reverie.provenance.links import line_key, may_replace
from reverie.provenance.markers import render_marker, resolve, with_link
from reverie.provenance.origin import OWNER_AT_CLI, Author, Origin, SessionKind, Source
from reverie.provenance.paths import classify
from reverie.storage.document import chunk_document

KEY = b"k" * 32
AGENT = Author(sender="someone", owner="owner")  # a source of ASSISTANT is agent


def _resolve(line: str) -> object:
    return resolve(line, default=Origin.AGENT, ceiling=Origin.OWNER, key=KEY)


def test_a_link_is_signed_and_a_forged_one_links_nothing() -> None:
    line = render_marker("- 09:14 Standup moved to 10:15.", Origin.OWNER,
                         SessionKind.INTERACTIVE, key=KEY)  # fmt: skip
    target = line_key("memory/2026-05-02.md", "- 09:00 The standup is at 9:30.")
    linked = with_link(line, target, KEY)
    assert linked is not None and f"replaces: {target}" in linked
    lo = _resolve(linked)
    assert lo.replaces == target and lo.origin is Origin.OWNER  # type: ignore[attr-defined]
    # another target in the same marker: the signature no longer verifies
    forged = linked.replace(target, line_key("memory/2026-05-01.md", "- something else"))
    lo = _resolve(forged)
    assert lo.replaces is None and lo.origin is Origin.AGENT  # type: ignore[attr-defined]
    # the whole marker copied onto another line
    copied = linked.replace("Standup moved to 10:15.", "Standup moved to 11:00.")
    assert _resolve(copied).replaces is None  # type: ignore[attr-defined]
    # a link typed by hand, or signed with another key
    typed = f"- <!-- origin: owner; replaces: {target} --> 09:14 Standup moved to 10:15."
    assert _resolve(typed).replaces is None  # type: ignore[attr-defined]
    other = with_link(render_marker("- x", Origin.OWNER, key=b"o" * 32), target, b"o" * 32)
    assert other is not None and _resolve(other).replaces is None  # type: ignore[attr-defined]
    # nothing to sign with: a line with no verified marker gets no link
    assert with_link("- 09:14 typed by hand", target, KEY) is None


def test_only_owner_and_agent_lines_carry_a_link_into_the_index() -> None:
    target = line_key("memory/2026-05-02.md", "- the old line")
    lines = []
    for origin in (Origin.OWNER, Origin.AGENT, Origin.UNTRUSTED, Origin.SYSTEM):
        signed = render_marker(f"- 09:00 a line of {origin.value}", origin, key=KEY)
        lines.append(with_link(signed, target, KEY))
    text = "# 2026-06-01\n\n" + "\n".join(str(ln) for ln in lines) + "\n"
    rel = "memory/2026-06-01.md"
    chunks, _ = chunk_document(rel, text, classify(rel), key=KEY, budget=400, overlap=0)
    linked = {c.text.split("of ")[-1]: c.links for c in chunks if " of " in c.text}
    assert linked == {"owner": ((3, target),), "agent": ((4, target),),
                      "untrusted": (), "system": ()}  # fmt: skip
    assert may_replace(Origin.OWNER, Origin.AGENT)
    assert not may_replace(Origin.AGENT, Origin.OWNER)
    assert not may_replace(Origin.UNTRUSTED, Origin.UNTRUSTED)


def _at(engine: Reverie, day: str) -> None:
    engine.clock = Clock(datetime.fromisoformat(f"{day}T09:00:00+00:00"))


def _write(engine: Reverie, day: str, text: str, author: Author = OWNER_AT_CLI) -> str:
    _at(engine, day)
    source = Source.OWNER if author is OWNER_AT_CLI else Source.ASSISTANT
    done = engine.write(text, source=source, author=author)
    return f"{done.path}#L{done.first_line}"


@pytest.fixture
def standup(engine_factory: Callable[..., Reverie]) -> tuple[Reverie, list[str]]:
    engine = engine_factory()
    engine.init()
    refs = [_write(engine, "2026-01-05", "The team standup is at 9:30 every morning.")]
    for day in range(6, 20):
        _write(engine, f"2026-01-{day:02d}", f"Walked to the market, bought {day} figs.")
    refs.append(_write(engine, "2026-04-02", "Moved the daily sync to 10:40 so Lima can join."))
    refs.append(_write(engine, "2026-07-03", "From next week we meet at 11:15, in the big room."))
    refs.append(_write(engine, "2026-10-06", "Back to mornings: 9:00 sharp, cameras on."))
    _at(engine, "2026-11-20")
    engine.index()
    return engine, refs


def _order(engine: Reverie, question: str) -> list[tuple[str, str | None]]:
    hits = engine.search(question, record=False).hits
    return [(f"{h.path}#L{h.start_line}", h.superseded_by) for h in hits]


def test_reverie_link_brings_the_newest_version_first_and_marks_the_older(
    standup: tuple[Reverie, list[str]], paths: Paths
) -> None:
    engine, refs = standup
    before = _order(engine, "When is the team standup?")
    assert before[0][0] == refs[0]  # the later wordings share no word with the question
    assert not any(by for _, by in before)  # no link, no claim
    assert not engine._a.port.has_links()  # (a test reads the adapters directly)
    for newer, older in zip(refs[1:], refs, strict=False):
        assert not engine.curation.link(newer, older).already
    assert engine._a.port.has_links()  # the search now hashes its hits' lines
    assert engine.curation.link(refs[1], refs[0]).already  # once is enough
    text = (paths.workspace / refs[3].split("#")[0]).read_text(encoding="utf-8")
    assert f"replaces: {refs[2].split('#')[0]}@" in text  # the link is in the Markdown
    now = _order(engine, "When is the team standup?")
    assert [ref for ref, _ in now[:4]] == [refs[3], refs[2], refs[1], refs[0]]
    marks = dict(now)
    assert marks[refs[0]] == refs[1] and marks[refs[2]] == refs[3] and marks[refs[3]] is None
    hit = next(h for h in engine.search("When is the team standup?", record=False).hits
               if f"{h.path}#L{h.start_line}" == refs[0])  # fmt: skip
    assert hit.changed_on is not None and hit.changed_on.isoformat() == "2026-04-02"
    assert hit.explain["link"].startswith(f"replaced by {refs[1]}")
    first = _order(engine, "When was the team standup originally?")
    assert first[0][0] == refs[0]
    summer = _order(engine, "When was the team standup in August?")
    assert summer[0][0] == refs[2]  # 11:15 held from July to October
    # delete the index: the chains come back from the files
    engine.close()
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (paths.state / name).unlink(missing_ok=True)
    again = Reverie.open(paths.workspace, paths.state, environ={},
                         clock=Clock(datetime(2026, 11, 20, tzinfo=UTC)))  # fmt: skip
    try:
        again.index(force=True)
        assert _order(again, "When is the team standup?") == now
    finally:
        again.close()


def test_a_refused_link_names_why_and_changes_nothing(
    standup: tuple[Reverie, list[str]], paths: Paths
) -> None:
    engine, refs = standup
    agent = _write(engine, "2026-11-01", "The agent noted the standup is at noon.", AGENT)
    _at(engine, "2026-11-20")
    files = {p: p.read_bytes() for p in (paths.workspace / "memory").glob("*.md")}
    cases = {
        (refs[0], refs[1]): "earlier day",  # the older one is the later
        (agent, refs[0]): "never replaces the owner's",
        (refs[1], refs[1]): "earlier day",
        (refs[1], "memory/2026-01-05.md#L99"): "no such line",
        (refs[1], "MEMORY.md#L1"): "only journal lines",
        (refs[1], "memory/2026-01-05.md"): "path#Ln",
    }
    for (newer, older), why in cases.items():
        with pytest.raises(LinkRefused, match=why):
            engine.curation.link(newer, older)
    hand = paths.workspace / "memory" / "2026-11-10.md"
    hand.write_text("# 2026-11-10\n\n- typed by hand: the standup is at 8:00\n", encoding="utf-8")
    files[hand] = hand.read_bytes()
    with pytest.raises(LinkRefused, match="no marker signed"):
        engine.curation.link("memory/2026-11-10.md#L3", agent)
    assert {p: p.read_bytes() for p in (paths.workspace / "memory").glob("*.md")} == files


def test_an_untrusted_line_never_links_even_when_signed(
    standup: tuple[Reverie, list[str]], paths: Paths
) -> None:
    """A pasted page written as untrusted, its marker given a valid link by hand with
    the key (what no door of Reverie does): the index keeps no link, search marks
    nothing, and the owner's line stays first."""
    engine, refs = standup
    _at(engine, "2026-11-12")
    done = engine.write("Page says: the standup is cancelled for good.", source=Source.WEB,
                        author=OWNER_AT_CLI)  # fmt: skip
    assert done.origin is Origin.UNTRUSTED
    path = paths.workspace / done.path
    lines = path.read_text(encoding="utf-8").split("\n")
    old = engine.get(refs[0].split("#")[0]).text.split("\n")[2]
    target = line_key(refs[0].split("#")[0], resolve(old, default=Origin.AGENT,
                      ceiling=Origin.OWNER, key=engine.workspace.origin_key()).text)  # fmt: skip
    forged = with_link(lines[done.first_line - 1], target, engine.workspace.origin_key())
    assert forged is not None
    lines[done.first_line - 1] = forged
    path.write_text("\n".join(lines), encoding="utf-8")
    _at(engine, "2026-11-20")
    engine.index()
    order = _order(engine, "When is the team standup?")
    assert not any(by for _, by in order)
    assert [ref for ref, _ in order].index(refs[0]) < [ref for ref, _ in order].index(
        f"{done.path}#L{done.first_line}"
    )


def test_the_cli_links_and_says_so(run_cli: RunCli, paths: Paths) -> None:
    run_cli("init")
    (paths.workspace / "memory").mkdir(exist_ok=True)
    run_cli(
        "write", "The team standup is at 9:30.", env={"REVERIE_NOW": "2026-01-05T09:00:00+00:00"}
    )
    run_cli(
        "write", "Moved the daily sync to 10:40.", env={"REVERIE_NOW": "2026-04-02T09:00:00+00:00"}
    )
    out = json.loads(run_cli("link", "memory/2026-04-02.md#L3", "memory/2026-01-05.md#L3",
                             "--json").stdout)  # fmt: skip
    assert out["already"] is False and out["target"].startswith("memory/2026-01-05.md@")
    refused = run_cli("link", "memory/2026-01-05.md#L3", "memory/2026-04-02.md#L3", check=False)
    assert refused.returncode != 0 and "earlier day" in refused.stderr
    assert Path(paths.workspace / "memory" / "2026-04-02.md").read_text().count("replaces:") == 1


def _unmark(messages: Any) -> Any:
    """A consolidation model that adds the candidates but writes the superseded entry
    back without its mark (the history erased)."""
    from test_dream_write_safety import rewrite

    data = rewrite(messages, drop=(), extra=())
    data["memory"] = re.sub(r" \(superseded on [^)]*\)", "", data["memory"])
    return data


@pytest.mark.parametrize("model", ["none", "scripted", "erases the mark"])
def test_a_dream_marks_the_memory_entry_a_linked_line_replaces(
    paths: Paths, env: dict[str, str], model: str
) -> None:
    """The old fact is promoted to MEMORY.md; months later the owner's new line is
    linked to it (``reverie link``) and promoted in turn: the old entry is marked
    superseded in place, by the new entry's source, and DREAMS.md says why. With a
    consolidation model the file it writes keeps that history (issue 39: a changed
    fact is updated with its history); a rewrite that drops the mark is refused and
    the append-only path marks it."""
    from conftest import plant
    from test_dream_e2e import KEEP, NOW
    from test_dream_write_safety import rewrite

    replies = {"scripted": lambda m: rewrite(m, drop=(), extra=()), "erases the mark": _unmark}
    llm = ScriptedLLM([replies[model]] * 3) if model in replies else None

    def at(days: int) -> Reverie:
        return Reverie.open(paths.workspace, paths.state, environ=env, embedder="fake",
                            judge=KEEP, clock=Clock(NOW + timedelta(days=days)),
                            llm=llm)  # fmt: skip

    def farm(days: range, queries: tuple[str, ...]) -> None:
        for day in days:
            e = at(day)
            for q in queries:
                e.search(q)
            e.close()

    e = at(-60)
    e.init()
    old = plant(e, "The staging database lives on host orca-db-2 in Frankfurt.",
                origin=Origin.OWNER, session=SessionKind.INTERACTIVE)  # fmt: skip
    e.index()
    e.close()
    farm(range(-59, -56), ("staging database host orca-db-2", "where is the staging database",
                           "staging database in Frankfurt"))  # fmt: skip
    e = at(-55)
    assert e.dream().promoted
    e.close()
    e = at(-4)
    new = plant(e, "Staging database migrated to host heron-db-5 in Dublin.",
                origin=Origin.OWNER, session=SessionKind.INTERACTIVE)  # fmt: skip
    e.index()
    e.curation.link(f"{new.path}#L{new.first_line}", f"{old.path}#L{old.first_line}")
    e.close()
    farm(range(-3, 0), ("staging database host heron-db-5", "where is the staging database",
                        "staging database in Dublin"))  # fmt: skip
    e = at(0)
    report = e.dream()
    e.close()
    assert report.promoted
    assert report.mode == ("rewrite" if model == "scripted" else "append-only"), (
        report.fallback_reason
    )
    if model == "erases the mark":
        assert "lost its superseded mark" in (report.fallback_reason or "")
    memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    old_entry = next(ln for ln in memory.splitlines() if "orca-db-2" in ln)
    assert f"(superseded on {new.path[7:17]} by {new.path}#L{new.first_line}" in old_entry
    assert any("heron-db-5" in ln and "superseded" not in ln for ln in memory.splitlines())
    assert "version link" in (paths.workspace / "DREAMS.md").read_text(encoding="utf-8")
    assert report.counts["superseded"] == 1


def test_a_models_link_is_written_only_when_its_checks_hold(
    engine_factory: Callable[..., Reverie], paths: Paths
) -> None:
    """With a model configured, a dream offers it the recent owner lines and the older
    ones alike them; of its proposals, a pair it was not offered and a subject missing
    from a line are refused, and what holds is written as ``reverie link`` writes it."""
    from reverie.testing import ScriptedLLM

    seen: list[str] = []

    def reply(messages: list[object]) -> dict[str, object]:
        text = messages[-1].content  # type: ignore[attr-defined]
        seen.append(text)
        new = next(ln.split()[0] for ln in text.split("\n") if "NEW" in ln and "10:40" in ln)
        old = next(ln.split()[0] for ln in text.split("\n")
                   if ln.startswith(f"  {new}.") and "9:30" in ln)  # fmt: skip
        return {"links": [
            {"new": new, "old": old, "subject": "team standup"},
            {"new": new, "old": old, "subject": "weekly retro"},  # not in either line
            {"new": "N9", "old": "N9.a", "subject": "team standup"},  # never offered
        ]}  # fmt: skip

    engine = engine_factory(llm=ScriptedLLM([reply]))
    engine.init()
    old = _write(engine, "2026-01-05", "The team standup is at 9:30 every morning.")
    _write(engine, "2026-01-06", "Lunch with the team at the noodle bar.")
    _at(engine, "2026-11-16")
    engine.write("Page says the team standup is cancelled for good.", source=Source.WEB,
                 author=OWNER_AT_CLI)  # fmt: skip
    new = _write(engine, "2026-11-18", "The team standup is at 10:40 every morning now.")
    _at(engine, "2026-11-20")
    engine.index()
    report = engine.dream()
    assert report.links["linked"] == [{"new": new, "old": old, "subject": "team standup"}]
    whys = [r["why"] for r in report.links["refused"]]
    assert any("not in both lines" in w for w in whys)
    assert any("not a pair that was offered" in w for w in whys)
    assert "cancelled for good" not in seen[0]  # an untrusted line is never offered
    text = (paths.workspace / new.split("#")[0]).read_text(encoding="utf-8")
    assert text.count("replaces: memory/2026-01-05.md@") == 1
    now = _order(engine, "When is the team standup?")
    assert now[0][0] == new and dict(now)[old] == new


def test_a_failed_linking_turn_writes_nothing_and_the_dream_goes_on(
    engine_factory: Callable[..., Reverie], paths: Paths
) -> None:
    from reverie.testing import ScriptedLLM, SimulatedTimeout

    engine = engine_factory(llm=ScriptedLLM([SimulatedTimeout()]))
    engine.init()
    _write(engine, "2026-01-05", "The team standup is at 9:30 every morning.")
    _write(engine, "2026-11-18", "The team standup is at 10:40 every morning now.")
    _at(engine, "2026-11-20")
    engine.index()
    before = {p: p.read_bytes() for p in (paths.workspace / "memory").glob("*.md")}
    report = engine.dream()
    assert report.enabled and "failed" in str(report.links["note"])
    assert report.links["linked"] == []
    assert {p: p.read_bytes() for p in (paths.workspace / "memory").glob("*.md")} == before


def test_a_linking_pass_that_breaks_never_blocks_the_dream(
    engine_factory: Callable[..., Reverie], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reverie.curation import model_links
    from reverie.testing import ScriptedLLM

    def broken(*_a: object, **_k: object) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(model_links, "propose", broken)
    engine = engine_factory(llm=ScriptedLLM([]))
    engine.init()
    _write(engine, "2026-11-18", "The team standup is at 10:40 every morning now.")
    report = engine.dream()
    assert report.enabled and "linking failed (disk went away)" in str(report.links["note"])


def test_reverie_dream_says_what_a_model_linked_and_what_it_refused() -> None:
    from reverie.cli.dream import _render_report

    report = {"enabled": True, "dry_run": False, "at": "2026-11-20T03:00:00+00:00",
              "staged": 0, "promoted": [], "mode": "none", "fallback_reason": None,
              "candidates": [], "warnings": [], "links": {
                  "linked": [{"new": "memory/b.md#L3", "old": "memory/a.md#L3",
                              "subject": "team standup"}],
                  "refused": [{"new": "N9", "old": "N9.a", "why": "not a pair that was offered"}],
                  "note": None}}  # fmt: skip
    text = _render_report(report)
    assert "linked: memory/b.md#L3 replaces memory/a.md#L3 (team standup)" in text
    assert "link refused: N9 -> N9.a: not a pair that was offered" in text


def test_a_reply_out_of_shape_links_nothing() -> None:
    from reverie.curation.model_links import Offer, check

    offers = [Offer("memory/2026-11-18.md#L3", "- 09:00 The team standup is at 10:40 now.",
                    (("memory/2026-01-05.md#L3", "- 09:00 The team standup is at 9:30."),))]  # fmt: skip
    for data in ({"links": ["N1 replaces N1.a"]}, {"links": "all"}, ["N1"], None,
                 {"links": [{"new": "N1", "old": "N2.a", "subject": "team standup"}]}):  # fmt: skip
        ok, _ = check(offers, data)
        assert ok == [], data
    ok, _ = check(offers, {"links": [{"new": "N1", "old": "N1.a", "subject": "team standup"}]})
    assert ok == [("memory/2026-11-18.md#L3", "memory/2026-01-05.md#L3", "team standup")]


def test_links_read_journals_under_the_reader_policy(
    standup: tuple[Reverie, list[str]], paths: Paths, tmp_path: Path
) -> None:
    """A journal that is a link out of the workspace, or a FIFO, is refused by
    ``reverie link`` and skipped by dreaming's link reader: never read, never blocking."""
    import os
    from types import SimpleNamespace

    from reverie.dreaming.linked import replaced

    engine, refs = standup
    outside = tmp_path / "outside.md"
    outside.write_text((paths.workspace / refs[1].split("#")[0]).read_text(), encoding="utf-8")
    (paths.workspace / "memory" / "2026-11-02.md").symlink_to(outside)
    with pytest.raises(LinkRefused, match="link out"):
        engine.curation.link("memory/2026-11-02.md#L3", refs[0])
    os.mkfifo(paths.workspace / "memory" / "2026-11-03.md")
    with pytest.raises(LinkRefused, match="FIFO"):
        engine.curation.link("memory/2026-11-03.md#L3", refs[0])
    promoted = [SimpleNamespace(anchor="memory/2026-11-03.md#L3-L3"),
                SimpleNamespace(anchor="memory/2026-11-02.md#L3-L3")]  # fmt: skip
    assert replaced(engine.workspace, promoted, [f"{refs[0].split('#')[0]}#L3-L3"]) == {}
