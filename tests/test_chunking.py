"""Chunking (SPEC 2.3 step 4): coverage, exact line numbers, overlap, entries, origins."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.origin import Origin, SessionKind
from reverie.provenance.paths import classify
from reverie.storage.chunking import Chunk, Line, chunk_budget
from reverie.storage.document import chunk_document
from reverie.storage.trailers import Trailers, render
from reverie.tokens import count_tokens

WORDS = ["memory", "gateway", "loopback", "python", "sqlite", "build", "deploy", "the", "a"]
HAN = "我喜欢喝咖啡数据库记忆人工智能网关部署"

english = st.lists(st.sampled_from(WORDS), min_size=1, max_size=25).map(" ".join)
chinese = st.text(alphabet=HAN, min_size=1, max_size=50)
mixed = st.tuples(english, chinese).map(lambda t: f"{t[0]} {t[1]}")
long_line = st.tuples(st.sampled_from([*WORDS, HAN]), st.integers(30, 120)).map(
    lambda t: " ".join([t[0]] * t[1])
)
blank = st.sampled_from(["", "   "])
line_text = st.one_of(english, chinese, mixed, blank, long_line, english.map(lambda s: "- " + s))
origin_st = st.sampled_from([Origin.OWNER, Origin.AGENT, Origin.UNTRUSTED])
session_st = st.sampled_from([None, None, SessionKind.INTERACTIVE, SessionKind.CRON])


@st.composite
def token_lines(draw: st.DrawFn) -> list[Line]:
    """Lines as a journal gives them: runs of lines of one origin and session."""
    lines: list[Line] = []
    for _ in range(draw(st.integers(1, 4))):
        origin, session = draw(origin_st), draw(session_st)
        for text in draw(st.lists(line_text, min_size=1, max_size=10)):
            lines.append(Line(len(lines) + 1, text, origin, session))
    return lines


budgets = st.integers(16, 120).flatmap(lambda b: st.tuples(st.just(b), st.integers(0, b - 1)))


def is_blank(text: str) -> bool:
    return not text.strip()


def covered(chunks: Sequence[Chunk]) -> set[int]:
    return {n for c in chunks for n in range(c.start_line, c.end_line + 1)}


def pieces_of(chunks: Sequence[Chunk]) -> set[tuple[int, int]]:
    """Ranges that were cut into several pieces (one long line or entry)."""
    return {(c.start_line, c.end_line) for c in chunks if c.part > 0}


# -- token-budget mode ------------------------------------------------------------------


@given(lines=token_lines(), bo=budgets)
@settings(max_examples=50, deadline=None)
def test_every_non_blank_line_is_in_some_chunk(lines: list[Line], bo: tuple[int, int]) -> None:
    chunks = chunk_budget(lines, *bo)
    assert {ln.number for ln in lines if not is_blank(ln.text)} <= covered(chunks)


@given(lines=token_lines(), bo=budgets)
@settings(max_examples=50, deadline=None)
def test_chunk_text_is_exactly_the_lines_of_its_range(
    lines: list[Line], bo: tuple[int, int]
) -> None:
    chunks = chunk_budget(lines, *bo)
    cut = pieces_of(chunks)
    for c in chunks:
        if (c.start_line, c.end_line) in cut:
            continue
        source = "\n".join(ln.text for ln in lines[c.start_line - 1 : c.end_line])
        assert c.text == source.strip("\n")
        assert not is_blank(lines[c.start_line - 1].text)
        assert not is_blank(lines[c.end_line - 1].text)


@given(lines=token_lines(), bo=budgets)
@settings(max_examples=50, deadline=None)
def test_a_cut_line_loses_no_text_and_every_piece_fits(
    lines: list[Line], bo: tuple[int, int]
) -> None:
    budget = bo[0]
    chunks = chunk_budget(lines, *bo)
    for start, end in pieces_of(chunks):
        assert start == end  # only a single over-long line is ever cut in token mode
        parts = sorted(
            (c for c in chunks if (c.start_line, c.end_line) == (start, end)), key=lambda c: c.part
        )
        assert [c.part for c in parts] == list(range(len(parts)))
        assert all(count_tokens(c.text) <= budget for c in parts)
        joined = "".join(c.text for c in parts)
        assert re.sub(r"\s+", "", joined) == re.sub(r"\s+", "", lines[start - 1].text)


@given(lines=token_lines(), bo=budgets)
@settings(max_examples=50, deadline=None)
def test_overlap_never_exceeds_the_setting(lines: list[Line], bo: tuple[int, int]) -> None:
    overlap = bo[1]
    chunks = chunk_budget(lines, *bo)
    for prev, nxt in itertools.pairwise(chunks):
        shared = range(max(prev.start_line, nxt.start_line), min(prev.end_line, nxt.end_line) + 1)
        if (prev.start_line, prev.end_line) == (nxt.start_line, nxt.end_line):
            continue  # pieces of one cut line
        tokens = sum(count_tokens(lines[n - 1].text) for n in shared)
        assert tokens <= overlap


@given(lines=token_lines(), bo=budgets)
@settings(max_examples=50, deadline=None)
def test_an_origin_change_always_starts_a_new_chunk(lines: list[Line], bo: tuple[int, int]) -> None:
    for c in chunk_budget(lines, *bo):
        kinds = {
            (ln.origin, ln.session)
            for ln in lines[c.start_line - 1 : c.end_line]
            if not is_blank(ln.text)
        }
        assert len(kinds) == 1
        assert c.origin == next(iter(kinds))[0]


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    lines = [Line(i, f"sentence number {i} " + "word " * 10, Origin.AGENT) for i in range(1, 41)]
    chunks = chunk_budget(lines, 60, 20)
    assert len(chunks) > 3
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.start_line <= prev.end_line  # a sentence cut at a boundary is still findable
        assert nxt.end_line > prev.end_line


def test_no_chunk_is_a_duplicate_inside_its_predecessor() -> None:
    lines = [
        Line(1, "a" * 40, Origin.AGENT),
        Line(2, "b" * 40, Origin.AGENT),
        Line(3, "c" * 4000, Origin.AGENT),
        Line(4, "d" * 40, Origin.AGENT),
    ]
    chunks = chunk_budget(lines, 400, 80)
    for prev, nxt in itertools.pairwise(chunks):
        if (prev.start_line, prev.end_line) == (nxt.start_line, nxt.end_line):
            continue
        assert not (prev.start_line <= nxt.start_line and nxt.end_line <= prev.end_line)


@pytest.mark.parametrize(
    "texts",
    [
        ["y " * 100, "", "x " * 100],  # IndexError
        ["y " * 100, "", "short line"],  # chunk (2, 3)
        ["a" * 64, "   ", "x " * 100],  # IndexError
        ["a" * 64, "   ", "short line"],  # chunk (2, 3)
    ],
)
def test_a_chunk_never_starts_on_a_blank_line(texts: list[str]) -> None:
    lines = [Line(i, t, Origin.AGENT) for i, t in enumerate(texts, 1)]
    chunks = chunk_budget(lines, 16, 0)
    assert covered(chunks) == {1, 3}


# -- CJK ----------------------------------------------------------------------------------


@given(text=st.text(alphabet=HAN + "，：（）", min_size=0, max_size=200))
def test_cjk_counts_one_token_per_character(text: str) -> None:
    assert count_tokens(text) == len(text)


def test_mixed_text_counts_cjk_chars_plus_a_quarter_of_the_rest() -> None:
    assert count_tokens("我喜欢喝咖啡") == 6
    assert count_tokens("abcdefgh") == 2
    assert count_tokens("abcd我") == 2


def test_a_long_chinese_line_is_cut_by_characters() -> None:
    line = "记忆" * 150  # 300 tokens, no spaces
    chunks = chunk_budget([Line(1, line, Origin.AGENT)], 64, 8)
    assert len(chunks) == 5
    assert all(count_tokens(c.text) <= 64 for c in chunks)
    assert "".join(c.text for c in chunks) == line
    assert {(c.start_line, c.end_line) for c in chunks} == {(1, 1)}


# -- through chunk_document (real files) --------------------------------------------------


@given(
    lines=st.lists(st.one_of(english, chinese, mixed, blank), min_size=1, max_size=60), bo=budgets
)
@settings(max_examples=50, deadline=None)
def test_journal_chunks_point_at_exact_source_lines(lines: list[str], bo: tuple[int, int]) -> None:
    lines = [ln.text for ln in [Line(i, t) for i, t in enumerate(lines, 1)]]
    text = "\n".join(lines) + "\n"
    rel = "memory/2026-05-01.md"
    chunks, _ = chunk_document(rel, text, classify(rel), key=None, budget=bo[0], overlap=bo[1])
    source = text.split("\n")
    cut = pieces_of(chunks)
    for c in chunks:
        if (c.start_line, c.end_line) not in cut:
            assert c.text == "\n".join(
                s.rstrip() for s in source[c.start_line - 1 : c.end_line]
            ).strip("\n")


@pytest.mark.parametrize("sep", ["\x0c", "\u2028", "\x1c", "\x85"])
def test_line_numbers_count_newlines_only(sep: str) -> None:
    text = f"- one{sep}still one\n- two\n- three <!-- importance: 5 -->\n"
    chunks, _ = chunk_document(
        "MEMORY.md", text, classify("MEMORY.md"), key=None, budget=400, overlap=80
    )
    three = next(c for c in chunks if "three" in c.text)
    assert (three.start_line, three.end_line) == (3, 3)


# -- curated mode (by entry) --------------------------------------------------------------


@dataclass
class Entry:
    lines: list[str]  # raw lines, trailers included
    trailers: Trailers  # merged trailers of the entry


trailers_st = st.builds(
    Trailers,
    triggers=st.lists(
        st.sampled_from(["gateway setup", "network", "咖啡"]), max_size=2, unique=True
    ).map(tuple),
    importance=st.none() | st.integers(1, 10),
    projects=st.lists(st.sampled_from(["github.com/a/b", "gitlab.com/c/d"]), max_size=1).map(tuple),
)


@st.composite
def curated_entry(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(["item", "item", "heading", "para"]))
    first = draw(st.one_of(english, chinese, mixed, long_line))
    tr = draw(trailers_st)
    head = {"item": "- ", "heading": "## ", "para": ""}[kind] + first
    lines = [render(head, tr)]
    merged = tr
    if kind != "heading":
        for cont in draw(st.lists(st.one_of(english, chinese), max_size=2)):
            tr2 = draw(trailers_st)
            lines.append(render("  " + cont, tr2))
            merged = merged.merge(tr2)
    return Entry(lines, merged)


@st.composite
def curated_doc(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], list[Entry]]:
    entries = draw(st.lists(curated_entry(), min_size=1, max_size=12))
    out: list[str] = []
    ranges: list[tuple[int, int]] = []
    for e in entries:
        paragraph = not e.lines[0].startswith(("- ", "## "))
        if out and (paragraph or draw(st.booleans())):
            out.append("")  # a paragraph must follow a blank line to be its own entry
        start = len(out) + 1
        out.extend(e.lines)
        ranges.append((start, len(out)))
    return "\n".join(out) + "\n", ranges, entries


def _curated(text: str, budget: int) -> list[Chunk]:
    chunks, warnings = chunk_document(
        "MEMORY.md", text, classify("MEMORY.md"), key=None, budget=budget, overlap=0
    )
    assert warnings == []
    return chunks


@given(doc=curated_doc(), budget=st.integers(16, 200))
@settings(max_examples=50, deadline=None)
def test_a_curated_entry_never_spans_two_chunks(
    doc: tuple[str, list[tuple[int, int]], list[Entry]], budget: int
) -> None:
    text, ranges, _ = doc
    chunks = _curated(text, budget)
    assert {(c.start_line, c.end_line) for c in chunks} == set(ranges)


@given(doc=curated_doc(), budget=st.integers(16, 200))
@settings(max_examples=50, deadline=None)
def test_every_piece_of_an_entry_keeps_its_trailers(
    doc: tuple[str, list[tuple[int, int]], list[Entry]], budget: int
) -> None:
    text, ranges, entries = doc
    chunks = _curated(text, budget)
    for rng, entry in zip(ranges, entries, strict=True):
        mine = [c for c in chunks if (c.start_line, c.end_line) == rng]
        assert mine
        for c in mine:
            assert set(c.trailers.triggers) == set(entry.trailers.triggers)
            assert c.trailers.importance == entry.trailers.importance
            assert set(c.trailers.projects) == set(entry.trailers.projects)
            assert "<!--" not in c.text  # trailer text enters neither FTS nor the embedder
            assert c.origin is Origin.OWNER


@given(doc=curated_doc(), budget=st.integers(16, 200))
@settings(max_examples=50, deadline=None)
def test_unsplit_entries_are_their_lines_without_trailers(
    doc: tuple[str, list[tuple[int, int]], list[Entry]], budget: int
) -> None:
    text, _, _ = doc
    source = text.split("\n")
    chunks = _curated(text, budget)
    cut = pieces_of(chunks)
    for c in chunks:
        if (c.start_line, c.end_line) not in cut:
            expected = "\n".join(
                re.sub(r"\s*<!--.*?-->", "", s).rstrip()
                for s in source[c.start_line - 1 : c.end_line]
            )
            assert c.text == expected.strip("\n")


def test_an_oversized_entry_is_cut_into_pieces_that_all_keep_the_trailers() -> None:
    body = " ".join(["the gateway listens on loopback only"] * 60)
    text = (
        "# Memory\n\n"
        f"- {body} <!-- trigger: gateway setup; network safety --> <!-- importance: 9 -->\n"
        "  <!-- project: git@github.com:acme/infra.git -->continued line\n"
        "- small entry <!-- importance: 2 -->\n"
    )
    chunks = _curated(text, 64)
    big = [c for c in chunks if c.start_line == 3]
    assert len(big) > 3
    assert {(c.start_line, c.end_line) for c in big} == {(3, 4)}
    for c in big:
        assert c.trailers.triggers == ("gateway setup", "network safety")
        assert c.trailers.importance == 9
        assert c.trailers.projects == ("github.com/acme/infra",)
        assert count_tokens(c.text) <= 64
    small = [c for c in chunks if c.start_line == 5]
    assert len(small) == 1 and small[0].trailers.importance == 2


def test_a_fenced_block_with_blank_lines_stays_one_entry() -> None:
    text = "- run this:\n```\nmake\n\nmake test\n```\n- next\n"
    chunks = _curated(text, 400)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 6), (7, 7)]
