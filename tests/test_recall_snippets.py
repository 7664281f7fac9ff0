"""Recall puts the evidence in front of the model (issue 9): a hit shows the lines that
match, says its day, fits a token budget, and decay orders without burying."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Paths, RunCli
from reverie.engine import Reverie
from reverie.recall.snippets import focus, pack
from reverie.tokens import count_tokens


def _note(paths: Paths, n: int = 20, match_at: int = 18) -> str:
    lines = [f"Routine line {i} about lunch, errands and the weather." for i in range(1, n + 1)]
    lines[match_at - 1] = "The zqkafka broker listens on port 9092 behind the VPN."
    paths.write("notes/ops.md", "\n".join(lines) + "\n")
    return "notes/ops.md"


def test_the_snippet_is_the_matching_line_with_context(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    rel = _note(paths)
    engine.index()
    [hit] = [h for h in engine.search("zqkafka broker port", record=False).hits if h.path == rel]
    assert (hit.start_line, hit.end_line) == (17, 19)  # line 18 and one line either side
    source = (paths.workspace / rel).read_text(encoding="utf-8").split("\n")
    assert hit.snippet == "\n".join(source[16:19])  # exactly the lines it names
    assert "zqkafka broker" in hit.snippet and "Routine line 1 " not in hit.snippet
    assert hit.text.count("\n") == 19  # the whole chunk is still there (memory_get)


def test_every_hit_says_its_day(run_cli: RunCli, paths: Paths) -> None:
    run_cli("init")
    paths.write("memory/2026-03-14.md", "# 2026-03-14\n\n- zqpi The pie contest is on Friday.\n")
    run_cli("index")
    data = json.loads(run_cli("search", "zqpi pie contest", "--json").stdout)
    [hit] = [h for h in data["hits"] if h["path"] == "memory/2026-03-14.md"]
    assert hit["day"] == "2026-03-14"
    # the text says it once: the journal's name is its day (a head's tokens are the
    # budget's, not evidence's)
    text = run_cli("search", "zqpi pie contest").stdout
    assert "memory/2026-03-14.md#L3-L3 agent" in text
    assert text.count("2026-03-14") == 1


def test_a_budget_is_never_exceeded_and_no_line_shows_twice(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(
        embedder="fake", journal_chunking="budget", chunk_tokens=60, chunk_overlap=10
    )
    engine.init()
    for d in range(6):
        body = "\n".join(
            f"- zqdeploy step {d}-{i}: deploy the service to staging" for i in range(30)
        )
        paths.write(f"memory/2026-04-{10 + d:02d}.md", f"# day {d}\n\n{body}\n")
    engine.index()
    for budget in (80, 300, 1000, 2000):
        resp = engine.search("zqdeploy deploy staging", budget_tokens=budget, record=False)
        hits = resp.hits
        assert hits
        # what the model reads (every hit, heads included) fits; the first line is the
        # "N result(s)" summary
        assert count_tokens(resp.render().split("\n", 1)[1]) <= budget
        assert all(h.framed in resp.render() for h in hits)
        shown = [(h.path, n) for h in hits for n in h.lines]
        assert len(shown) == len(set(shown))
    few = engine.search("zqdeploy deploy staging", budget_tokens=300, record=False).hits
    many = engine.search("zqdeploy deploy staging", budget_tokens=2000, record=False).hits
    assert len(many) > len(few) > 0 and len(many) > 6  # a budget, not max_results


def test_a_unique_300_day_old_line_is_found_with_decay_on(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    today = engine.clock.today()
    old = today - timedelta(days=300)
    paths.write(
        f"memory/{old.isoformat()}.md", f"# {old}\n\n- The zqmarmot vaccine batch is 7731.\n"
    )
    for d in range(1, 30):
        day = today - timedelta(days=d)
        paths.write(
            f"memory/{day.isoformat()}.md",
            f"# {day}\n\n- Checked the vaccine fridge temperature, all fine.\n"
            "- Ordered more vaccine labels.\n",
        )
    engine.index()
    hits = engine.search("zqmarmot vaccine batch", record=False).hits
    assert hits and hits[0].path == f"memory/{old.isoformat()}.md"
    # recency orders, it never buries: decay stays at or above the configured floor
    assert hits[0].explain["decay"] >= engine.settings.journal_decay_floor > 0.5


def test_a_newer_value_beats_its_old_one(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    today = engine.clock.today()
    then, now = today - timedelta(days=120), today - timedelta(days=10)
    paths.write(f"memory/{then}.md", f"# {then}\n\n- The zqwifi password is tulip-4.\n")
    paths.write(f"memory/{now}.md", f"# {now}\n\n- The zqwifi password is orchid-9.\n")
    engine.index()
    hits = engine.search("zqwifi password", record=False).hits
    assert [h.path for h in hits[:2]] == [f"memory/{now}.md", f"memory/{then}.md"]


LINE = st.text(alphabet=st.sampled_from(list("abc xyz 中文")), min_size=0, max_size=30)


@given(st.lists(LINE, min_size=1, max_size=25), st.text(alphabet="abcxyz 中", max_size=10))
@settings(max_examples=80, deadline=None)
def test_focus_shows_contiguous_lines_of_the_chunk(lines: list[str], query: str) -> None:
    text = "\n".join(lines)
    f = focus(text, 10, query, context=1)
    assert 10 <= f.start_line <= f.end_line <= 10 + len(lines) - 1
    assert f.text == "\n".join(lines[f.start_line - 10 : f.end_line - 10 + 1])


@given(
    st.lists(
        st.tuples(st.integers(1, 300), st.sets(st.integers(1, 40), min_size=1, max_size=4)),
        max_size=30,
    ),
    st.integers(1, 1500),
)
def test_pack_respects_the_budget_and_shows_no_line_twice(
    items: list[tuple[int, set[int]]], budget: int
) -> None:
    costs = [(c, frozenset(("f", n) for n in ls)) for c, ls in items]
    chosen = pack(costs, budget)
    assert chosen == sorted(chosen)  # rank order kept
    assert sum(costs[i][0] for i in chosen) <= budget
    seen = [ln for i in chosen for ln in costs[i][1]]
    assert len(seen) == len(set(seen))


def test_a_budget_is_spent_on_evidence_not_heads(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    """A day's short lines in a budget: the heads (path, lines, day, score) cost under
    a sixth of what the model reads; the day's name and the lines under the file's
    head say nothing twice (with the day repeated and a score on every line, heads
    took a fifth: 3 lines fewer in 300 tokens)."""
    engine = engine_factory(embedder="fake")
    engine.init()
    day = "\n".join(f"- zqotter sighting {i} by the river bend" for i in range(40))
    paths.write("memory/2026-04-10.md", f"# day\n\n{day}\n")
    engine.index()
    resp = engine.search("zqotter sighting river", budget_tokens=300, record=False)
    text = resp.render().split("\n", 1)[1]  # (the first line is the "N result(s)" summary)
    evidence = sum(count_tokens(h.framed) for h in resp.hits)
    assert count_tokens(text) <= 300
    assert count_tokens(text) - evidence < count_tokens(text) / 6
    assert len(resp.hits) >= 25


def test_hits_of_one_file_share_its_head(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    """Rendered for a model, a file's next hits sit under its first hit's head and say
    only their lines: more evidence fits a budget."""
    engine = engine_factory(embedder="fake")
    engine.init()
    day = "\n".join(f"- zqotter sighting {i} by the river bend" for i in range(6))
    paths.write("memory/2026-04-10.md", f"# day\n\n{day}\n")
    paths.write("notes/otters.md", "# Otters\n\nzqotter facts: they hold hands.\n")
    engine.index()
    resp = engine.search("zqotter sighting river", budget_tokens=2000, record=False)
    journal = [h for h in resp.hits if h.path == "memory/2026-04-10.md"]
    assert len(journal) >= 3
    text = resp.render()
    assert text.count("memory/2026-04-10.md#") == 1  # one head for the file
    first, *rest = journal
    assert f"memory/2026-04-10.md#L{first.start_line}-L{first.end_line} agent" in text
    for h in rest:  # right under it, in rank order, with their own line numbers only
        assert f"\n#L{h.start_line}\n{h.framed}" in text
    body = text.split("\n\n")
    assert body[1].startswith("memory/2026-04-10.md#") or body[2].startswith(
        "memory/2026-04-10.md#"
    )
    # JSON keeps every hit whole, in rank order
    assert [d["source"] for d in resp.as_dict()["hits"]] == [
        f"{h.path}#L{h.start_line}-L{h.end_line}" for h in resp.hits
    ]
