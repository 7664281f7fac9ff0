"""Tombstones match what a forget removed, however the line is dressed (marker, list
marker, stamp, case, spacing, a dreaming anchor), and nothing that merely shares words."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.markers import render_marker
from reverie.provenance.origin import Origin, SessionKind
from reverie.storage.tombstones import Tombstones

WORDS = st.lists(
    st.text(alphabet=st.characters(categories=("Ll", "Lu", "Nd")), min_size=1, max_size=8),
    min_size=3,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(words=WORDS, other=WORDS)
def test_a_forgotten_line_is_blocked_in_every_dress_and_nothing_else(
    tmp_path_factory: object, words: list[str], other: list[str]
) -> None:
    folder = Path(str(tmp_path_factory.mktemp("stones")))  # type: ignore[attr-defined]
    text = " ".join(words)
    stones = Tombstones(folder / "tombstones.json")
    stones.save(stones.plan([f"- 09:14 {text}."], None, at="t", reason="test"))
    again = Tombstones(folder / "tombstones.json")  # read back from the file
    dressed = [
        text,
        f"- {text.upper()}" if text.upper().casefold() == text.casefold() else text,
        render_marker(f"- 10:02 {text}", Origin.OWNER, SessionKind.INTERACTIVE, key=b"k" * 32),
        f"- {'  '.join(words)} Source: memory/2026-01-02.md#L3-L3 <!-- importance: 7 -->",
    ]
    for line in dressed:
        assert again.blocks(line), line
    if [w.casefold() for w in other] != [w.casefold() for w in words]:
        assert not again.blocks(" ".join(other))  # a line stone is the whole line's words
    assert text not in (folder / "tombstones.json").read_text()  # hashes, never the text


def test_a_phrase_stone_blocks_any_line_containing_it(tmp_path: Path) -> None:
    stones = Tombstones(tmp_path / "t.json")
    stones.save(stones.plan([], "orca-db-2", at="t", reason="test"))
    assert stones.blocks("- The host ORCA-DB-2 is in Frankfurt.")
    assert not stones.blocks("- The host orca-db-3 is in Frankfurt.")
    assert not stones.blocks("- orca and db 2 are words apart")
