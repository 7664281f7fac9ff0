"""Standing intents with the injected clock (R-INTENT-1..3): firing rules, cooldown,
budget, expiry, cancellation, the per-turn cap, time intents (once, weekly, across a
daylight-saving change), the INTENTS.md view and the table surviving an index rebuild."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from conftest import Paths, RunCli
from reverie.clock import Clock
from reverie.daemon import Daemon
from reverie.engine import Reverie
from reverie.errors import ReverieError
from reverie.intents.model import Status
from reverie.provenance.paths import classify

BERLIN = ZoneInfo("Europe/Berlin")
START = datetime(2026, 5, 1, 9, 0, tzinfo=BERLIN)  # a Friday
RELEASE = "when Alice mentions the release, ask me about the rollback plan"


@pytest.fixture
def engine(engine_factory: Callable[..., Reverie]) -> Reverie:
    e = engine_factory(embedder="fake", clock=Clock(START), intent_timezone="Europe/Berlin")
    e.init()
    return e


def at(engine: Reverie, moment: datetime) -> None:
    """Move the engine's (injected) clock to ``moment``."""
    engine.clock = engine.intents.clock = Clock(moment)


def fired(engine: Reverie, message: str) -> list[str]:
    return [i["id"] for i in engine.context(message).intents]


def owner_add(engine: Reverie, text: str, **how: str) -> str:
    return engine.intents.add(text, proposer="owner", proposed_by="test", **how).id


# -- event intents --------------------------------------------------------------------------
def test_event_intent_fires_on_all_its_terms_not_on_some(engine: Reverie) -> None:
    iid = owner_add(engine, RELEASE)
    assert fired(engine, "Alice is on holiday next week") == []
    assert fired(engine, "the release slipped again") == []
    ctx = engine.context("Alice said the release is on Friday")
    assert [i["id"] for i in ctx.intents] == [iid]
    assert "rollback plan" in ctx.intent_block and ctx.intent_block in ctx.text
    assert ctx.intents[0]["why"] == "matched alice, release"


def test_cooldown_budget_and_expiry(engine: Reverie) -> None:
    iid = owner_add(engine, "ask about the budget", on="budget, review")
    msg = "the budget review is today"
    assert fired(engine, msg) == [iid]
    at(engine, START + timedelta(hours=23, minutes=59))
    assert fired(engine, msg) == []  # within the 24 h cooldown
    at(engine, START + timedelta(hours=24))
    assert fired(engine, msg) == [iid]  # again after it
    at(engine, START + timedelta(days=2))
    assert fired(engine, msg) == [iid]  # third and last firing
    assert engine.intents.get(iid).status is Status.DONE
    at(engine, START + timedelta(days=5))
    assert fired(engine, msg) == []  # never after 3 firings
    # expiry: a fresh intent, unused, is gone after 90 days
    late = owner_add(engine, "ask about the offsite", on="offsite")
    at(engine, START + timedelta(days=5 + 90, seconds=1))
    assert fired(engine, "the offsite is booked") == []
    assert engine.intents.get(late).status is Status.EXPIRED


def test_an_intent_just_before_expiry_still_fires(engine: Reverie) -> None:
    iid = owner_add(engine, "mention the lease", on="lease")
    at(engine, START + timedelta(days=89, hours=23))
    assert fired(engine, "the lease ends") == [iid]


def test_cancel_is_explicit_and_final(engine: Reverie) -> None:
    iid = owner_add(engine, RELEASE)
    # talking about cancelling does nothing: only the call cancels
    assert fired(engine, "cancel that reminder about Alice and the release") == [iid]
    engine.intents.cancel(iid)
    at(engine, START + timedelta(days=2))
    assert fired(engine, "Alice: the release is out") == []
    assert engine.intents.get(iid).status is Status.CANCELLED
    with pytest.raises(ReverieError, match="cancelled already"):
        engine.intents.cancel(iid)


def test_at_most_three_intents_per_turn(engine: Reverie) -> None:
    ids = [owner_add(engine, f"note {n} about the deploy", on="deploy") for n in range(5)]
    first = fired(engine, "we deploy today")
    assert len(first) == 3 and set(first) <= set(ids)
    ctx = engine.context("the deploy again")  # the two left over fire next turn
    assert len(ctx.intents) == 2 and not set(first) & {i["id"] for i in ctx.intents}


def test_cjk_terms_match_as_substrings(engine: Reverie) -> None:
    iid = owner_add(engine, "当Alice提到发布时，问我回滚方案")
    assert fired(engine, "Alice说下周发布") == [iid]
    assert fired(engine, "下周发布") == []


def test_pending_intents_never_fire_until_confirmed(engine: Reverie) -> None:
    i = engine.intents.add(RELEASE, proposer="agent", proposed_by="mcp")
    assert i.status is Status.PENDING
    assert fired(engine, "Alice: the release is tomorrow") == []
    engine.intents.confirm(i.id)
    assert fired(engine, "Alice: the release is tomorrow") == [i.id]


def test_a_broken_intents_table_never_blocks_the_turn(engine: Reverie) -> None:
    owner_add(engine, RELEASE)
    engine.intents.close()
    engine.intents.store.conn.close()  # the table's connection is gone
    ctx = engine.context("Alice: the release")
    assert ctx.intents == [] and any("standing intents" in d for d in ctx.degraded)


# -- time intents ---------------------------------------------------------------------------
def test_time_intent_appears_once_after_its_time(engine: Reverie) -> None:
    iid = owner_add(engine, "remind me Friday at 9 to call mom")
    due = datetime(2026, 5, 8, 9, 0, tzinfo=BERLIN)
    assert engine.intents.get(iid).at == due
    at(engine, due - timedelta(minutes=1))
    assert fired(engine, "hello") == []
    at(engine, due + timedelta(minutes=5))
    ctx = engine.context("good morning")
    assert [i["id"] for i in ctx.intents] == [iid] and "call mom" in ctx.intent_block
    assert fired(engine, "anything else?") == []  # once
    assert engine.intents.get(iid).status is Status.DONE


def test_weekly_intent_recurs_and_fires_at_nine_across_dst(
    engine_factory: Callable[..., Reverie],
) -> None:
    start = datetime(2026, 3, 18, 12, 0, tzinfo=BERLIN)  # before the last Sunday of March
    e = engine_factory(embedder="fake", clock=Clock(start), intent_timezone="Europe/Berlin")
    e.init()
    iid = owner_add(e, "每周一早上九点提醒我交周报")
    assert e.intents.get(iid).cron == "0 9 * * 1"
    seen = []
    for monday in (23, 30, 6):  # 2026-03-29 is the spring-forward Sunday
        month = 3 if monday > 20 else 4
        nine = datetime(2026, month, monday, 9, 0, tzinfo=BERLIN)
        at(e, nine - timedelta(minutes=1))
        assert fired(e, "你好") == []
        at(e, nine + timedelta(seconds=30))
        assert fired(e, "你好") == [iid]
        seen.append(e.intents.store.firings(iid)[-1][0])
    # 09:00 local each week: 08:00 UTC in winter time, 07:00 UTC in summer time
    assert [s[11:16] for s in seen] == ["08:00", "07:00", "07:00"]


def test_wish_is_kept_with_a_review_date_and_shown_on_it(engine: Reverie) -> None:
    iid = owner_add(engine, "someday learn Rust")
    wish = engine.intents.get(iid)
    assert wish.kind.value == "wish" and wish.review_by is not None
    assert "learn Rust" in (engine.workspace.root / "INTENTS.md").read_text()
    at(engine, wish.review_by + timedelta(hours=1))
    assert fired(engine, "hi") == [iid]
    assert fired(engine, "hi") == []


def test_a_time_in_the_past_is_refused(engine: Reverie) -> None:
    with pytest.raises(ReverieError, match="passed"):
        owner_add(engine, "pay the bill", at="2026-04-01T09:00")


# -- the daemon fires on time and runs the notify command -----------------------------------
def test_daemon_notifies_a_due_intent_once_with_json_on_stdin(
    engine_factory: Callable[..., Reverie], tmp_path: Path
) -> None:
    out = tmp_path / "notified.jsonl"
    script = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read() + '\\n')"
    argv = json.dumps([sys.executable, "-c", script])
    e = engine_factory(
        embedder="fake",
        clock=Clock(START),
        intent_timezone="Europe/Berlin",
        intent_notify_command=argv,
    )
    e.init()
    iid = owner_add(e, "stand up and stretch", at="2026-05-01T10:00")
    Daemon(e, watch=False, schedule=False).run(once=True)
    assert not out.exists()  # not before its time
    at(e, datetime(2026, 5, 1, 10, 0, 1, tzinfo=BERLIN))
    Daemon(e, watch=False, schedule=False).run(once=True)
    Daemon(e, watch=False, schedule=False).run(once=True)
    lines = out.read_text().splitlines()
    assert len(lines) == 1  # on time, once
    sent = json.loads(lines[0])
    assert sent["id"] == iid and sent["text"] == "stand up and stretch"
    # the chat still sees it once in its next turn
    assert e.intents.get(iid).status is Status.ARMED  # notified, not yet shown in a chat
    assert fired(e, "back") == [iid] and fired(e, "again") == []
    assert e.intents.get(iid).status is Status.DONE
    Daemon(e, watch=False, schedule=False).run(once=True)
    assert len(out.read_text().splitlines()) == 1


def test_a_shell_string_notify_command_is_refused(engine: Reverie) -> None:
    from reverie.errors import ConfigError
    from reverie.intents.notify import notify_argv

    with pytest.raises(ConfigError, match="JSON list"):
        notify_argv("notify-send 'due'; rm -rf ~")
    assert notify_argv('["notify-send", "due"]') == ["notify-send", "due"]
    assert notify_argv(str(["notify-send", "due"])) == ["notify-send", "due"]  # a TOML array
    with pytest.raises(ConfigError):
        notify_argv("[__import__('os').system('id')]")


# -- the table, the view, the index -----------------------------------------------------------
def test_intents_survive_deleting_and_rebuilding_the_index(engine: Reverie) -> None:
    iid = owner_add(engine, RELEASE)
    engine.index()
    engine.close()
    engine.workspace.index_path.unlink()
    engine.index(force=True)
    assert engine.intents.get(iid).status is Status.ARMED
    assert fired(engine, "Alice: release today") == [iid]


def test_intents_view_is_system_never_indexed_or_injected(engine: Reverie) -> None:
    owner_add(engine, RELEASE)
    view = engine.workspace.root / "INTENTS.md"
    assert "rollback plan" in view.read_text()
    pc = classify("INTENTS.md")
    assert not pc.indexed and pc.default_origin.value == "system"
    engine.index()
    assert engine.search("rollback plan", record=False).hits == []
    assert "rollback plan" not in engine.context("hello").text


def test_a_hand_edit_of_the_view_is_kept_not_lost(engine: Reverie) -> None:
    owner_add(engine, RELEASE)
    view = engine.workspace.root / "INTENTS.md"
    view.write_text("my own notes\n")
    owner_add(engine, "someday learn Rust")
    kept = list((engine.workspace.agent_dir / "intents-view-edits").glob("*.md"))
    assert [p.read_text() for p in kept] == ["my own notes\n"]
    assert "learn Rust" in view.read_text()


# -- the CLI ---------------------------------------------------------------------------------
def test_cli_add_list_confirm_cancel_and_context(
    run_cli: RunCli, paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    env = {"REVERIE_INTENT_TIMEZONE": "Europe/Berlin"}
    run_cli("init")

    def js(*args: str) -> Any:
        return json.loads(run_cli(*args, "--json", env=env).stdout)

    event = js("intent", "add", "ask about the rollback plan", "--on", "alice, release; 发布")
    assert event["status"] == "armed" and event["triggers"] == [["alice", "release"], ["发布"]]
    timed = js("intent", "add", "send the weekly report", "--every", "0 9 * * 1")
    assert timed["cron"] == "0 9 * * 1"
    wish = js("intent", "add", "learn Rust", "--review-by", "2026-06-01")
    assert wish["kind"] == "wish" and wish["review_by"].startswith("2026-06-01")
    routed = js("intent", "add", "remind me tomorrow at 3pm to send the invoice")
    assert routed["kind"] == "time" and routed["at"].startswith("2026-05-02T15:00")
    # an agent's proposal, confirmed by the owner at the CLI
    e = engine_factory(embedder="fake", intent_timezone="Europe/Berlin")
    pending = e.intents.add("mention the bank", proposer="agent", proposed_by="mcp", on="bank").id
    e.close()
    assert {i["id"] for i in js("intent", "list")} >= {event["id"], pending}
    ctx = js("context", "the bank and 发布")
    assert [i["id"] for i in ctx["intents"]] == [event["id"]]
    assert js("intent", "confirm", pending)["status"] == "armed"
    assert js("intent", "cancel", event["id"])["status"] == "cancelled"
    assert event["id"] not in {i["id"] for i in js("intent", "list")}
    assert event["id"] in {i["id"] for i in js("intent", "list", "--all")}
    bad = run_cli("intent", "cancel", "nope", "--json", check=False, env=env)
    assert bad.returncode != 0 and "no intent" in bad.stderr
    two = run_cli("intent", "add", "x", "--at", "friday", "--on", "y", check=False, env=env)
    assert two.returncode != 0 and "one of" in two.stderr


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--at", "2027-02-29 09:00", "no date a calendar has"),  # 2027 is no leap year
        ("--at", "10000-01-01 09:00", "no date a calendar has"),
        ("--at", "2026-02-30", "no date a calendar has"),
        ("--at", "2025-01-01 09:00", "has passed"),
        ("--review-by", "1900-01-01", "has passed"),
        ("--review-by", "2026-13-01", "no date a calendar has"),
    ],
)
def test_an_impossible_or_past_date_is_refused_and_arms_nothing(
    run_cli: RunCli, option: str, value: str, said: str
) -> None:
    """Issue 40.12 (the tests' clock: 2026-05-01)."""
    run_cli("init")
    done = run_cli("intent", "add", "check the backups", option, value, "--json", check=False)
    assert done.returncode != 0 and done.stdout == ""
    assert said in json.loads(done.stderr)["message"]
    assert json.loads(run_cli("intent", "list", "--all", "--json").stdout) == []


def test_a_cancel_from_another_process_is_seen_by_a_running_engine(
    engine: Reverie, engine_factory: Callable[..., Reverie]
) -> None:
    iid = owner_add(engine, "ask about the budget", on="budget")
    assert fired(engine, "the budget") == [iid]  # warm: the prefilter index is cached
    other = engine_factory(embedder="fake", clock=Clock(START), intent_timezone="Europe/Berlin")
    other.intents.cancel(iid)  # another connection (the CLI, while the MCP server runs)
    fresh = owner_add(other, "ask about the offsite", on="offsite")
    at(engine, START + timedelta(days=2))
    assert fired(engine, "the budget") == []
    assert fired(engine, "the offsite") == [fresh]


def test_the_engine_clock_moved_on_moves_the_intents_too(engine: Reverie) -> None:
    iid = owner_add(engine, "water the plants", at="2026-05-01T12:00")
    engine.clock = Clock(datetime(2026, 5, 1, 12, 1, tzinfo=BERLIN))  # the facade's clock only
    assert fired(engine, "hi") == [iid]


def test_an_intent_said_twice_is_kept_once(engine: Reverie) -> None:
    first = owner_add(engine, RELEASE)
    assert owner_add(engine, RELEASE) == first
    proposal = engine.intents.add("call the bank", proposer="agent", proposed_by="mcp", on="bank")
    again = engine.intents.add("call the bank", proposer="agent", proposed_by="mcp", on="bank")
    assert again.id == proposal.id and again.status is Status.PENDING
    # the owner saying the very same thing arms that proposal, not a second copy
    mine = owner_add(engine, "call the bank", on="bank")
    assert mine == proposal.id and engine.intents.get(mine).status is Status.ARMED
    assert len(engine.intents.listing()) == 2


def test_a_proposal_left_unconfirmed_expires(engine: Reverie) -> None:
    proposal = engine.intents.add(RELEASE, proposer="agent", proposed_by="mcp")
    at(engine, START + timedelta(days=91))
    assert engine.intents.listing() == []
    assert engine.intents.get(proposal.id).status is Status.EXPIRED
    with pytest.raises(ReverieError, match="not pending"):
        engine.intents.confirm(proposal.id)


def test_reverie_serve_runs_the_notify_command_on_time_once(
    run_cli: RunCli, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    import signal
    import subprocess
    import time

    from conftest import cli_command, merged_env

    out = tmp_path / "notified.jsonl"
    script = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read() + '\\n')"
    extra = {"TZ": "UTC", "REVERIE_INTENT_TIMEZONE": "UTC"}
    run_cli("init", env=extra)
    added = run_cli("intent", "add", "stretch", "--at", "2026-05-01T09:00:02", "--json", env=extra)
    iid = json.loads(added.stdout)["id"]
    served_env = merged_env(
        env,
        {
            **extra,
            "REVERIE_CLOCK": "advance",  # starts at REVERIE_NOW (09:00:00) and moves on
            "REVERIE_INTENT_NOTIFY_COMMAND": json.dumps([sys.executable, "-c", script]),
        },
    )
    log = (tmp_path / "serve.err").open("w")
    proc = subprocess.Popen(
        cli_command(paths, "serve", "--no-watch", "--json"),
        env=served_env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 30
        while not out.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "serve.err").read_text()
            time.sleep(0.05)
        time.sleep(1.5)  # more ticks: never a second notification
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        log.close()
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == iid
    assert "intent " + iid + " due" in (tmp_path / "serve.err").read_text()
