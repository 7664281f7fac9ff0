"""The escalation lane's pure parts: the two gates, the privacy rules, the checks of
the sub-agent's steps and answers, and the injected block."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reverie.errors import ProviderError
from reverie.provenance.frames import INJECTED_BLOCK, UNTRUSTED_CLOSE
from reverie.provenance.origin import Origin
from reverie.recall.escalation import (
    SessionMeta,
    Target,
    Turn,
    no_strong_hit,
    recall_intent,
    source_refusal,
    target_gate,
)
from reverie.recall.escalation.lane import turns_of
from reverie.recall.escalation.protocol import (
    Answer,
    Line,
    Seen,
    Step,
    check_answer,
    parse_anchor,
    render_block,
    runs,
    validate_step,
)

RECALL = [
    "What did we decide about the cache last time?",
    "remember when we moved the CI to GitHub Actions?",
    "Did I tell you about my dentist appointment?",
    "Which library did we pick for parsing dates?",
    "as we discussed, the deploy goes on Fridays, right?",
    "We already agreed on the naming scheme, didn't we?",
    "What was the port in our previous conversation?",
    "Do you remember my sister's name?",
    "The bug from two weeks ago is back.",
    "Remind me what we called the staging bucket.",
    "上次我们说的那个库叫什么？",
    "之前说过的端口是多少",
    "我们当时决定用哪个数据库？",
    "还记得我妹妹的名字吗",
    "你记得我提过的那本书吗",
    "昨天讨论的方案",
    "What was the name of that restaurant I mentioned before?",
    "You told me about a book on compilers, which one?",
    "What was her name again?",
    "When we last spoke, what did you recommend?",
    "Last Friday we deployed something, what was it?",
    "他叫什么来着",
    "我提到过的那本书",
    "前阵子聊的那个方案",
]
NO_RECALL = [
    "Write a haiku about autumn.",
    "remember to buy milk",
    "How do I install Python 3.12 on Ubuntu?",
    "Deploy the app to staging.",
    "What is the capital of France?",
    "Before you deploy, run the tests.",
    "Write a function that returns the earliest date.",
    "Run the tests again.",
    "帮我写一首诗",
    "今天天气怎么样",
    "把这个函数改成异步的",
    "",
]


@pytest.mark.parametrize("message", RECALL)
def test_recall_intent_is_seen_in_english_and_chinese(message: str) -> None:
    gate = recall_intent(message)
    assert gate.passed, message
    assert gate.detail["matched"]


@pytest.mark.parametrize("message", NO_RECALL)
def test_no_recall_intent(message: str) -> None:
    gate = recall_intent(message)
    assert not gate.passed
    assert gate.reason == "no recall intent in the message"


@given(
    st.text(max_size=200), st.sampled_from(["last time", "what did we decide", "上次", "还记得"])
)
def test_a_cue_is_found_whatever_surrounds_it(noise: str, cue: str) -> None:
    assert recall_intent(f"{noise} {cue} {noise}").passed


@given(st.text(max_size=300))
def test_the_intent_gate_is_deterministic_and_total(text: str) -> None:
    assert recall_intent(text) == recall_intent(text)


def test_strong_hit_gate() -> None:
    assert not no_strong_hit(1, None, 0.7).passed  # a trigger fired
    assert not no_strong_hit(0, 0.7, 0.7).passed
    gate = no_strong_hit(0, 0.69, 0.7)
    assert gate.passed and gate.detail["best_relevance"] == 0.69
    assert no_strong_hit(0, None, 0.7).passed  # nothing found at all


def test_only_direct_conversations_are_targets() -> None:
    assert target_gate(Target()).passed  # the caller, no session
    assert target_gate(Target("s1", "interactive", "direct")).passed
    assert not target_gate(Target("s1", "interactive", "group")).passed
    assert not target_gate(Target("s1", "cron", "direct")).passed
    assert not target_gate(Target("s1", "subagent", "direct")).passed


GOOD = SessionMeta("s", found=True, sealed=True, kind="interactive", channel="direct")


@pytest.mark.parametrize(
    ("meta", "why"),
    [
        (GOOD, None),
        (SessionMeta("s"), "missing metadata"),
        (SessionMeta("s", found=True, kind="interactive", channel="direct"), "not sealed"),
        (SessionMeta("s", found=True, sealed=True, kind="interactive"), "missing metadata"),
        (SessionMeta("s", True, True, "interactive", "direct", agent="other"), "agent other"),
        (SessionMeta("s", True, True, "interactive", "direct", archived=True), "archived"),
        (SessionMeta("s", True, True, "interactive", "group"), "group chat"),
        (SessionMeta("s", True, True, "heartbeat", "direct"), "heartbeat"),
    ],
)
def test_source_rules(meta: SessionMeta, why: str | None) -> None:
    got = source_refusal(meta, agent="main")
    assert (got is None) if why is None else (got is not None and why in got)


def test_the_lane_sees_the_last_two_user_turns_and_one_assistant_turn() -> None:
    turns = (
        Turn("user", "u1"),
        Turn("assistant", "a1"),
        Turn("user", "u2"),
        Turn("assistant", "a2"),
    )
    assert [t.text for t in turns_of(Target(turns=turns), "u3")] == ["u2", "a2", "u3"]
    recorded = (*turns, Turn("user", "u3"))  # the message already recorded: not twice
    assert [t.text for t in turns_of(Target(turns=recorded), "u3")] == ["u2", "a2", "u3"]


# --- steps and answers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"action": "search"},
        {"action": "search", "query": "   "},
        {"action": "read", "anchor": "memory/x.md"},
        {"action": "read", "anchor": "memory/x.md#L5-L2"},
        {"action": "answer", "summary": "", "sources": []},
        {"action": "answer", "summary": "x", "sources": "memory/x.md#L1-L2"},
        {"action": "dance"},
    ],
)
def test_malformed_steps_are_provider_errors(data: object) -> None:
    with pytest.raises(ProviderError, match="malformed lane step"):
        validate_step(data, "stub")


def test_anchors() -> None:
    assert parse_anchor("memory/2026-05-01.md#L3-L9") == ("memory/2026-05-01.md", 3, 9)
    assert parse_anchor("memory/2026-05-01.md#L3") == ("memory/2026-05-01.md", 3, 3)
    assert parse_anchor("memory/a.md#L0-L1") is None
    assert parse_anchor("no anchor") is None


lines_st = st.lists(st.integers(1, 60), min_size=1, max_size=20, unique=True).map(sorted)
origin_st = st.sampled_from([Origin.OWNER, Origin.AGENT, Origin.UNTRUSTED])


@given(
    lines_st,
    st.lists(
        st.tuples(
            st.sampled_from(["memory/a.md", "memory/b.md"]), st.integers(1, 70), st.integers(0, 5)
        )
    ),
    origin_st,
)
def test_kept_anchors_lie_inside_what_was_shown(
    shown: list[int], asked: list[tuple[str, int, int]], origin: Origin
) -> None:
    seen = Seen()
    seen.add(runs("memory/a.md", [Line(n, f"line {n}", origin) for n in shown]))
    anchors = [f"{p}#L{a}-L{a + w}" for p, a, w in asked]
    answer = check_answer(Step("answer", summary="s", sources=tuple(anchors)), seen, max_chars=220)
    for kept in answer.sources:
        path, a, b = parse_anchor(kept) or ("", 0, -1)
        assert path == "memory/a.md" and all(n in shown for n in range(a, b + 1))
    assert len(answer.sources) + len(answer.dropped) <= len(anchors)
    assert answer.origin is origin


def test_the_summary_is_cut_to_its_budget() -> None:
    seen = Seen()
    seen.add(runs("memory/a.md", [Line(1, "x", Origin.OWNER)]))
    step = Step("answer", summary="y" * 500, sources=("memory/a.md#L1-L1",))
    answer = check_answer(step, seen, max_chars=220)
    assert len(answer.summary) == 220 and answer.summary.endswith("…")


@given(st.text(max_size=300))
def test_no_summary_can_break_out_of_its_frames(summary: str) -> None:
    block = render_block(Answer(summary or "x", ("memory/a.md#L1-L1",), (), Origin.UNTRUSTED))
    assert block.count(UNTRUSTED_CLOSE) == 1
    assert block.rstrip().endswith("</memory-recall>")
    assert INJECTED_BLOCK.sub("", block).strip() == ""  # ingestion strips all of it


@given(
    st.sampled_from([o.value for o in Origin] + ["root", None]),
    st.sampled_from(["owner", "assistant", "tool", "web", "member", "import", "bogus"]),
    st.sampled_from(["direct", "group"]),
    st.sampled_from(["alice", "bob", None]),
)
def test_a_live_transcript_message_is_never_above_what_its_source_allows(
    recorded: str | None, source: str, channel: str, sender: str | None
) -> None:
    from reverie.provenance.origin import Channel, SessionKind, Source, origin_for
    from reverie.recall.escalation.transcripts import _origin

    header = {"kind": "interactive", "channel": channel, "owner": "alice"}
    got = _origin({"origin": recorded, "source": source, "sender": sender}, header)
    if source == "bogus" or recorded not in {o.value for o in Origin}:
        assert got is Origin.UNTRUSTED
        return
    allowed = origin_for(
        Source(source),
        session_kind=SessionKind.INTERACTIVE,
        channel=Channel(channel),
        sender=sender,
        owner="alice",
    )
    assert got.rank <= min(allowed.rank, Origin(recorded).rank)
