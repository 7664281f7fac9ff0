"""Dreaming keeps MEMORY.md current by the version links in the files (issue 38): an
entry whose source line a newer promotion's line links to as replaced is marked
superseded in place; without a link nothing is marked, however the words sound;
DREAMS.md says what and why; a superseded entry no longer fires triggers and is not
bootstrapped as current."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reverie.dreaming.budget import fit
from reverie.dreaming.consolidate import Promotion
from reverie.dreaming.memory_file import entries, render_entry
from reverie.dreaming.report import DreamReport, change_summary

OWNER = "# Memory\n\n- I keep my passport in the blue drawer.\n"
OLD = "Priya: The team standup is at 9:30 every morning in the small room."
NEW = "Priya: The team standup moved to 10:15 every morning because of the new hires."


def promo(
    text: str, day: str, line: int = 4, origin: str = "owner", tags=("standup",)
) -> Promotion:
    anchor = f"memory/{day}.md#L{line}-L{line}"
    return Promotion(
        key=f"{day}:{line}",
        anchor=anchor,
        text=text,
        rendered=render_entry(text, anchor, 8, tags),
        score=0.8,
        importance=8,
        tags=tags,
        origin=origin,
        session_kind="interactive",
        observed=None,
    )


def _generated(text: str) -> list[str]:
    return [e.text for e in entries(text) if e.generated]


OLD_AT, NEW_AT = "memory/2026-03-02.md#L4-L4", "memory/2026-09-10.md#L7-L7"
LINKED = {NEW_AT: frozenset({OLD_AT})}  # the new line replaces the old (reverie link)


def test_a_linked_newer_entry_marks_the_old_entry_superseded_in_place() -> None:
    memory = fit(OWNER, [promo(OLD, "2026-03-02")], 10_000).text
    fitted = fit(memory, [promo(NEW, "2026-09-10", 7)], 10_000, replaces=LINKED)
    old, new = _generated(fitted.text)
    assert old.startswith("- " + OLD)  # kept, where it was, its text unchanged
    assert f"(superseded on 2026-09-10 by {NEW_AT})" in old
    assert NEW in new and "superseded" not in new
    raw_old = next(ln for ln in fitted.text.split("\n") if ln.startswith("- " + OLD))
    assert "<!-- trigger: standup -->" in raw_old  # its trailers kept, nothing deleted
    (why,) = fitted.superseded
    assert OLD_AT in why.why and "version link" in why.why
    assert fitted.text.startswith(OWNER.rstrip("\n"))  # the person's text, byte for byte


def test_without_a_link_nothing_is_marked_however_it_sounds() -> None:
    memory = fit(OWNER, [promo(OLD, "2026-03-02")], 10_000).text
    cases = {
        "a change word, no link": (promo(NEW, "2026-09-10", 7), {}),
        "a link to another entry": (
            promo(NEW, "2026-09-10", 7),
            {NEW_AT: frozenset({"memory/2026-03-01.md#L2-L2"})},
        ),
        "a link from another promotion": (
            promo(NEW, "2026-09-10", 8),
            LINKED,  # the line linked is L7, this one L8
        ),
        "older": (promo(NEW, "2026-01-10", 7), {"memory/2026-01-10.md#L7-L7": LINKED[NEW_AT]}),
    }
    for why, (p, links) in cases.items():
        fitted = fit(memory, [p], 10_000, replaces=links)
        assert not fitted.superseded, why
        assert "superseded" not in fitted.text, why


def test_the_persons_own_entry_is_never_marked() -> None:
    memory = "# Memory\n\n- " + OLD + f" Source: {OLD_AT}\n"
    fitted = fit(memory, [promo(NEW, "2026-09-10", 7)], 10_000, replaces=LINKED)
    assert not fitted.superseded and fitted.text.startswith(memory.rstrip("\n"))


def test_a_superseded_entry_is_the_first_to_leave_for_the_archive() -> None:
    first = fit(
        OWNER,
        [
            promo(OLD, "2026-03-02"),
            promo(
                "Priya: I keep bees on the roof garden of my building.", "2026-03-03", 5, tags=()
            ),
        ],
        10_000,
    ).text
    budget = len(first) + 40  # room for about nothing more
    fitted = fit(first, [replace(promo(NEW, "2026-09-10", 7), score=0.5)], budget,
                 replaces=LINKED)  # fmt: skip
    assert len(fitted.text) <= budget
    assert len(fitted.archived) == 1 and OLD in fitted.archived[0]
    assert "superseded on 2026-09-10" in fitted.archived[0]  # archived with its note
    assert "bees" in fitted.text and NEW in fitted.text


def test_dreams_md_says_what_was_superseded_and_why() -> None:
    memory = fit(OWNER, [promo(OLD, "2026-03-02")], 10_000).text
    fitted = fit(memory, [promo(NEW, "2026-09-10", 7)], 10_000, replaces=LINKED)
    report = DreamReport(at="2026-09-11T03:00:00Z", enabled=True, dry_run=False)
    report = replace(
        report,
        mode="append-only",
        counts={"added": 1, "merged": 0, "superseded": 1},
        superseded=[s.summary() for s in fitted.superseded],
    )
    summary = change_summary(report, memory, fitted.text)
    assert "superseded 1" in summary
    line = next(ln for ln in summary.split("\n") if ln.startswith("- superseded “"))
    assert "9:30" in line and "10:15" in line and "version link" in line


def _engine(tmp_path: Path, memory: str):  # type: ignore[no-untyped-def]
    from reverie import Reverie

    e = Reverie.open(tmp_path / "ws", tmp_path / "st", embedder="fake")
    e.init()
    (tmp_path / "ws" / "MEMORY.md").write_text(memory, encoding="utf-8")
    e.index()
    return e


def test_a_superseded_curated_entry_stops_firing_triggers(tmp_path: Path) -> None:
    memory = fit(OWNER, [promo(OLD, "2026-03-02")], 10_000).text
    ask = "what time is the standup tomorrow?"
    before = _engine(tmp_path / "a", memory).context(ask)
    assert [h.entry.text for h in before.trigger_hits if OLD in h.entry.text]
    marked = fit(memory, [promo(NEW, "2026-09-10", 7, tags=("new hires",))], 10_000,
                 replaces=LINKED).text  # fmt: skip
    after = _engine(tmp_path / "b", marked).context(ask)
    assert not [h for h in after.trigger_hits if OLD in h.entry.text]
    # still found by search (nothing lost), and the newer one is current
    e = _engine(tmp_path / "c", marked)
    assert any(OLD in h.snippet for h in e.search("standup 9:30 small room").hits)


def test_a_superseded_entry_is_not_bootstrapped_as_current(tmp_path: Path) -> None:
    from reverie.recall.bootstrap import Bootstrapper

    memory = fit(OWNER, [promo(OLD, "2026-03-02")], 10_000).text
    marked = fit(memory, [promo(NEW, "2026-09-10", 7)], 10_000, replaces=LINKED).text
    (tmp_path / "MEMORY.md").write_text(marked, encoding="utf-8")
    boot = Bootstrapper(tmp_path).load(file_chars=20_000, total_chars=60_000, user_chars=4000)
    assert NEW in boot.text and "passport" in boot.text
    assert "9:30" not in boot.text
    assert "1 superseded entry of MEMORY.md not shown" in boot.text
