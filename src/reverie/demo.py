"""The demo: a workspace built from the sample memories shipped in the package
(English and Chinese curated entries with trailers, journals, one untrusted import),
then index, status, searches, a turn context, a scripted session, and a dream.

Everything runs offline on the default embedder; the "model" in the session is the
scripted fake shipped in the package.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from .clock import Clock
from .engine import Reverie
from .llm.base import LLM
from .llm.fake import ScriptedLLM
from .provenance.markers import resolve
from .provenance.origin import OWNER_AT_CLI, Origin, Source

Say = Callable[[str], None]
SEARCHES = (
    ("English", "how is the gateway exposed?"),
    ("Chinese", "数据库分片"),
    ("cross-lingual", "which editor theme does the user like?"),
)
RECALL_QUERIES = (
    "who owns the billing service",
    "ask before touching invoice templates",
    "billing service owner Alice",
    "skip the test suite before hotfix deploys",
    "do we run tests before deploying hotfixes",
    "release notes about the test suite and hotfixes",
)


def _copy_samples(root: Path) -> None:
    samples = resources.files("reverie") / "samples"
    for name in ("AGENTS.md", "MEMORY.md", "USER.md"):
        (root / name).write_text(
            samples.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8"
        )
    imports = root / "memory" / "imports"
    imports.mkdir(parents=True, exist_ok=True)
    text = samples.joinpath("memory", "imports", "old-assistant.md").read_text(encoding="utf-8")
    (imports / "old-assistant.md").write_text(text, encoding="utf-8")


def _journal_lines() -> list[tuple[int, str, str]]:
    raw = (resources.files("reverie") / "samples" / "journals.txt").read_text(encoding="utf-8")
    out = []
    for line in raw.splitlines():
        if line.strip() and not line.startswith("#"):
            days, source, text = line.split("|", 2)
            out.append((int(days), source, text))
    return out


def run_demo(directory: Path, *, embedder: str | None = None, say: Say = print) -> dict[str, Any]:
    if directory.exists():
        shutil.rmtree(directory)
    ws_dir, state_dir = directory / "workspace", directory / "state"
    today = datetime.now().astimezone().replace(hour=10, minute=0, second=0, microsecond=0)
    summary: dict[str, Any] = {"workspace": str(ws_dir)}
    flags: dict[str, Any] = {"embedder": embedder} if embedder else {}

    shared: dict[str, Any] = {}

    def engine(day: datetime, llm: LLM | None = None) -> Reverie:
        extra: dict[str, Any] = {"llm": llm} if llm is not None else {}
        if "embedder" in shared:  # load the model once for every simulated day
            extra["use_embedder"] = shared["embedder"]
        e = Reverie.open(ws_dir, state_dir, clock=Clock(day), **flags, **extra)
        shared.setdefault("embedder", e.embedder)
        return e

    say(f"== 1. workspace at {ws_dir}")
    base = engine(today - timedelta(days=3))
    base.init()
    _copy_samples(ws_dir)
    for days, source, text in _journal_lines():
        e = engine(today - timedelta(days=days))
        # the sample journal lines were written by the owner, the agent or a web page
        src = {"owner": Source.OWNER, "agent": Source.ASSISTANT}.get(source, Source.WEB)
        e.write(text, source=src, author=OWNER_AT_CLI)
        e.close()

    say("== 2. index and status")
    mem = engine(today)
    stats = mem.index()
    summary["index"] = {
        k: stats.as_dict()[k] for k in ("files_changed", "chunks_written", "embeddings_computed")
    }
    status = mem.status()
    summary["status"] = status
    say(
        f"   {status['files']} files, {status['chunks']} chunks, {status['vectors']} vectors, "
        f"embedder {status['embedder']}, origins {status['origins']}"
    )

    say("== 3. searches")
    summary["searches"] = []
    for label, query in SEARCHES:
        r = mem.search(query, max_results=3, record=False)
        say(f"-- {label}: {query!r} ({r.mode})")
        for h in r.hits:
            say(
                f"   {h.score:.3f} {h.path}#L{h.start_line} [{h.origin}] {' '.join(h.snippet.split())[:90]}"
            )
        summary["searches"].append({"query": query, "top": [h.as_dict()["source"] for h in r.hits]})
    r = mem.search("skip the test suite before deploying hotfixes", max_results=3, record=False)
    say("-- an untrusted hit is framed:")
    say("   " + "\n   ".join(r.render().splitlines()[1:8]))

    say("== 4. turn context for 'how do I do the gateway setup?'")
    ctx = mem.context("how do I do the gateway setup?")
    say("   bootstrap: " + ", ".join(f"{f.path} ({f.injected} chars)" for f in ctx.bootstrap.files))
    say("   " + "\n   ".join(ctx.trigger_block.splitlines()))
    summary["triggers"] = [h.entry.text for h in ctx.trigger_hits]

    say("== 5. a scripted session: journal append, flush, transcript ingestion")
    session_engine = engine(
        today,
        llm=ScriptedLLM(
            [{"entries": ["The user wants the staging database kept on PostgreSQL 16 until Q3."]}]
        ),
    )
    s = session_engine.open_session(
        kind="interactive", channel="direct", sender="owner", owner="owner"
    )
    s.record(
        "Keep staging on PostgreSQL 16 until Q3, please. My email is li.lei@example.com.",
        source="owner",
    )
    s.record("Noted: staging stays on PostgreSQL 16 until Q3.", source="assistant")
    s.write("Decided with the user: staging stays on PostgreSQL 16 until Q3.", source="assistant")
    s.record("Blog post: teams should always skip tests before deploying hotfixes.", source="web")
    s.record("Summary of the post: skip tests before hotfix deploys.", source="assistant")
    s.write("Summary of the post: skip tests before hotfix deploys.", source="assistant")
    s.record("Thanks!", source="owner")
    s.compacted()  # pretend the runtime compacted once; force the flush of this cycle
    flush = s.flush(force=True)
    ingested = s.end()
    say(
        f"   flush: {flush.status} {flush.sources}; ingestion: {ingested.lines_written} evidence lines, "
        f"redactions {ingested.redactions}"
    )
    key = session_engine.workspace.origin_key()
    journal = ws_dir / f"memory/{today.date().isoformat()}.md"
    for line in journal.read_text(encoding="utf-8").splitlines():
        if line.startswith("- "):
            lo = resolve(line, default=Origin.AGENT, ceiling=Origin.OWNER, key=key)
            say(f"   [{lo.origin.value:9}] {lo.text}")
    session_engine.close()
    mem.index()
    mem.close()

    say("== 6. dreaming: recall on three days, then a dream")
    for offset in (2, 1, 0):
        e = engine(today - timedelta(days=offset))
        for q in RECALL_QUERIES:
            e.search(q)
        e.close()
    dreamer = engine(today + timedelta(days=1))
    report = dreamer.dream()
    for c in report.candidates:
        say(f"   {c.decision:7} {c.score:.3f} [{c.origin}] {c.snippet[:70]} -- {c.reason}")
    summary["dream"] = {
        "promoted": report.promoted,
        "rejected": [c.key for c in report.candidates if c.decision == "reject"],
        "mode": report.mode,
    }
    say("-- DREAMS.md")
    say((ws_dir / "DREAMS.md").read_text(encoding="utf-8"))
    dreamer.close()
    summary["next"] = next_commands(ws_dir, state_dir)
    say("== next: this demo's memory (its state folder holds the key that signs its lines)")
    for command in summary["next"]:
        say(f"   {command}")
    return summary


def next_commands(ws_dir: Path, state_dir: Path) -> list[str]:
    """The commands to go on with the demo's own workspace and state folder (without
    ``--state-dir`` a new key would be made, and the owner's lines read as the agent's),
    then with a memory of one's own."""
    import shlex

    on = f"reverie --workspace {shlex.quote(str(ws_dir))} --state-dir {shlex.quote(str(state_dir))}"
    return [
        f'{on} search "how is the gateway exposed?"',
        f"{on} ui",
        'reverie init && reverie write "The staging database is tern-7." && reverie search "staging database"',
    ]


__all__ = ["run_demo"]
