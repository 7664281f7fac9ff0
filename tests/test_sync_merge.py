"""The pure merges of reverie.sync, property-tested: a journal union loses and
duplicates nothing and is idempotent (a re-run after a kill converges); an entry merge
takes one side's change whole and never writes a git conflict marker."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.sync.entry_merge import conflicts, merge_entries, pick
from reverie.sync.journal_merge import merge_journal, split
from reverie.sync.seal import UNTRUSTED, lower

HEAD = "# 2026-05-01\n\n"
_words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool)


def _line(i: int, side: str, minute: int, words: str) -> str:
    return f"- <!-- origin: agent; session: interactive --> {9 + minute // 60:02d}:{minute % 60:02d} {side}{i} {words}"


lines = st.lists(st.tuples(st.integers(0, 300), _words), max_size=8)


@settings(max_examples=60, deadline=None)
@given(base=lines, ours=lines, theirs=lines)
def test_a_journal_union_keeps_every_line_once_in_time_order(base, ours, theirs) -> None:  # type: ignore[no-untyped-def]
    b = [_line(i, "b", m, w) for i, (m, w) in enumerate(sorted(base))]
    # appended after the base (a journal only grows), each side in its own order
    o = [_line(i, "o", 301 + m, w) for i, (m, w) in enumerate(sorted(ours))]
    t = [_line(i, "t", 301 + m, w) for i, (m, w) in enumerate(sorted(theirs))]
    text_b = HEAD + "".join(x + "\n" for x in b)
    text_o = HEAD + "".join(x + "\n" for x in b + o)
    text_t = HEAD + "".join(x + "\n" for x in b + t)
    merged = merge_journal(text_b, text_o, text_t)
    items = [ln for ln in split(merged) if ln.startswith("- ")]
    assert sorted(items) == sorted(b + o + t)  # 0 lost, 0 duplicated
    stamps = [ln.split("--> ")[1][:5] for ln in items]
    assert stamps == sorted(stamps)  # time order
    assert merged.startswith(HEAD)
    # a re-run (this side already holds the other's lines) changes nothing
    assert merge_journal(text_b, merged, text_t) == merged
    assert merge_journal(text_b, text_o, merged) == merged


entries = st.lists(_words.map(lambda w: f"- {w}"), min_size=1, max_size=6, unique=True)


@settings(max_examples=60, deadline=None)
@given(base=entries, edit=_words)
def test_an_entry_changed_on_one_side_is_taken_and_both_changed_is_a_conflict(base, edit) -> None:  # type: ignore[no-untyped-def]
    doc = "# Long-term memory\n\n" + "".join(e + "\n" for e in base)
    mine = doc.replace(base[0] + "\n", f"- {edit} (mine)\n", 1)
    theirs = doc.replace(base[0] + "\n", f"- {edit} (theirs)\n", 1)
    assert merge_entries(doc, mine, doc).text == mine
    assert merge_entries(doc, doc, theirs).text == theirs
    both = merge_entries(doc, mine, theirs)
    assert "<<<<<<<" not in both.text and ">>>>>>>" not in both.text
    [c] = conflicts(both.text)
    assert c.id == both.conflicts[0]
    assert pick(both.text, c.id, 1) == mine and pick(both.text, c.id, 2) == theirs
    # a re-run on a side that already holds the conflict makes no second one
    assert merge_entries(doc, both.text, theirs).text == both.text


@given(st.text(max_size=40))
def test_lowering_is_idempotent_and_always_untrusted(text) -> None:  # type: ignore[no-untyped-def]
    line = f"- {text}".replace("\n", " ")
    once = lower(line)
    assert lower(once) == once
    if line.strip() and not line.startswith("#"):
        assert UNTRUSTED in once
