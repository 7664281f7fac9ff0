"""Trailers on curated lines (SPEC 2.2, R-TRAIL-1..5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.storage.trailers import (
    INVALID_PROJECT,
    Trailers,
    normalise_project,
    parse_line,
    render,
    split_phrases,
    strip,
)

# -- strategies ------------------------------------------------------------------------

WORDS = ["gateway", "setup", "network", "safety", "deploy", "python", "数据库", "咖啡", "k8s"]
# a normalised trigger phrase: words joined by single spaces, no separators, <= 64 chars
phrase = (
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)
    .map(" ".join)
    .filter(lambda p: len(p) <= 64)
)
# a project key that is already normalised (normalise_project(k) == k)
project_key = (
    st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,40}", fullmatch=True)
    .filter(lambda k: ".." not in k and not k.endswith(("/", ".git")))
    .filter(lambda k: normalise_project(k) == k)
)
trailers_st = st.builds(
    Trailers,
    triggers=st.lists(phrase, max_size=4, unique=True).map(tuple),
    importance=st.none() | st.integers(1, 10),
    projects=st.lists(project_key, max_size=3, unique=True).map(tuple),
)
# free text of one line that contains no HTML comment of its own
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="<"),
    max_size=80,
)


# -- round trip --------------------------------------------------------------------------


@given(text=line_text, trailers=trailers_st)
@settings(max_examples=200, deadline=None)
def test_render_then_parse_round_trips(text: str, trailers: Trailers) -> None:
    line = render(text, trailers)
    parsed = parse_line(line)
    assert parsed.trailers == trailers
    assert parsed.text == text.rstrip()
    assert strip(line) == text.rstrip()
    assert parsed.warnings == ()
    # rendering what was parsed gives the same line back (canonical form is stable)
    assert render(parsed.text, parsed.trailers) == line


@given(line=st.text(max_size=120))
@settings(max_examples=300, deadline=None)
def test_parse_never_raises_and_never_yields_an_out_of_range_value(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.text == strip(line)
    imp = parsed.trailers.importance
    assert imp is None or 1 <= imp <= 10
    assert all(p for p in parsed.trailers.projects)  # never None / empty: sentinel instead


def test_trailer_text_is_stripped_from_the_line() -> None:
    line = "- Keep the gateway on loopback. <!-- trigger: gateway setup, network safety --> <!-- importance: 9 -->"
    parsed = parse_line(line)
    assert parsed.text == "- Keep the gateway on loopback."
    assert parsed.trailers.triggers == ("gateway setup", "network safety")
    assert parsed.trailers.importance == 9


# -- trigger (R-TRAIL-1) ------------------------------------------------------------------


def test_trigger_splits_on_commas_and_semicolons() -> None:
    parsed = parse_line("- x <!-- trigger: alpha beta, gamma;delta ;  epsilon ,, -->")
    assert parsed.trailers.triggers == ("alpha beta", "gamma", "delta", "epsilon")


def test_trigger_phrases_are_whitespace_normalised_and_deduplicated() -> None:
    assert split_phrases("  two   words ; two words, other ") == ("two words", "other")


def test_several_trigger_trailers_are_united() -> None:
    parsed = parse_line("- x <!-- trigger: a --> <!-- TRIGGER: b; a -->")
    assert parsed.trailers.triggers == ("a", "b")


# -- importance (R-TRAIL-2) ---------------------------------------------------------------


@pytest.mark.parametrize("value", [1, 5, 10])
def test_importance_accepts_integers_1_to_10(value: int) -> None:
    parsed = parse_line(f"- x <!-- importance: {value} -->")
    assert parsed.trailers.importance == value
    assert parsed.warnings == ()


@pytest.mark.parametrize("value", ["0", "11", "-3", "5.5", "high", "", "1e1", "007"])
def test_invalid_importance_is_null_with_a_warning(value: str) -> None:
    parsed = parse_line(f"- x <!-- importance: {value} -->")
    assert parsed.trailers.importance is None
    assert len(parsed.warnings) == 1
    assert "importance" in parsed.warnings[0]
    assert parsed.text == "- x"


def test_several_importances_take_the_max() -> None:
    parsed = parse_line("- x <!-- importance: 3 --> <!-- importance: 8 --> <!-- importance: 5 -->")
    assert parsed.trailers.importance == 8


def test_an_invalid_importance_beside_a_valid_one_keeps_the_valid_one() -> None:
    parsed = parse_line("- x <!-- importance: 42 --> <!-- importance: 4 -->")
    assert parsed.trailers.importance == 4
    assert len(parsed.warnings) == 1


# -- project (R-TRAIL-3) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Acme/Repo.git",
        "https://github.com/acme/repo",
        "https://github.com/acme/repo.git",
        "https://github.com/acme/repo/",
        "ssh://git@github.com/acme/repo.git",
        "HTTPS://GitHub.com/Acme/Repo",
        "github.com/acme/repo",
    ],
)
def test_ssh_and_https_remotes_normalise_to_one_key(remote: str) -> None:
    assert normalise_project(remote) == "github.com/acme/repo"
    parsed = parse_line(f"- x <!-- project: {remote} -->")
    assert parsed.trailers.projects == ("github.com/acme/repo",)
    assert parsed.warnings == ()


@pytest.mark.parametrize(
    "raw", ["", "   ", "../etc/passwd", "a/../b", "!!!", "-dash", "x" * 200, "ü-proj"]
)
def test_malformed_project_is_the_invalid_sentinel_never_none(raw: str) -> None:
    parsed = parse_line(f"- x <!-- project: {raw} -->")
    assert parsed.trailers.projects == (INVALID_PROJECT,)
    assert parsed.trailers.projects != ()  # an empty tuple would make the entry global
    assert parsed.warnings


def test_one_bad_project_among_good_ones_keeps_the_sentinel() -> None:
    parsed = parse_line("- x <!-- project: github.com/a/b, ../bad -->")
    assert parsed.trailers.projects == ("github.com/a/b", INVALID_PROJECT)


@given(raw=st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_normalise_project_is_idempotent_and_never_empty(raw: str) -> None:
    key = normalise_project(raw)
    assert key
    assert normalise_project(key) == key or key == INVALID_PROJECT


# -- R-TRAIL-5 ------------------------------------------------------------------------------


def test_lines_without_trailers_are_unchanged() -> None:
    line = "- Plain old entry with <b>html</b> and <!-- a normal comment -->"
    parsed = parse_line(line)
    assert parsed.text == line
    assert parsed.trailers.empty
    assert parsed.warnings == ()
