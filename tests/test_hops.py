"""Questions that need more than one look (issue 21 point 6): a question that names a
person prefers the lines that person speaks, a session
that holds several hits is read together, and ``--explain`` says why a hit moved."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Paths
from reverie.engine import Reverie
from reverie.recall.hops import names, speaker

DAY = "memory/2026-04-10.md"


def test_speakers_and_names() -> None:
    assert speaker("- Ana: I paint on Sundays.") == "Ana"
    assert speaker("- 14:02 Ben: see you") == "Ben"
    assert speaker("- plain note: no speaker here") is None
    assert names("What did Ana's brother tell Ben?") == {"Ana", "Ben"}  # not "What"


def _chat(paths: Paths) -> None:
    paths.write(
        DAY,
        "# Session 1\n\n"
        "- Ben: Ana, how is your zqpottery class?\n"
        "- Ana: My zqpottery class is fun, Ben.\n"
        "- Ben: Nice weather today.\n",
    )


def test_a_question_naming_a_person_prefers_the_lines_they_speak(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    off = engine_factory(embedder="fake", search_speaker_boost=1.0)
    off.init()
    _chat(paths)
    off.index()
    q = "How is the zqpottery class of Ana?"
    first = off.search(q, record=False).hits[0]
    assert first.snippet.startswith("- Ben:")  # the line addressing her matches as well
    engine = engine_factory(embedder="fake")  # the default lifts her own lines
    resp = engine.search(q, record=False)
    hit = resp.hits[0]
    assert hit.snippet.startswith("- Ana: My zqpottery class")
    assert hit.explain["found_by"] == "spoken by Ana"
    assert "found_by=spoken by Ana" in resp.render(explain=True)
    both = engine.search("How is the zqpottery class of Ana and Ben?", record=False)
    assert all("found_by" not in h.explain for h in both.hits)  # both named: no preference


def test_a_budget_reads_a_session_that_keeps_to_the_topic_first(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    paths.write(
        "memory/2026-04-08.md",
        "# Session 1\n\n- Ana: zqkiln arrived.\n\n- Ana: unrelated filler words here.\n",
    )
    paths.write(
        DAY,
        "# Session 2\n\n- Ana: I fired the zqkiln twice.\n\n- Ana: The zqkiln runs hot now.\n",
    )
    off = engine_factory(embedder="fake", search_session_bonus=0.0, search_context_reach=0)
    off.init()
    off.index()
    on = engine_factory(embedder="fake", search_context_reach=0)
    q = "zqkiln"
    before = {h.path: h.score for h in off.search(q, budget_tokens=500, record=False).hits}
    hits = on.search(q, budget_tokens=500, record=False).hits
    assert {h.path for h in hits} == {DAY, "memory/2026-04-08.md"}
    lifted = [h for h in hits if h.path == DAY]
    assert all(h.score > before[DAY] * 1.05 for h in lifted)  # two hits of one session
    assert all(h.explain["found_by"] == "session of 2 hits" for h in lifted)
    alone = next(h for h in hits if h.path != DAY)
    assert "found_by" not in alone.explain
