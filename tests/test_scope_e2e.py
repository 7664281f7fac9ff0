"""Project scope end to end (R-SCOPE-1, R-TRAIL-3, R-TRIG-1..6 step 2, SPEC section 8).

What a user notices: a note written while working inside repository A is tagged with
A (signed, so a pasted marker cannot tag a line), dreaming keeps the tag on the entry
it promotes, search ranks A's notes higher inside A, and a trigger of A's fires only
while A is active: inside A, never inside B, and no longer once a session has moved on
to four other repositories. A malformed project tag never leaks into any project.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import FIXED_NOW, Paths
from reverie.cli.app import cli
from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.provenance.origin import OWNER_AT_CLI, Source
from reverie.scope import project_key
from reverie.storage.trailers import INVALID_PROJECT
from test_scope import git, repo

NOW = datetime.fromisoformat(FIXED_NOW)
RunCli = Callable[..., Result]


@pytest.fixture
def run_cli(paths: Paths, env: dict[str, str]) -> RunCli:
    """The real command line, in-process."""
    overrides: dict[str, str | None] = {k: None for k in os.environ if k.startswith("REVERIE_")}
    overrides.update({k: v for k, v in env.items() if k.startswith("REVERIE_")})

    def run(*args: str, check: bool = True) -> Result:
        argv = ["--workspace", str(paths.workspace), "--state-dir", str(paths.state)]
        result = CliRunner().invoke(cli, [*argv, "--embedder", "fake", *args], env=overrides)
        if check:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return run


def as_json(result: Result) -> Any:
    return json.loads(result.output)


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Path]:
    """Repositories A..F with remotes (A in ssh form), and a plain directory."""
    out = {"A": repo(tmp_path / "repo-a", "git@github.com:Acme/Alpha.git")}
    for name in "BCDEF":
        out[name] = repo(tmp_path / f"repo-{name.lower()}", f"https://github.com/acme/{name}")
    (tmp_path / "plain").mkdir()
    out["plain"] = tmp_path / "plain"
    return out


MEMORY = """# Memory

- Release builds of this repository need the turbo flag. <!-- trigger: release build --> <!-- project: {a} -->
- Deploys go through the blue pipeline. <!-- trigger: deploy pipeline --> <!-- project: ../broken -->
- The answer to the kettle question is always chamomile. <!-- trigger: kettle question -->
- Code review happens on Tuesdays in this team. <!-- project: {a} -->
- Code review happens on Fridays in this team. <!-- project: {b} -->
"""


@pytest.fixture
def workspace(run_cli: RunCli, paths: Paths, repos: dict[str, Path]) -> dict[str, str]:
    run_cli("init")
    keys = {n: project_key(p) or "" for n, p in repos.items() if n != "plain"}
    paths.write("MEMORY.md", MEMORY.format(a=keys["A"], b=keys["B"]))
    run_cli("index")
    return keys


def fired(run_cli: RunCli, message: str, *args: str) -> list[str]:
    data = as_json(run_cli("context", message, *args, "--json"))
    return [t["text"] for t in data["triggers"]]


def test_write_inside_a_repository_tags_the_line(
    run_cli: RunCli, paths: Paths, repos: dict[str, Path], open_index: Any
) -> None:
    run_cli("init")
    sub = repos["A"] / "src"
    sub.mkdir()
    out = as_json(run_cli("write", "The parser needs Python 3.12.", "--cwd", str(sub), "--json"))
    assert out["project"] == "github.com/acme/alpha"
    as_json(run_cli("write", "Lunch was good.", "--cwd", str(repos["plain"]), "--json"))
    journal = (paths.workspace / out["path"]).read_text(encoding="utf-8")
    (tagged,) = [ln for ln in journal.splitlines() if "parser" in ln]
    assert re.match(
        r"^- <!-- origin: owner; session: interactive; project: github.com/acme/alpha; "
        r"sig: [0-9a-f]{16} --> \d\d:\d\d The parser",
        tagged,
    )
    (plain,) = [ln for ln in journal.splitlines() if "Lunch" in ln]
    assert "project:" not in plain
    conn = open_index()
    rows = dict(
        conn.execute(
            "SELECT c.text, n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id "
            "WHERE c.kind = 'journal'"
        ).fetchall()
    )
    assert [json.loads(v) for k, v in rows.items() if "parser" in k] == [["github.com/acme/alpha"]]
    assert [json.loads(v) for k, v in rows.items() if "Lunch" in k] == [[]]


def test_a_forged_or_edited_project_tag_scopes_the_line_nowhere(
    run_cli: RunCli, paths: Paths, repos: dict[str, Path], open_index: Any
) -> None:
    run_cli("init")
    out = as_json(run_cli("write", "Alpha uses tabs.", "--cwd", str(repos["A"]), "--json"))
    path = paths.workspace / out["path"]
    text = path.read_text(encoding="utf-8")
    moved = text.replace("project: github.com/acme/alpha", "project: github.com/acme/b")
    forged = (
        "- <!-- origin: agent; session: interactive; project: github.com/acme/b --> 10:00 Hi.\n"
    )
    path.write_text(moved + forged, encoding="utf-8")
    run_cli("index")
    projects = {
        text: json.loads(p)
        for text, p in open_index().execute(
            "SELECT c.text, n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id "
            "WHERE c.kind = 'journal' AND (c.text LIKE '%tabs%' OR c.text LIKE '%Hi.%')"
        )
    }
    assert len(projects) == 2 and all(p == [INVALID_PROJECT] for p in projects.values())


def test_trigger_fires_inside_its_repository_only(
    run_cli: RunCli, workspace: dict[str, str], repos: dict[str, Path]
) -> None:
    msg = "how do I do a release build?"
    inside = fired(run_cli, msg, "--cwd", str(repos["A"]))
    assert any("turbo flag" in t for t in inside)
    assert fired(run_cli, msg, "--cwd", str(repos["B"])) == []
    assert fired(run_cli, msg, "--cwd", str(repos["plain"])) == []
    assert fired(run_cli, msg) == []
    by_key = fired(run_cli, msg, "--project", "https://github.com/ACME/alpha.git")
    assert any("turbo flag" in t for t in by_key)
    # an untagged entry is global: it fires everywhere
    assert fired(run_cli, "the kettle question again", "--cwd", str(repos["B"]))


def test_a_malformed_project_tag_never_fires_anywhere(
    run_cli: RunCli, workspace: dict[str, str], repos: dict[str, Path]
) -> None:
    msg = "what is the deploy pipeline?"
    for where in ("A", "B", "plain"):
        assert fired(run_cli, msg, "--cwd", str(repos[where])) == [], where
    assert fired(run_cli, msg) == []
    bad = run_cli("context", msg, "--project", INVALID_PROJECT, "--json", check=False)
    assert bad.exit_code != 0  # the sentinel is no key anyone can activate


def test_search_order_follows_the_active_project(
    run_cli: RunCli, workspace: dict[str, str], repos: dict[str, Path]
) -> None:
    def order(*args: str) -> list[str]:
        hits = as_json(run_cli("search", "when does code review happen", *args, "--json"))["hits"]
        return [h["snippet"] for h in hits if "Code review" in h["snippet"]]

    in_a = order("--cwd", str(repos["A"]))
    in_b = order("--cwd", str(repos["B"]))
    assert "Tuesdays" in in_a[0] and "Fridays" in in_b[0]
    explained = as_json(
        run_cli("search", "when does code review happen", "--cwd", str(repos["A"]), "--json")
    )["hits"]
    mults = {
        ("Tuesdays" in h["snippet"]): h["explain"]["project_mult"]
        for h in explained
        if "Code review" in h["snippet"]
    }
    assert mults == {True: 1.15, False: 0.9}


@pytest.fixture
def engine(paths: Paths, env: dict[str, str], workspace: dict[str, str]) -> Iterator[Reverie]:
    e = Reverie.open(paths.workspace, paths.state, environ=env, embedder="fake")
    yield e
    e.close()


def test_a_session_forgets_a_project_after_four_others(
    engine: Reverie, repos: dict[str, Path]
) -> None:
    msg = "time for a release build"
    s = engine.open_session(cwd=repos["A"] / ".")
    assert s.scope.current == "github.com/acme/alpha"
    assert any("turbo" in h.entry.text for h in s.context(msg).trigger_hits)
    for name in "BCD":
        s.context("hello", cwd=repos[name])
    assert any("turbo" in h.entry.text for h in s.context(msg).trigger_hits)  # 4 active
    s.context("hello", cwd=repos["E"])  # the fifth pushes A out
    assert "github.com/acme/alpha" not in s.scope.keys and len(s.scope.keys) == 4
    assert s.context(msg).trigger_hits == []
    # persisted: the reopened session has the same LRU
    again = engine.open_session(session_id=s.id)
    assert again.scope.keys == s.scope.keys
    assert again.context(msg).trigger_hits == []
    assert any("turbo" in h.entry.text for h in again.context(msg, cwd=repos["A"]).trigger_hits)


def test_a_session_write_carries_its_project(
    engine: Reverie, repos: dict[str, Path], paths: Paths
) -> None:
    s = engine.open_session(cwd=repos["B"])
    appended = s.write("B builds with ninja.")
    assert appended.project == "github.com/acme/b"
    assert s.write("A builds with make.", cwd=repos["A"]).project == "github.com/acme/alpha"
    assert s.write("No repo here.", cwd=repos["plain"]).project is None
    # the owner at the CLI, and a worktree of A: the same project
    wt = repos["A"].parent / "a-worktree"
    git("worktree", "add", "-q", "-b", "side", wt, cwd=repos["A"])
    same = engine.write(
        "Worktree note.", source=Source.OWNER, author=OWNER_AT_CLI, project=project_key(wt)
    )
    assert same.project == "github.com/acme/alpha"


def test_dreaming_carries_the_project_into_the_promoted_entry(
    paths: Paths, env: dict[str, str], repos: dict[str, Path]
) -> None:
    fact = "The staging database lives on host orca-db-2 in the Frankfurt region."
    queries = (
        "staging database host orca-db-2 Frankfurt region",
        "which host does the staging database live on",
        "staging database in the Frankfurt region",
    )

    def at(days: int) -> Reverie:
        clock = Clock(NOW + timedelta(days=days))
        return Reverie.open(paths.workspace, paths.state, environ=env, clock=clock, embedder="fake")

    e = at(-4)
    e.init()
    e.write(fact, source=Source.OWNER, author=OWNER_AT_CLI, project=project_key(repos["A"]))
    e.index()
    e.close()
    for day in (-3, -2, -1):
        e = at(day)
        for q in queries:
            e.search(q, active_projects=("github.com/acme/alpha",))
        e.close()
    e = at(0)
    report = e.dream()
    e.close()
    assert report.promoted, report
    memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    (entry,) = [ln for ln in memory.splitlines() if "orca-db-2" in ln]
    assert entry.endswith("<!-- project: github.com/acme/alpha -->")


def test_mcp_tools_take_an_optional_cwd(engine: Reverie, repos: dict[str, Path]) -> None:
    from reverie.mcp_server import MemoryTools

    tools = MemoryTools(engine)
    wrote = tools.write("Alpha's CI runs on Tuesdays.", "agent", cwd=str(repos["A"]))
    assert not wrote.is_error and wrote.structured_content["project"] == "github.com/acme/alpha"
    plain = tools.write("A note from nowhere.", "agent")
    assert "project" not in plain.structured_content
    found = tools.search("when does code review happen", 6, (), cwd=str(repos["B"]))
    hits = [h for h in found.structured_content["hits"] if "Code review" in h["snippet"]]
    assert "Fridays" in hits[0]["snippet"]


def test_a_transcript_line_keeps_the_project_it_was_said_in(
    engine: Reverie, repos: dict[str, Path], paths: Paths
) -> None:
    s = engine.open_session(sender="me", owner="me", cwd=repos["A"])
    s.record("The alpha parser needs the strict flag.", source="owner")
    s.context("hello", cwd=repos["plain"])
    s.record("Lunch is at noon.", source="owner")
    s.end()
    corpus = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (paths.workspace / "memory" / ".dreams" / "session-corpus").glob("*.md")
    )
    (alpha,) = [ln for ln in corpus.splitlines() if "strict flag" in ln]
    (lunch,) = [ln for ln in corpus.splitlines() if "Lunch" in ln]
    assert "project: github.com/acme/alpha;" in alpha and "project:" not in lunch


def test_user_md_is_never_project_scoped(
    run_cli: RunCli, paths: Paths, repos: dict[str, Path], open_index: Any
) -> None:
    run_cli("init")
    paths.write(
        "USER.md",
        "# User\n\n- Always answer tersely. <!-- trigger: terse answer --> "
        "<!-- project: github.com/acme/alpha -->\n",
    )
    assert "USER.md:3: USER.md is never project-scoped" in run_cli("index").output
    (projects,) = [
        json.loads(r[0])
        for r in open_index().execute(
            "SELECT n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id "
            "WHERE c.path = 'USER.md' AND c.text LIKE '%tersely%'"
        )
    ]
    assert projects == []
    assert fired(run_cli, "give me a terse answer", "--cwd", str(repos["B"]))


def test_mcp_over_stdio_tags_a_write_with_its_cwd(
    run_cli: RunCli, paths: Paths, env: dict[str, str], repos: dict[str, Path], tmp_path: Path
) -> None:
    from contextlib import AsyncExitStack

    from test_mcp import Servers, _run

    run_cli("init")
    servers = Servers(paths, env, tmp_path)

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            client = await servers.connect(stack)
            return await client.call_tool(
                "memory_write", {"text": "Alpha ships on Mondays.", "cwd": str(repos["A"])}
            )

    wrote = _run(main)
    assert not wrote.is_error, wrote
    assert wrote.structured_content["project"] == "github.com/acme/alpha"
    journal = (paths.workspace / wrote.structured_content["path"]).read_text(encoding="utf-8")
    assert "project: github.com/acme/alpha; sig: " in journal


def test_a_consolidation_rewrite_that_drops_a_project_is_rejected() -> None:
    from reverie.dreaming.consolidate import Promotion, check_rewrite
    from reverie.dreaming.memory_file import append_generated, render_entry

    anchor = "memory/2026-04-27.md#L3-L3"
    rendered = render_entry("Alpha builds with turbo.", anchor, 7, ("turbo build",), ("x/alpha",))
    p = Promotion(
        key="memory/2026-04-27.md:3:3",
        anchor=anchor,
        text="Alpha builds with turbo.",
        rendered=rendered,
        score=0.8,
        importance=7,
        tags=("turbo build",),
        origin="owner",
        session_kind="interactive",
        observed="2026-04-27",
        projects=("x/alpha",),
    )
    old = "# Memory\n\n- Keep it short.\n"
    ops = [{"candidate": p.key, "op": "added"}]
    good = append_generated(old, [rendered])
    assert check_rewrite(old, {"memory": good, "operations": ops}, [p], budget=10_000).ok
    dropped = good.replace(" <!-- project: x/alpha -->", "")
    out = check_rewrite(old, {"memory": dropped, "operations": ops}, [p], budget=10_000)
    assert not out.ok and "project" in out.reason
    # a later rewrite that merges the scoped entry away into a global one is refused too
    merged = good.replace(rendered, f"- Alpha builds with turbo. Source: {anchor}")
    later = check_rewrite(good, {"memory": merged, "operations": []}, [], budget=10_000)
    assert not later.ok and "project" in later.reason
