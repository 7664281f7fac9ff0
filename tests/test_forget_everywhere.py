"""A forget reaches every store and leaves no byte behind (issue 22, points 1, 3, 4).

The secret is everywhere a user's memory goes: a journal, an ended session (ingested
into the session corpus) and a live one (which the escalation lane reads), MEMORY.md
(with a trigger) and USER.md, a dream's DREAMS.md entry, phase report and pre-images,
the recall log, the trigger snapshot, an agent's pending requests and a standing
intent. After ``reverie forget TEXT --purge-history`` no file under the workspace or
the state dir holds any of its words, byte for byte (SQLite files and their WAL
included). Without ``--purge-history`` only pre-images hold it, and the output says so.
A forget killed with SIGKILL at random moments is finished by the next command.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import FIXED_NOW, Paths, RunCli, cli_command, plant
from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.provenance.origin import Origin, SessionKind

NOW = datetime.fromisoformat(FIXED_NOW)
SECRET = "tangerine-walrus-42"
FACT = f"The vault passphrase is {SECRET} for the Oslo backup host."
OTHER = "The release train leaves every second Tuesday."
QUERIES = ("vault passphrase Oslo backup host", "what is the vault passphrase", "Oslo backup")
NEEDLES = (b"tangerin", b"walrus")  # its rarest words (and their stems), any case


def holders(*roots: Path) -> list[str]:
    """Every file under ``roots`` whose raw bytes hold a word of the secret."""
    found = []
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes().lower()
                if any(n in data for n in NEEDLES):
                    found.append(str(p.relative_to(root.parent)))
    return found


def engine_at(paths: Paths, env: dict[str, str], days: float) -> Reverie:
    return Reverie.open(
        paths.workspace,
        paths.state,
        environ=env,
        clock=Clock(NOW + timedelta(days=days)),
        embedder="fake",
    )


def seed(paths: Paths, env: dict[str, str], run_cli: RunCli) -> None:
    """The secret in every store (checked: each holds it before the forget)."""
    with engine_at(paths, env, -4) as e:
        e.init()
        for text in (OTHER, FACT):
            plant(e, text, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
        said = {"chat-1": f"Remember: {FACT}", "chat-2": f"By the way, {SECRET} opens it too."}
        for sid, text in said.items():  # chat-1 ends (ingested), chat-2 is live
            s = e.open_session(sender="alice", owner="alice", session_id=sid)
            s.record(text, source="owner")
            s.record("Understood.", source="assistant")
            if sid == "chat-1":
                s.end()
        with (paths.workspace / "MEMORY.md").open("a", encoding="utf-8") as fh:
            fh.write(f"- {FACT} <!-- trigger: vault passphrase --> <!-- importance: 8 -->\n")
            fh.write(f"- {OTHER}\n")
        with (paths.workspace / "USER.md").open("a", encoding="utf-8") as fh:
            fh.write(f"- Alice said: {FACT}\n")
        e.index()
    for day in (-3, -2, -1):
        with engine_at(paths, env, day) as d:
            for q in QUERIES:
                d.search(q)
    with engine_at(paths, env, 0) as e:
        assert e.dream().promoted
        e.context("what was the vault passphrase again?")  # writes the trigger snapshot
        e.curation.pending.request("forget", SECRET, by="an agent")
        e.curation.pending.request("correct", SECRET, "The passphrase was rotated.", by="agent")
    run_cli("intent", "add", f"When I mention the backup, say {SECRET}", "--on", "backup")
    report = next((paths.workspace / "memory" / ".dreams" / "reports").glob("*.md"))
    with report.open("a", encoding="utf-8") as fh:  # a REM reflection naming it
        fh.write(f"- recurring theme: the vault passphrase {SECRET}\n")
    held = holders(paths.workspace, paths.state)
    for store in (
        "state/main/sessions/chat-1.jsonl",
        "state/main/sessions/chat-2.jsonl",
        "state/main/recall.sqlite",
        "state/main/triggers.sqlite",
        "state/main/intents.sqlite",
        "state/main/curation/pending.json",
        "ws/DREAMS.md",
        "ws/INTENTS.md",
        "ws/MEMORY.md",
    ):
        assert store in held, (store, held)
    assert any(h.startswith("ws/memory/.dreams/reports/") for h in held), held
    assert any(h.startswith("state/main/preimages/") for h in held), held


def what_a_user_sees(paths: Paths, env: dict[str, str]) -> str:
    with engine_at(paths, env, 1) as e:
        shown = [h.text for q in QUERIES for h in e.search(q, record=False).hits]
        ctx = e.context("what was the vault passphrase again? anything about the backup?")
        shown += [json.dumps(ctx.as_dict(), default=str)]
    return "\n".join(shown).lower()


def test_forget_with_purge_history_leaves_no_byte_anywhere(
    paths: Paths, env: dict[str, str], run_cli: RunCli, cli_json: Callable[..., Any]
) -> None:
    seed(paths, env, run_cli)
    before = holders(paths.workspace, paths.state)
    plan = cli_json("forget", SECRET, "--purge-history", "--dry-run")
    assert holders(paths.workspace, paths.state) == before
    out = cli_json("forget", SECRET, "--purge-history")
    assert holders(paths.workspace, paths.state) == []
    assert plan["stores"] == out["stores"]  # the dry run named every store it changed
    assert set(plan["history"]) <= set(out["history"])  # (and the pre-images it made)
    assert out["stores"]["transcripts"] >= 2 and out["stores"]["pending_requests"] == 2
    assert out["stores"]["intents"] == 1 and out["history"] and out["reports"]
    assert "walrus" not in what_a_user_sees(paths, env)
    assert holders(paths.workspace, paths.state) == []  # a rebuilt trigger snapshot too
    # transcripts stay parseable, their seals valid, their other lines kept
    proc = run_cli("ingest", str(paths.state / "main" / "sessions" / "chat-2.jsonl"), "--json")
    assert json.loads(proc.stdout)["trusted"] is True
    text = (paths.state / "main" / "sessions" / "chat-2.jsonl").read_text(encoding="utf-8")
    assert "Understood." in text
    pending = json.loads((paths.state / "main" / "curation" / "pending.json").read_text())
    assert [r["status"] for r in pending] == ["confirmed", "rejected"]
    assert pending[1]["new_text"] == "The passphrase was rotated."


def test_without_purge_history_only_pre_images_hold_it_and_the_output_says_so(
    paths: Paths, env: dict[str, str], run_cli: RunCli
) -> None:
    seed(paths, env, run_cli)
    proc = run_cli("forget", SECRET)
    held = holders(paths.workspace, paths.state)
    assert held and all(h.startswith("state/main/preimages/") for h in held), held
    assert "STILL HELD" in proc.stdout and "--purge-history" in proc.stdout
    for h in held:
        assert Path(h).name in proc.stdout
    assert "walrus" not in what_a_user_sees(paths, env)


def test_a_reader_keeping_a_wal_delays_only_its_checkpoint(
    paths: Paths, env: dict[str, str], run_cli: RunCli
) -> None:
    """Another process reading the recall log while the forget runs keeps its WAL
    (old frames hold the deleted rows): the forget says so, and the next command
    empties it; then no byte is left."""
    import sqlean as sqlite3

    seed(paths, env, run_cli)
    reader = sqlite3.connect(str(paths.state / "main" / "recall.sqlite"), isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM recall_store").fetchone()  # a snapshot held
    try:
        proc = run_cli("forget", SECRET, "--purge-history")
        journal = json.loads((paths.state / "main" / "forget-journal.json").read_text())
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert "recall.sqlite: another process was using it" in proc.stdout
    assert journal["busy"] == ["recall.sqlite"]
    assert "walrus" not in json.dumps(journal).lower()
    run_cli("search", QUERIES[0])
    assert not (paths.state / "main" / "forget-journal.json").exists()
    assert holders(paths.workspace, paths.state) == []


# -- a forget killed at random moments ------------------------------------------------------


def _start_forget(ws: Path, state: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = cli_command(Paths(ws, state), "forget", SECRET, "--purge-history", "--json")
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _files(*roots: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root.parent)): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm", ".lock"))
    }


def _calibrate(template: Path, tmp: Path, env: dict[str, str]) -> tuple[float, float]:
    """One whole forget: when its journal showed (its first change) and went (its last
    step), in seconds after its start."""
    shutil.copytree(template, tmp)
    journal = tmp / "state" / "main" / "forget-journal.json"
    t0 = time.monotonic()
    proc = _start_forget(tmp / "ws", tmp / "state", env)
    first = last = None
    while proc.poll() is None:
        there = journal.exists()
        if first is None and there:
            first = time.monotonic() - t0
        if first is not None and last is None and not there:
            last = time.monotonic() - t0
        time.sleep(0.002)
    end = time.monotonic() - t0
    assert proc.returncode == 0
    shutil.rmtree(tmp)
    first = 0.7 * end if first is None else first
    return first, end if last is None else last


@pytest.mark.slow
@pytest.mark.timeout(1200)  # 20 to 60 trials of 3 processes each; a loaded machine is slow
def test_a_forget_killed_at_random_moments_is_finished_by_the_next_command(
    paths: Paths, env: dict[str, str], run_cli: RunCli, tmp_path: Path
) -> None:
    """At least 20 forgets killed with SIGKILL (more, up to 60, until 10 landed before
    the forget's last step). Four in five are killed a random moment after its first
    change (the journal's appearance, watched, so that a loaded machine's slow start-up
    cannot shift the aim); the fifth at a random moment of its start-up. After each, one
    ``reverie search``: the secret is gone from every byte of both trees and from what
    search and ``context`` show. A forget killed before its first change changed
    nothing at all."""
    seed(paths, env, run_cli)
    template = tmp_path / "template"
    template.mkdir()
    shutil.copytree(paths.workspace, template / "ws")
    shutil.copytree(paths.state, template / "state")
    rng = random.Random(22)
    first, end = _calibrate(template, tmp_path / "calibration", env)
    window = max(0.01, end - first)  # from the first change to the last step
    trials, begun, mid, done, left, unchanged_violations = 0, 0, 0, 0, 0, 0
    while trials < 60 and (trials < 20 or mid < 10):
        trials += 1
        trial_dir = tmp_path / f"trial-{trials}"
        shutil.copytree(template, trial_dir)
        ws, state = trial_dir / "ws", trial_dir / "state"
        journal = state / "main" / "forget-journal.json"
        before = _files(ws, state)
        proc = _start_forget(ws, state, env)
        if trials % 5 == 0:  # during start-up, before any change (mostly)
            time.sleep(rng.uniform(0.0, first))
        else:
            while proc.poll() is None and not journal.exists():
                time.sleep(0.001)
            time.sleep(rng.uniform(0.0, window))
        finished = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if trials % 5 and not journal.exists() and not finished:
            window *= 0.8  # past its last step: the window is shorter on this machine
        stones = state / "main" / "tombstones.json"
        started = journal.exists() or (stones.exists() and '"hash"' in stones.read_text())
        begun += started
        mid += journal.exists()  # killed between its first change and its last step
        done += finished
        if not started:
            after = _files(ws, state)
            # A kill inside the journal's own atomic write may leave its temp file (hashes
            # only; swept by a later sync): nothing else may change, and nothing holds it.
            torn = {k for k in after.keys() - before.keys() if ".forget-journal.json." in k}
            assert not any(n in after[k].lower() for k in torn for n in NEEDLES), trials
            unchanged_violations += {k: after[k] for k in after.keys() - torn} != before
            shutil.rmtree(trial_dir)
            continue
        t = Paths(ws, state)
        proc2 = subprocess.run(
            cli_command(t, "search", QUERIES[0], "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc2.returncode == 0, proc2.stderr
        assert "walrus" not in proc2.stdout.lower()
        still = holders(ws, state)
        left += bool(still) or journal.exists()
        assert not still, (trials, still)
        assert "walrus" not in what_a_user_sees(t, env)
        shutil.rmtree(trial_dir)
    print(
        f"\nforget kill -9 trials: {trials}; killed after its first change: {begun}, of "
        f"which before its last step: {mid} (already done: {done}); text left anywhere "
        f"after one command: {left}; killed before it began yet something changed: "
        f"{unchanged_violations}"
    )
    assert mid >= 5  # kills really landed mid-forget (the aim follows what they saw)
    assert left == 0 and unchanged_violations == 0


# -- issue 22.8: nothing holding the only copy of a memory is swept ---------------------------


def test_a_sync_keeps_the_only_copy_a_killed_dream_left_in_a_temp_file(
    paths: Paths, env: dict[str, str], run_cli: RunCli
) -> None:
    """A dream killed between its exchange and its pre-image leaves the replaced
    MEMORY.md only in ``.MEMORY.md.<random>.tmp``. A sync long after (the sweep takes
    temp files over five minutes old) makes it a pre-image, so ``dream restore`` brings
    it back; a temp file holding what MEMORY.md or a pre-image already holds just goes."""
    import os

    run_cli("init")
    old = "# Long-term memory\n\n- The only copy of this entry was in the temp file.\n"
    new = "# Long-term memory\n\n- What the killed dream wrote.\n"
    (paths.workspace / "MEMORY.md").write_text(new, encoding="utf-8")
    only = paths.workspace / ".MEMORY.md.k2j4abcd.tmp"
    only.write_text(old, encoding="utf-8")
    copy = paths.workspace / ".MEMORY.md.zz91abcd.tmp"
    copy.write_text(new, encoding="utf-8")
    aside = paths.workspace / ".USER.md.q7x1abcd.aside.tmp"  # the rename fallback's
    aside.write_text("# User\n\n- Prefers tea.\n", encoding="utf-8")
    hour_ago = time.time() - 3600
    for p in (only, copy, aside):
        os.utime(p, (hour_ago, hour_ago))
    run_cli("index")
    assert not only.exists() and not copy.exists() and not aside.exists()
    images = {
        p.name: p.read_text(encoding="utf-8")
        for p in (paths.state / "main" / "preimages").glob("*.md")
    }
    assert sorted(images.values()) == sorted([old, "# User\n\n- Prefers tea.\n"]), images
    run_cli("dream", "restore")
    assert (paths.workspace / "MEMORY.md").read_text(encoding="utf-8") == old


# -- transcripts are redacted in place and stay what they were otherwise ---------------------

MARK = "ZQXJVW"
LINE = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    messages=st.lists(st.lists(LINE, min_size=1, max_size=4), min_size=1, max_size=6),
    marked=st.sets(st.integers(0, 30), max_size=8),
)
def test_a_redacted_transcript_keeps_its_seal_lines_and_every_other_line(
    tmp_path_factory: pytest.TempPathFactory, messages: list[list[str]], marked: set[int]
) -> None:
    """Whatever the messages hold (any Unicode, quotes, escapes), removing some of their
    lines keeps the file's line count and byte size, a valid seal, and exactly the lines
    not removed; the removed ones are nowhere in the bytes."""
    from reverie.write import transcript as tr

    folder = tmp_path_factory.mktemp("tr")
    key = b"k" * 32
    path = folder / "s.jsonl"
    header = {"type": "session", "version": 1, "id": "s", "kind": "interactive"}
    header |= {"channel": "direct", "sender": "a", "owner": "a", "started": FIXED_NOW}
    assert tr.create(path, header, key=key)
    texts = []
    for seq, lines in enumerate(messages, start=1):
        assume(not any(MARK in ln for ln in lines))
        lines = [f"{ln} {MARK}{seq}" if seq * 5 + i in marked else ln for i, ln in enumerate(lines)]
        texts.append(lines)
        record = {"type": "message", "seq": seq, "source": "owner", "text": "\n".join(lines)}
        tr.append_record(path, record)
    before = path.read_bytes()
    changed = tr.forget_in(path, lambda ln: MARK in ln)
    after = path.read_bytes()
    assert len(after) == len(before) and after.count(b"\n") == before.count(b"\n")
    assert MARK.encode() not in after
    assert changed == sum(any(MARK in ln for ln in lines) for lines in texts)
    state = tr.load(path)
    assert tr.is_sealed(state.header, key)
    for msg, lines in zip(state.messages, texts, strict=True):
        assert msg["text"] == "\n".join(ln for ln in lines if MARK not in ln)
