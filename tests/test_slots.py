"""The slot a question asks of its owner (issue 21): which hits speak of it.

What a user notices: "Where does Aisha live?" finds "Aisha moved to Grenoble" first
even when that line shares only her name with the question and ranks below her other
facts; a line about another owner never joins; an untrusted line never goes first;
an owner with many alike lines (a topic the chat keeps coming back to) is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.origin import Origin
from reverie.recall.asof import time_ask
from reverie.recall.slot_likeness import SlotLikeness
from reverie.recall.slots import SLOT_MAX, Owner, SlotView, masked, owner_of, slot_members
from reverie.recall.supersede import subject_terms, supersede
from reverie.storage.embedders.fake import FakeEmbedder
from test_supersede import TODAY, hit

# owner_of ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "stems"),
    [
        ("Where does Aisha live?", {"aisha"}),
        ("What does the payments team use for CI?", {"payment", "team"}),  # not "CI"
        ("Which Slack channel does the mobile team use for incidents?", {"mobil", "team"}),
        ("Who is Yuki's manager?", {"yuki"}),
        ("When does the support team's backup job run?", {"support", "team"}),
        ("What motivates John's team to get better?", {"john"}),
        ("Which train does Kwame take to work?", {"kwame"}),
    ],
)
def test_the_owner_of_an_english_question(question: str, stems: set[str]) -> None:
    assert owner_of(question, subject_terms(question).owners).stems == stems


def test_the_owner_of_a_chinese_question() -> None:
    assert owner_of("周婷的牙医是谁？", frozenset()).zh == "周婷"
    # no 的: the first characters, when enough hits hold them
    lines = ["阿美住在海淀。", "阿美已经搬到朝阳了。", "张伟开一辆车。"]
    assert owner_of("阿美住在哪里？", frozenset(), lines).zh == "阿美"
    assert not owner_of("阿美住在哪里？", frozenset(), lines[:1])
    # a third character only when most lines holding the first two hold it too: 开 is
    # the question's verb, not part of 刘洋 (the sale of the car names 刘洋 alone)
    cars = ["刘洋开一辆红色卡罗拉。", "刘洋开着白色特斯拉来接我。", "刘洋把旧车卖了，换成了绿色比亚迪。",
            "刘洋想学骑摩托车。", "刘洋已经搬到朝阳了。"]  # fmt: skip
    assert owner_of("刘洋开什么车？", frozenset(), cars).zh == "刘洋"
    three = ["王小明住在海淀。", "王小明已经搬到朝阳了。", "王小红开一辆车。"]
    assert owner_of("王小明住在哪里？", frozenset(), three).zh == "王小明"
    assert not owner_of("What is the weather like?", frozenset())


names = st.sampled_from(["Aisha", "Priya", "Tomás", "Kwame"])
words = st.lists(st.sampled_from(["moved", "to", "Lyon", "the", "bakery", "lives", "in"]))


@settings(max_examples=200, deadline=None)
@given(names, words, words)
def test_a_masked_line_never_holds_the_owner(
    name: str, before: list[str], after: list[str]
) -> None:
    owner = owner_of(f"Where does {name} live?", frozenset())
    for form in (name, f"{name}'s", name.upper()):
        text = " ".join([*before, form, *after])
        assert name.lower() not in masked(text, owner).lower()
        assert owner.named_in(text)
    zh = Owner(zh="阿美")
    assert "阿美" not in masked("- 阿美已经搬到朝阳了，阿美很开心。", zh)


def test_slot_members_need_two_and_at_most_a_few() -> None:
    assert slot_members(SlotView({1: 0.9})) == []
    assert slot_members(SlotView({1: 0.9, 2: 0.1})) == []  # the other is not alike enough
    assert slot_members(SlotView({1: 0.9, 2: 0.1}, frozenset({2}))) == [1, 2]  # shares a word
    alike = {i: 0.8 for i in range(SLOT_MAX + 1)}
    assert slot_members(SlotView(alike)) == []  # the owner's topic, not one slot
    # another value most like the best line's joins it, and only one such line
    kin = SlotView({1: 0.9, 2: 0.1}, kin={2: (0.6, "num"), 3: (0.5, "num")}, seed=1)
    assert slot_members(kin) == [1, 2]
    faint = SlotView({1: 0.9, 2: 0.1}, kin={2: (0.1, "num")}, seed=1)
    assert slot_members(faint) == []  # not alike
    # a name's likeness is how it fills the slot's line, against no name there at all:
    # one that fills it worse than nothing is of another slot
    assert slot_members(SlotView({1: 0.9, 2: 0.1}, kin={2: (-0.05, "name")}, seed=1)) == []
    assert slot_members(SlotView({1: 0.9, 2: 0.1}, kin={2: (0.02, "name")}, seed=1)) == [1, 2]


# the group in supersede --------------------------------------------------------------


def _aisha(origin_new: Origin = Origin.OWNER) -> list:  # type: ignore[type-arg]
    """Aisha's lines, best first; the move is worded with nothing of the question but
    her name, and its vector is far from the old line's (no likeness to group by)."""
    return [
        hit(1, "Aisha lives in Lyon, in a flat above a bakery.", date(2026, 3, 1), 0.9,
            vec=[1.0, 0.0, 0.0]),
        hit(2, "Aisha wears size 31 shoes.", date(2026, 5, 1), 0.7, vec=[0.0, 1.0, 0.0]),
        hit(3, "Aisha has a membership at Iron Works.", date(2026, 6, 1), 0.65,
            vec=[0.0, 0.9, 0.4]),
        hit(4, "Aisha moved to Grenoble last weekend; the boxes are everywhere.",
            date(2026, 9, 1), 0.5, origin_new, vec=[0.1, 0.0, 1.0]),
    ]  # fmt: skip


# the slot likeness as the search computes it (without the owner): the move and the
# old line speak of where she lives, the shoes and the gym do not
SLOTS = SlotView({1: 0.30, 2: 0.05, 3: 0.02, 4: 0.20}, frozenset({1}))


def _run(items: list, question: str, slots=SLOTS):  # type: ignore[no-untyped-def, type-arg]
    vectors = {s.candidate.chunk_id: v for s, v in items}
    ranked = [s for s, _ in items]
    return supersede(ranked, question, time_ask(question, TODAY), vectors=vectors, slots=slots)


def test_a_move_worded_apart_from_the_question_comes_first() -> None:
    out, marks = _run(_aisha(), "Where does Aisha live?")
    assert [s.candidate.chunk_id for s in out] == [4, 1, 2, 3]
    assert marks[1].superseded_by == "memory/2026-09-01.md#L7"  # a change word: "moved"
    assert "speaks of the question's slot" in marks[4].why
    assert 2 not in marks and 3 not in marks
    # without the slot likeness the old line would stay first
    out, _ = _run(_aisha(), "Where does Aisha live?", slots=None)
    assert out[0].candidate.chunk_id == 1


def test_a_question_about_the_past_wants_the_older_slot_value() -> None:
    out, _ = _run(_aisha(), "Where did Aisha live before?")
    assert out[0].candidate.chunk_id == 1


def test_an_untrusted_move_never_goes_first_or_supersedes() -> None:
    out, marks = _run(_aisha(Origin.UNTRUSTED), "Where does Aisha live?")
    assert out[0].candidate.chunk_id == 1
    assert marks[1].superseded_by is None


def test_too_many_alike_lines_are_the_owners_topic_and_stay_put() -> None:
    like = {i: 0.5 for i in range(1, 5)}
    out, marks = _run(_aisha(), "Where does Aisha live?", slots=SlotView(like))
    if SLOT_MAX < 4:
        assert [s.candidate.chunk_id for s in out] == [1, 2, 3, 4] and not marks


# the likeness the search computes ----------------------------------------------------


def test_only_lines_naming_the_owner_get_a_likeness_and_a_failure_gives_none() -> None:
    items = [
        hit(1, "Aisha lives in Lyon above a bakery.", date(2026, 3, 1), 0.9)[0],
        hit(2, "Ravi lives in Leeds above a bakery.", date(2026, 4, 1), 0.8)[0],
        hit(3, "Aisha moved to Grenoble last weekend.", date(2026, 9, 1), 0.5)[0],
    ]
    likeness = SlotLikeness(FakeEmbedder(dims=64), content_words=True)
    view = likeness("Where does Aisha live?", items)
    like = view.likeness
    assert set(like) == {1, 3}  # Ravi's line is another owner's
    assert view.topical == {1}  # "lives": a word of the question besides the owner
    # the owner is gone from both: a line sharing only her name is not alike at all
    # (with the name, the hashing embedder would give it a positive cosine)
    assert like[3] == pytest.approx(0.0, abs=1e-9)
    fake = FakeEmbedder(dims=64)
    whole = fake.embed_documents([items[2].candidate.text])[0] @ fake.embed_query("Aisha live")
    assert whole > 0.1

    down = SlotLikeness(FakeEmbedder(dims=64, down=True), content_words=True)
    assert down("Where does Aisha live?", items) == SlotView()
    assert np.isfinite(list(like.values())).all()


def test_a_passing_mention_past_the_pool_joins_by_its_value_and_nothing_else_shows() -> None:
    """ "Texted Dmitri on 555-0198 about the tickets" shares nothing with "What is
    Dmitri's phone number?" but the name, and ranks past the pool: the owner's lines
    found by his name join the slot's group when they state another value most like
    the slot's ("555-0141"); the others found that way are never shown."""
    items = [
        hit(1, "Dmitri's phone number is 555-0141.", date(2026, 3, 1), 0.9, vec=[1.0, 0, 0]),
        hit(2, "Dmitri never picks up the phone before noon.", date(2026, 4, 1), 0.6,
            vec=[0.0, 1.0, 0.0]),
        hit(3, "Lunch at the noodle bar.", date(2026, 5, 1), 0.5, vec=[0.0, 0.0, 1.0]),
    ]  # fmt: skip
    passing, _ = hit(7, "Texted Dmitri on 555-0198 about the concert tickets.",
                     date(2026, 9, 1), 0.1)  # fmt: skip
    stray, _ = hit(8, "Dmitri brought cake on Friday.", date(2026, 10, 1), 0.1)
    view = SlotView(
        {1: 0.6, 2: 0.3}, kin={7: (0.95, "num"), 8: (0.1, "name")}, extras=(passing, stray), seed=1
    )
    out, marks = _run(items, "What is Dmitri's phone number?", slots=view)
    ids = [s.candidate.chunk_id for s in out]
    assert ids[0] == 7 and 8 not in ids and len(ids) == 4
    assert marks[1].superseded_by == "memory/2026-09-01.md#L10"  # another number
    assert "another number than the slot's" in marks[7].why
    assert [s.final for s in out][:3] == [0.9, 0.6, 0.5]  # the places keep their scores


def test_an_owner_of_several_words_is_named_only_in_a_row() -> None:
    owner = owner_of("What prefix do the billing team's invoices use?", frozenset())
    assert owner.named_in("The billing team's invoices are numbered BX-.")
    assert not owner.named_in("The payments team's cloud bill is charged to the Amex card.")


_KINDS = {"leeds": "PLACE", "bristol": "PLACE", "chloe": "PERSON", "lives": "live"}


class _Kinds(FakeEmbedder):
    """The hashing embedder, with a word's kind standing in for the word: the places
    are one word to it, the people another (a model knows Bristol is a city), and a
    word's forms are one ("lives", "live")."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        def kind(text: str) -> str:
            return " ".join(_KINDS.get(w.lower().strip(".,"), w) for w in text.split())

        return super().embed_documents([kind(t) for t in texts])


def test_a_name_joins_the_slot_when_it_fills_the_slots_line_as_well_as_its_value() -> None:
    """ "Ravi's new address is in Bristol" and "After the reorg Ravi's manager is Chloe"
    both state a name the slot's line ("Ravi lives in Leeds above a bakery") does not;
    names of any kind look alike alone, so each is put in the slot's line in place of
    "Leeds": the city fills it, the manager does not, and only the city joins."""
    items = [
        hit(1, "Ravi lives in Leeds above a bakery.", date(2026, 3, 1), 0.9)[0],
        hit(2, "Ravi said the rent keeps going up everywhere.", date(2026, 10, 1), 0.8)[0],
    ]
    moved, _ = hit(7, "Ravi's new address is in Bristol, by the river.", date(2026, 6, 1), 0.1)
    boss, _ = hit(8, "After the reorg Ravi's manager is Chloe.", date(2026, 8, 1), 0.1)
    likeness = SlotLikeness(_Kinds(dims=256), content_words=True)
    view = likeness("Where does Ravi live?", items, lambda _words, _seen: [moved, boss])
    assert view.seed == 1 and set(view.kin) == {7, 8}
    assert view.kin[7][0] > 0 > view.kin[8][0]  # fills the slot better than no name at all
    assert 7 in slot_members(view) and 8 not in slot_members(view)


def test_too_many_alike_lines_leave_the_most_alike_and_those_naming_the_slots_word() -> None:
    """Chinese lines without their owner read alike more often than English ones: past
    SLOT_MAX alike lines, the slot is the most alike line and those sharing a word of
    the question besides the owner's (截止日期), when few enough. The most alike stays
    though it shares no word: "The mobile team pays salaries through HSBC" is the line
    of "Which bank does the mobile team use for payroll?" more than "hired two new
    people, so payroll is bigger"."""
    alike = {1: 0.9, **{i: 0.8 for i in range(2, SLOT_MAX + 3)}}
    assert slot_members(SlotView(alike)) == []  # the best alone is no group
    assert slot_members(SlotView(alike, frozenset({2, 3}))) == [1, 2, 3]


def test_another_value_counts_towards_too_many() -> None:
    """SLOT_MAX alike lines and another value most like the slot's ("开了一下午会，设计组
    确认七月十号交付" beside "设计组的项目截止日期是六月一号"): six are too many, so the
    alike lines are cut to the best and those naming the slot's word, and the value
    joins them; before, the six made no group and the newer date stayed out."""
    alike = {1: 0.57, 2: 0.45, 3: 0.30, 4: 0.26, 5: 0.24}
    assert len(alike) == SLOT_MAX
    view = SlotView(alike, frozenset({1, 2}), kin={9: (0.78, "num")}, seed=1)
    assert slot_members(view) == [1, 2, 9]


def test_a_value_recalled_as_past_lets_a_slightly_worse_fit_join() -> None:
    """When another of the owner's lines recalls the slot's value as past ("Ravi used to
    have a red Corolla that broke down") some other value holds now, so the best other
    name joins at KIN_PAST_SLACK less fit ("picked me up in his white Model 3": a hair
    under no name at all); without that line it does not."""
    from reverie.recall.slots import KIN_PAST_SLACK

    fit = -KIN_PAST_SLACK / 2
    assert slot_members(SlotView({1: 0.9, 2: 0.1}, kin={2: (fit, "name")}, seed=1)) == []
    past = SlotView({1: 0.9, 2: 0.1}, kin={2: (fit, "name")}, seed=1, past=True)
    assert slot_members(past) == [1, 2]
    far = SlotView({1: 0.9, 2: 0.1}, kin={2: (-2 * KIN_PAST_SLACK, "name")}, seed=1, past=True)
    assert slot_members(far) == []

    items = [
        hit(1, "Ravi drives a red Corolla.", date(2026, 3, 1), 0.9)[0],
        hit(2, "Ravi used to have a red Corolla that broke down every winter.",
            date(2026, 9, 1), 0.5)[0],
    ]  # fmt: skip
    model3, _ = hit(7, "Ravi picked me up in his white Model 3.", date(2026, 6, 1), 0.1)
    likeness = SlotLikeness(FakeEmbedder(dims=64), content_words=True)
    view = likeness("What car does Ravi drive?", items, lambda _w, _s: [model3])
    assert view.seed == 1 and view.past
    view = likeness("What car does Ravi drive?", items[:1], lambda _w, _s: [model3])
    assert not view.past


def test_a_name_on_a_line_sharing_a_word_of_the_slots_line_fits_nearer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "The infra team pays salaries through HSBC" and "Closed the month for the infra
    team: the Starling transfer for salaries cleared" share "salaries" besides the
    owner: Starling's fit gains KIN_SHARED over a name on a line sharing nothing (the
    fit alone: no line reads like the slot's enough to fit by that)."""
    from reverie.recall import slot_likeness
    from reverie.recall.slot_likeness import KIN_SHARED

    monkeypatch.setattr(slot_likeness, "KIN_LINE_MIN", 2.0)

    items = [
        hit(1, "The infra team pays salaries through HSBC.", date(2026, 3, 1), 0.9)[0],
        hit(2, "The infra team hired two people, so payroll is bigger.", date(2026, 8, 1),
            0.8)[0],
    ]  # fmt: skip
    starling, _ = hit(7, "Closed the month for the infra team: the Starling transfer for "
                      "salaries cleared.", date(2026, 9, 1), 0.1)  # fmt: skip
    jonas, _ = hit(8, "Handover notes for the infra team: the on-call swap with Jonas.",
                   date(2026, 9, 2), 0.1)  # fmt: skip
    likeness = SlotLikeness(FakeEmbedder(dims=256), content_words=True)
    view = likeness(
        "Which bank does the infra team use for payroll?", items, lambda _w, _s: [starling, jonas]
    )
    assert view.seed == 1 and set(view.kin) == {7, 8}
    assert view.kin[7][0] == pytest.approx(view.kin[8][0] + KIN_SHARED)


def test_a_name_whose_line_reads_like_the_slots_line_joins_though_its_fit_does_not() -> None:
    """ "Maya moved to Grenoble, near the old station" puts a name in "used to live in
    Lyon, near the old bookshop" no better than no name at all (a model reads the
    two cities alike no more than Lyon and a gym), yet the two lines read alike
    without their owner: the move joins by that, the gym ("has a membership at Iron
    Works", nothing like the slot's line) does not, and the move comes first."""
    from reverie.recall.slot_likeness import KIN_LINE_MIN

    pool = [
        hit(1, "Maya used to live in Lyon, near the old bookshop.", date(2026, 9, 1), 0.9,
            vec=[1.0, 0.0]),
        hit(2, "Maya said the rent keeps going up everywhere.", date(2026, 10, 1), 0.8,
            vec=[0.0, 1.0]),
    ]  # fmt: skip
    items = [s for s, _ in pool]
    moved, _ = hit(7, "Maya moved to Grenoble, near the old station.", date(2026, 6, 1), 0.1)
    gym, _ = hit(8, "Maya has a membership at Iron Works.", date(2026, 7, 1), 0.1)
    fake = FakeEmbedder(dims=256)
    likeness = SlotLikeness(fake, content_words=True)
    view = likeness("Where does Maya live?", items, lambda _w, _s: [moved, gym])
    assert view.seed == 1 and set(view.kin) == {7, 8}
    a, b = fake.embed_documents(
        ["used to live in Lyon, near the old bookshop.", "moved to Grenoble, near the old station."]
    )
    line = float(a @ b) / float(np.linalg.norm(a) * np.linalg.norm(b))
    assert view.kin[7][0] == pytest.approx(line - KIN_LINE_MIN) and view.kin[7][0] > 0
    assert view.kin[8][0] < 0
    assert 7 in slot_members(view) and 8 not in slot_members(view)
    # the move joins the group and goes first, before the later line recalling Lyon
    out, marks = _run(pool, "Where does Maya live?", slots=view)
    assert [s.candidate.chunk_id for s in out][:2] == [7, 1] and 8 not in marks


def test_another_value_joins_only_a_line_nearly_as_alike_as_the_slots_best() -> None:
    """The slot's best line with a value stands for the slot only when it reads nearly
    as alike as the slot's best line: "数据组的项目截止日期是六月一号" (a deadline) is no
    line of a question about the rota when "数据组的值班已经改成每月了" reads twice as
    alike, so another date ("七月十号交付") does not join the rota's lines."""
    from reverie.recall.slots import KIN_SEED_SHARE

    rota = {1: 0.44, 2: 0.43, 3: 0.21}  # 3: the deadline, a value; 1 and 2: none
    kin = {9: (0.78, "num")}
    assert 9 not in slot_members(SlotView(rota, kin=kin, seed=3))
    near = {1: 0.44, 2: 0.43, 3: 0.44 * KIN_SEED_SHARE + 0.01}
    assert 9 in slot_members(SlotView(near, kin=kin, seed=3))


def test_before_is_answered_first_by_a_line_recalling_the_earlier_value() -> None:
    """ "Where did Mei keep her passport before?": the versions state no value to be
    read by, and the newest line only mentions the passport, so "the one before the
    newest" would be the current place. The line saying where it used to be answers
    the question itself: it comes first; asked now, it stays after the versions."""
    pool = [
        hit(1, "Mei keeps her passport in the blue folder.", date(2026, 3, 1), 0.8,
            vec=[1.0, 0.0, 0.0]),
        hit(2, "Mei keeps her passport in the file box with the birth certificates.",
            date(2026, 5, 1), 0.7, vec=[0.0, 1.0, 0.0]),
        hit(3, "Mei's passport expires in three years.", date(2026, 11, 1), 0.9,
            vec=[0.0, 0.0, 1.0]),
        hit(4, "Mei's passport used to be in the blue folder, so she lost it twice.",
            date(2026, 6, 1), 0.6, vec=[0.6, 0.0, 0.8]),
    ]  # fmt: skip
    view = SlotView({1: 0.52, 2: 0.54, 3: 0.61, 4: 0.51}, frozenset({1, 2, 3, 4}))
    out, _ = _run(pool, "Where did Mei keep her passport before?", slots=view)
    assert out[0].candidate.chunk_id == 4
    now, _ = _run(pool, "Where does Mei keep her passport?", slots=view)
    assert [s.candidate.chunk_id for s in now][-1] == 4


def test_a_far_less_relevant_mention_does_not_pass_the_line_stating_the_value() -> None:
    """ "Where does Ravi live?": a later line that only mentions the slot ("the rent
    keeps going up": no value, no change word) and reads far less relevant than the
    line saying where he lives stays after it; a later line as relevant as the value's,
    though it states no value by shape ("his place is by the harbour"), is read as the
    newer version and comes first."""
    lives = hit(1, "Ravi lives in Leeds, in a flat above a bakery.", date(2026, 3, 1), 0.8,
                vec=[1.0, 0.0, 0.0])  # fmt: skip
    view = SlotView({1: 0.45, 2: 0.30}, frozenset({1, 2}))
    rent = hit(2, "Ravi said the rent keeps going up everywhere.", date(2026, 10, 1), 0.35,
               vec=[0.0, 1.0, 0.0])  # fmt: skip
    out, marks = _run([lives, rent], "Where does Ravi live?", slots=view)
    assert [s.candidate.chunk_id for s in out] == [1, 2]
    assert marks[1].superseded_by is None
    harbour = hit(2, "Ravi's place is by the harbour, a short walk from the ferry.",
                  date(2026, 10, 1), 0.6, vec=[0.0, 1.0, 0.0])  # fmt: skip
    out, _ = _run([lives, harbour], "Where does Ravi live?", slots=view)
    assert [s.candidate.chunk_id for s in out] == [2, 1]
    # with no member stating a value or a change, nothing tells a mention apart: newest first
    plain = hit(1, "Ravi's flat is above the bakery on the high street.", date(2026, 3, 1), 0.8,
                vec=[1.0, 0.0, 0.0])  # fmt: skip
    out, _ = _run([plain, rent], "Where does Ravi live?", slots=view)
    assert [s.candidate.chunk_id for s in out] == [2, 1]


def test_a_name_after_the_slots_title_fits_nearer(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "Omar's dentist is Dr. Patel" beside "Omar had a filling done by Dr. Okafor on
    the way home": the same title before both names says what kind of person fills
    the slot, so Okafor's fit gains KIN_TITLED; a name after another title ("Prof.
    Okafor") or none ("Bruno") gains nothing."""
    from reverie.recall import slot_likeness
    from reverie.recall.slot_likeness import KIN_TITLED

    monkeypatch.setattr(slot_likeness, "KIN_LINE_MIN", 2.0)  # the fit alone
    items = [
        hit(1, "Omar's dentist is Dr. Patel.", date(2026, 3, 1), 0.9)[0],
        hit(2, "Omar hates the waiting room at the dentist.", date(2026, 8, 1), 0.8)[0],
    ]
    okafor, _ = hit(7, "Omar had a filling done by Dr. Okafor on the way home.",
                    date(2026, 9, 1), 0.1)  # fmt: skip
    bruno, _ = hit(8, "Omar went climbing with Bruno on the way home.", date(2026, 9, 2), 0.1)
    prof, _ = hit(9, "Omar had a talk given by Prof. Okafor on the way home.",
                  date(2026, 9, 3), 0.1)  # fmt: skip

    def kin() -> dict[int, float]:
        likeness = SlotLikeness(FakeEmbedder(dims=256), content_words=True)
        view = likeness("Who is Omar's dentist?", items, lambda _w, _s: [okafor, bruno, prof])
        assert view.seed == 1
        return {k: fit for k, (fit, _kind) in view.kin.items()}

    titled = kin()
    monkeypatch.setattr(slot_likeness, "KIN_TITLED", 0.0)
    plain = kin()
    assert set(titled) == {7, 8, 9}
    assert titled[7] == pytest.approx(plain[7] + KIN_TITLED)
    assert titled[8] == plain[8] and titled[9] == plain[9]
    assert max(titled, key=lambda k: titled[k]) == 7


def test_a_member_at_the_bar_marks_nothing() -> None:
    """ "Aisha has a membership at Iron Works" reads just alike enough to join the
    slot of "Where does Aisha live?" (0.13 against the best 0.30) and states another
    name than Lyon, but that is all: a line at the bar may be another slot's. The
    Lyon line is marked changed by the move, which reads nearly as alike (0.20), not
    by the nearer-dated gym line."""
    view = SlotView({1: 0.30, 3: 0.13, 4: 0.20}, frozenset({1}))
    out, marks = _run(_aisha(), "Where does Aisha live?", slots=view)
    assert 3 in marks and out[0].candidate.chunk_id == 4
    assert marks[1].superseded_by == "memory/2026-09-01.md#L7"
