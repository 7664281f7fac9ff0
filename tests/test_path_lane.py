"""The path lane names the same files, in the same order, whether it answers a
version's first question from the paths a word occurs in (what a one-shot search asks)
or from every path mapped (every question after it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.storage.index.path_lane import PathLane, naming

PATHS = [
    "MEMORY.md",
    "USER.md",
    "memory/2026-04-30.md",
    "memory/2026-05-01.md",
    "notes/Deploy.md",
    "notes/deploy.md",
    "notes/ΣΟΦΙΑ.md",
    "notes/İstanbul.md",
    "projects/user/notes.md",
]
QUERIES = [
    "2026-04-30.md",
    "memory/2026-05-01.md",
    "what is in deploy.md?",
    "deploy",
    "user",
    "USER.md notes.md",
    "σοφια",
    "σοφια.md",
    "i̇stanbul.md",
    "nothing here",
    "",
]


def _answers(paths: list[str], query: str) -> tuple[dict[str, int], dict[str, int]]:
    lane = PathLane()
    first = lane.match_in("v1", lambda: iter(paths), query)  # from the paths named
    second = lane.match_in("v1", lambda: iter(paths), query)  # every path mapped
    return first, second


def test_the_first_and_later_questions_name_the_same_files() -> None:
    for query in QUERIES:
        first, second = _answers(PATHS, query)
        assert list(first.items()) == list(second.items()), query
    assert _answers(PATHS, "deploy.md")[0] == {"notes/Deploy.md": 2, "notes/deploy.md": 2}
    assert _answers(PATHS, "memory/2026-04-30.md")[0] == {"memory/2026-04-30.md": 3}


def test_a_new_version_is_answered_from_its_own_paths() -> None:
    lane = PathLane()
    for _ in range(3):
        assert lane.match_in("v1", lambda: iter(PATHS), "USER.md") == {"USER.md": 3}
    moved = [*PATHS, "notes/USER.md"]
    assert lane.match_in("v2", lambda: iter(moved), "USER.md") == {
        "USER.md": 3,
        "notes/USER.md": 2,
    }


names = st.text(st.sampled_from("aAbΣσςİi̇.-_ '"), min_size=1, max_size=6)
paths_st = st.lists(
    st.lists(names, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md"),
    max_size=12,
)


@settings(max_examples=1000, deadline=None)
@given(paths=paths_st, query=st.text(st.sampled_from("aAbΣσςİi̇.-_ /'"), max_size=12))
def test_any_paths_and_query_name_the_same_files_either_way(paths: list[str], query: str) -> None:
    first, second = _answers(paths, query)
    assert list(first.items()) == list(second.items())


@given(paths=paths_st, word=names)
def test_naming_keeps_every_path_the_word_is_in(paths: list[str], word: str) -> None:
    w = word.lower()
    fold = lambda text: text.replace("ς", "σ")  # noqa: E731
    assert naming(paths, [w]) == [p for p in paths if fold(w) in fold(p.lower())]


def test_a_stem_ending_in_a_capital_sigma_is_named() -> None:
    # "AΣ".lower() is "aς", but "AΣ.md".lower() is "aσ.md" (found by hypothesis)
    first, second = _answers(["notes/AΣ.md"], "AΣ")
    assert first == second == {"notes/AΣ.md": 1}
