"""Questions that need more than one look (issue 21 point 6): a question that names a
person prefers the lines that person speaks, a question joining two people is also
asked about each, and ``--explain`` says which look found a hit."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Paths
from reverie.engine import Reverie
from reverie.recall.hops import names, parts, seed_terms, speaker

DAY = "memory/2026-04-10.md"


def test_a_joined_question_is_split_at_the_names_it_joins() -> None:
    assert parts("What do Ana and Ben both like?") == ["What do Ana like?", "What do Ben like?"]
    assert parts("Which city have both Jean and John visited?") == [
        "Which city have Jean visited?",
        "Which city have John visited?",
    ]
    assert parts("小明和小红都喜欢什么？") == ["小明都喜欢什么？", "小红都喜欢什么？"]
    assert parts("Do you like salt and pepper on eggs?") == []  # not two names
    assert parts("What did Ana paint?") == []
    assert parts("和平是什么？") == []


def test_speakers_and_names() -> None:
    assert speaker("- Ana: I paint on Sundays.") == "Ana"
    assert speaker("- 14:02 Ben: see you") == "Ben"
    assert speaker("- plain note: no speaker here") is None
    assert names("What did Ana's brother tell Ben?") == {"Ana", "Ben"}  # not "What"


def test_a_second_round_looks_up_what_the_best_hit_names() -> None:
    found = seed_terms(
        "What book did Ana read?",
        ['- Ana: I finally read "Becoming Nicole", a lovely book!'],
        ["- Ben: what book are you reading?", "- Ana: I love a good book"],
    )
    assert "becoming" in found and "nicole" in found
    assert "book" not in found and "ana" not in found  # the question's own words


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
    engine = engine_factory(embedder="fake", search_speaker_boost=1.2)
    hit = engine.search(q, record=False).hits[0]
    assert hit.snippet.startswith("- Ana: My zqpottery class")
    assert hit.explain["found_by"] == "spoken by Ana"
    assert "found_by=spoken by Ana" in engine.search(q, record=False).render(explain=True)
