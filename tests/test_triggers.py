"""Trigger injection calibration (R-TRIG-1..6), pure.

What a user notices: a one-concept trigger ("deploy") fires on a message that says
"deploy" even with zero retrieval relevance (0.85 x 0.8 = 0.68 >= 0.65); an unrelated
message fires nothing; only trusted curated entries can ever fire, and a project entry
only inside its project; at most 3 hits in one block of at most 1,800 characters.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.origin import Origin
from reverie.recall.triggers import (
    Message,
    TriggerEntry,
    TriggerHit,
    eligible,
    phrase_score,
    render_block,
    select,
)
from reverie.storage.trailers import INVALID_PROJECT

WEB, API = "github.com/acme/web", "github.com/acme/api"


def entry(cid: int, *phrases: str, text: str = "", **kw: object) -> TriggerEntry:
    base: dict[str, object] = dict(
        chunk_id=cid,
        path="MEMORY.md",
        start_line=cid,
        end_line=cid,
        text=text or f"- entry {cid}",
        phrases=phrases,
        origin=Origin.OWNER,
        kind="curated",
    )
    base.update(kw)
    return TriggerEntry(**base)  # type: ignore[arg-type]


def fired(
    entries: list[TriggerEntry], message: str, relevance: float = 0.0, **kw: object
) -> list[int]:
    hits = select([(e, relevance) for e in entries], message, **kw)  # type: ignore[arg-type]
    return [h.entry.chunk_id for h in hits]


# -- per-phrase score (R-TRIG-3) -----------------------------------------------------------


def test_single_word_trigger_fires_with_zero_relevance() -> None:
    (hit,) = select([(entry(1, "deploy"), 0.0)], "Can you deploy the web app now?")
    assert hit.trigger_score == pytest.approx(0.85)
    assert hit.combined == pytest.approx(0.68)  # 0.85 x 0.8, above the 0.65 threshold
    # the calibration note: a 0.72 threshold would silently disable one-word triggers
    assert select([(entry(1, "deploy"), 0.0)], "deploy now", threshold=0.72) == []


def test_unrelated_message_fires_nothing() -> None:
    entries = [entry(1, "deploy"), entry(2, "gateway setup", "network safety"), entry(3, "数据库")]
    assert fired(entries, "What a lovely morning for a walk in the park.", relevance=1.0) == []
    assert fired(entries, "", relevance=1.0) == []


def test_substring_of_a_word_is_not_a_hit() -> None:
    assert phrase_score("deploy", Message.of("the deployment finished")) == 0.0
    assert phrase_score("gate", Message.of("the gateway is up")) == 0.0


def test_whole_multi_word_phrase_scores_one() -> None:
    assert phrase_score("gateway setup", Message.of("Help with the gateway setup please")) == 1.0
    assert phrase_score("gateway setup", Message.of("GATEWAY-SETUP broke")) == 1.0
    (hit,) = select([(entry(1, "gateway setup"), 0.0)], "the gateway setup again")
    assert hit.combined == pytest.approx(0.8)


def test_partial_coverage_is_scaled() -> None:
    msg = Message.of("is the gateway up?")
    assert phrase_score("gateway setup", msg) == pytest.approx(0.85 / 2)
    # both words present but not contiguous: full coverage, still below a whole phrase
    assert phrase_score("gateway setup", Message.of("setup of the gateway")) == pytest.approx(0.85)
    # half a two-word phrase can never fire, whatever the relevance (0.34 + 0.2 < 0.65)
    assert fired([entry(1, "gateway setup")], "is the gateway up?", relevance=1.0) == []
    # two words of three: fires only with strong retrieval relevance
    three = [entry(1, "blue green deploy")]
    assert fired(three, "green deploy today", relevance=0.0) == []
    assert fired(three, "green deploy today", relevance=1.0) == [1]


def test_cjk_trigger() -> None:
    assert phrase_score("数据库", Message.of("数据库怎么备份？")) == pytest.approx(0.85)
    assert fired([entry(1, "数据库")], "请问数据库怎么备份") == [1]
    assert fired([entry(1, "数据库")], "今天天气很好") == []


def test_relevance_is_clamped() -> None:
    (hit,) = select([(entry(1, "gateway setup"), 7.5)], "is the gateway up?", threshold=0.0)
    assert hit.combined == pytest.approx(0.8 * 0.425 + 0.2 * 1.0)
    (hit,) = select([(entry(1, "deploy"), -3.0)], "deploy", threshold=0.0)
    assert hit.combined == pytest.approx(0.68)


def test_best_phrase_of_an_entry_counts() -> None:
    (hit,) = select([(entry(1, "network safety", "gateway setup"), 0.0)], "gateway setup now")
    assert hit.phrase == "gateway setup" and hit.trigger_score == 1.0


# -- eligibility (R-TRIG-2, R-TIER-1) --------------------------------------------------------


def test_project_entry_only_when_all_keys_active() -> None:
    both = entry(1, "deploy", projects=(WEB, API))
    one = entry(2, "deploy", projects=(WEB,))
    assert fired([both, one], "deploy") == []
    assert fired([both, one], "deploy", active_projects=frozenset({WEB})) == [2]
    assert sorted(fired([both, one], "deploy", active_projects=frozenset({WEB, API}))) == [1, 2]


def test_invalid_project_sentinel_never_fires() -> None:
    broken = entry(1, "deploy", projects=(INVALID_PROJECT,))
    mixed = entry(2, "deploy", projects=(WEB, INVALID_PROJECT))
    for active in (frozenset(), frozenset({INVALID_PROJECT}), frozenset({WEB, INVALID_PROJECT})):
        assert fired([broken, mixed], "deploy", relevance=1.0, active_projects=active) == []


@pytest.mark.parametrize("kind", ["journal", "transcript", "import", "note", "instructions"])
def test_non_curated_never_eligible(kind: str) -> None:
    e = entry(1, "deploy", kind=kind, path="memory/2026-04-30.md")
    assert not eligible(e, frozenset())
    assert fired([e], "deploy", relevance=1.0) == []


@pytest.mark.parametrize("origin", [Origin.UNTRUSTED, Origin.SYSTEM])
def test_untrusted_or_system_curated_never_eligible(origin: Origin) -> None:
    e = entry(1, "deploy", origin=origin)
    assert not eligible(e, frozenset())
    assert fired([e], "deploy", relevance=1.0) == []


@pytest.mark.parametrize("origin", [Origin.OWNER, Origin.AGENT])
def test_trusted_curated_eligible(origin: Origin) -> None:
    assert fired([entry(1, "deploy", origin=origin)], "deploy") == [1]


def test_entry_without_phrases_never_fires() -> None:
    assert fired([entry(1)], "entry 1", relevance=1.0) == []


# -- selection and the block (R-TRIG-5..6) ---------------------------------------------------


def test_top_three_by_combined_score() -> None:
    entries = [entry(i, "deploy") for i in range(1, 5)] + [entry(9, "deploy now")]
    hits = select([(e, 0.1 * e.chunk_id) for e in entries], "deploy now please")
    assert [h.entry.chunk_id for h in hits] == [9, 4, 3]
    assert [h.combined for h in hits] == sorted((h.combined for h in hits), reverse=True)


def test_empty_block_when_no_hits() -> None:
    assert render_block([]) == ""


def _hit(i: int, text: str) -> TriggerHit:
    return TriggerHit(entry(i, "x", text=text), "x", 1.0, 1.0, 1.0)


def test_block_holds_text_and_source() -> None:
    block = render_block([_hit(3, "- Keep the gateway on loopback.")])
    assert "Keep the gateway on loopback." in block and "MEMORY.md#L3-L3" in block
    assert block.startswith('<memory-triggers hidden="true">') and block.endswith(
        "</memory-triggers>"
    )


@given(
    texts=st.lists(st.text(min_size=0, max_size=3000), min_size=1, max_size=3),
    limit=st.integers(200, 4000),
)
@settings(max_examples=60, deadline=None)
def test_block_never_exceeds_its_budget(texts: list[str], limit: int) -> None:
    block = render_block([_hit(i + 1, t) for i, t in enumerate(texts)], max_chars=limit)
    assert len(block) <= limit
    assert len(render_block([_hit(i + 1, t) for i, t in enumerate(texts)])) <= 1800


# -- properties of select ------------------------------------------------------------------

WORDS = ["deploy", "gateway", "setup", "network", "safety", "数据库", "release", "backup"]
phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
entries_st = st.lists(
    st.builds(
        entry,
        cid=st.integers(1, 10_000),
        phrases=st.lists(phrases, max_size=3).map(tuple),
        origin=st.sampled_from(list(Origin)),
        kind=st.sampled_from(["curated", "curated", "journal", "transcript", "import"]),
        projects=st.lists(
            st.sampled_from([WEB, API, INVALID_PROJECT]), max_size=2, unique=True
        ).map(tuple),
    ),
    max_size=10,
)


@given(
    entries=entries_st,
    rel=st.floats(-1, 2, allow_nan=False),
    message=st.lists(st.sampled_from([*WORDS, "hello", "the", "now"]), max_size=8).map(" ".join),
    active=st.sets(st.sampled_from([WEB, API, INVALID_PROJECT])).map(frozenset),
)
@settings(max_examples=80, deadline=None)
def test_select_properties(
    entries: list[TriggerEntry], rel: float, message: str, active: frozenset[str]
) -> None:
    hits = select([(e, rel) for e in entries], message, active_projects=active)
    assert len(hits) <= 3
    assert [h.combined for h in hits] == sorted((h.combined for h in hits), reverse=True)
    for h in hits:
        e = h.entry
        assert e.kind == "curated" and e.origin in (Origin.OWNER, Origin.AGENT)
        assert INVALID_PROJECT not in e.projects and set(e.projects) <= active
        assert h.combined >= 0.65
        assert h.combined == pytest.approx(0.8 * h.trigger_score + 0.2 * max(0.0, min(1.0, rel)))
        assert 0.0 < h.trigger_score <= 1.0


def test_lexical_noise_never_crowds_out_a_firing_trigger(tmp_path: Path) -> None:
    """30 curated entries share the message's common words (lexical hits that cannot
    fire); the one entry whose trigger the message holds must still fire."""
    from reverie import Reverie

    lines = [
        f"- Note {i}: the staging cluster restarts nightly. <!-- trigger: zz{i}zz -->"
        for i in range(30)
    ]
    lines.append("- Rotate the keys every quarter. <!-- trigger: vault rotation -->")
    e = Reverie.open(tmp_path / "ws", tmp_path / "st", embedder="fake")
    e.init()
    (tmp_path / "ws" / "MEMORY.md").write_text(
        "# Memory\n\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    e.index()
    ctx = e.context("the staging cluster restarts nightly; when is the vault rotation due?")
    assert [h.entry.text for h in ctx.trigger_hits][:1] == ["- Rotate the keys every quarter."]
