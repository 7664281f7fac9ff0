"""The pure hybrid score chain (R-RECALL-2..3, SPEC section 8 defaults).

What a user notices: the final score is the product of the documented factors; MMR
reorders but never rescores and never lets a content hit jump above an exact path
match; fresher journals and more important entries never score lower; a query with
nothing above the min score shows only keyword hits, flagged as below it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.origin import Origin
from reverie.recall.ranking import (
    Candidate,
    RankConfig,
    Scored,
    bm25_normalise,
    decay_factor,
    importance_multiplier,
    keyword_blind,
    project_multiplier,
    rank,
    relevance,
    score,
    spread,
)
from reverie.storage.trailers import INVALID_PROJECT
from reverie.tokens import scripts

TODAY = date(2026, 5, 1)
CFG = RankConfig()
WORDS = [
    "kafka",
    "broker",
    "port",
    "deploy",
    "gateway",
    "loopback",
    "数据库",
    "备份",
    "alpha",
    "beta",
]
KINDS = ["curated", "journal", "transcript", "import", "note"]
PROJECTS = ["github.com/acme/web", "github.com/acme/api", INVALID_PROJECT]

# -- strategies ------------------------------------------------------------------------

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
days = st.none() | st.integers(0, 800).map(lambda n: TODAY - timedelta(days=n))
bm25s = st.none() | st.floats(-40.0, -0.001, allow_nan=False)
cosines = st.none() | st.floats(-1.0, 1.0, allow_nan=False)


@st.composite
def candidate_lists(draw: st.DrawFn, min_size: int = 0, max_size: int = 10) -> list[Candidate]:
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        cosine = draw(cosines)
        bm25 = draw(bm25s)
        tier = draw(st.sampled_from([0, 0, 0, 1, 2, 3]))
        if cosine is None and bm25 is None and tier == 0:
            bm25 = -1.0  # every candidate came from some lane
        out.append(
            Candidate(
                chunk_id=i + 1,
                path=f"memory/f{i}.md",
                start_line=1,
                end_line=1,
                text=draw(texts),
                kind=draw(st.sampled_from(KINDS)),
                day=draw(days),
                origin=draw(st.sampled_from(list(Origin))),
                importance=draw(st.none() | st.integers(1, 10)),
                projects=tuple(draw(st.lists(st.sampled_from(PROJECTS), max_size=2, unique=True))),
                cosine=cosine,
                bm25=bm25,
                path_tier=tier,
            )
        )
    return out


active_sets = st.sets(st.sampled_from([*PROJECTS[:2], INVALID_PROJECT])).map(frozenset)
configs = st.builds(
    RankConfig,
    max_results=st.integers(1, 10),
    min_score=st.sampled_from([0.0, 0.2, 0.35, 0.6]),
    keyword_only=st.booleans(),
)


def cand(cid: int, text: str, **kw: object) -> Candidate:
    base: dict[str, object] = dict(
        chunk_id=cid,
        path=f"MEMORY.md#{cid}",
        start_line=cid,
        end_line=cid,
        text=text,
        kind="curated",
        day=None,
        origin=Origin.OWNER,
    )
    base.update(kw)
    return Candidate(**base)  # type: ignore[arg-type]


# -- the factors -----------------------------------------------------------------------


@given(a=st.floats(-1e6, 0, allow_nan=False), b=st.floats(-1e6, 0, allow_nan=False))
def test_bm25_normalisation_is_bounded_and_monotone_in_rank_magnitude(a: float, b: float) -> None:
    na, nb = bm25_normalise(a), bm25_normalise(b)
    assert 0.0 <= na <= 1.0 and 0.0 <= nb <= 1.0
    if abs(a) <= abs(b):
        assert na <= nb
    assert bm25_normalise(-3.0) == pytest.approx(0.75)


@given(older=st.integers(0, 3000), extra=st.integers(0, 3000))
def test_decay_is_monotone_in_age(older: int, extra: int) -> None:
    fresh = decay_factor(TODAY - timedelta(days=older), TODAY, 30.0)
    stale = decay_factor(TODAY - timedelta(days=older + extra), TODAY, 30.0)
    assert 0.0 < stale <= fresh <= 1.0


def test_decay_half_life_future_and_undated() -> None:
    assert decay_factor(TODAY - timedelta(days=30), TODAY, 30.0) == pytest.approx(0.5)
    assert decay_factor(TODAY - timedelta(days=60), TODAY, 30.0) == pytest.approx(0.25)
    assert decay_factor(TODAY + timedelta(days=5), TODAY, 30.0) == 1.0  # a future date: no boost
    assert decay_factor(None, TODAY, 30.0) == 1.0


@given(i=st.integers(-5, 20), j=st.integers(-5, 20))
def test_importance_multiplier_is_monotone_and_clamped(i: int, j: int) -> None:
    lo, hi = sorted((i, j))
    assert importance_multiplier(lo) <= importance_multiplier(hi)
    assert 0.80 - 1e-9 <= importance_multiplier(i) <= 1.25 + 1e-9
    assert importance_multiplier(None) == 1.0
    assert importance_multiplier(1) == pytest.approx(0.80)
    assert importance_multiplier(10) == pytest.approx(1.25)
    assert importance_multiplier(5) == pytest.approx(1.0)


def test_project_multiplier() -> None:
    web, api = "github.com/acme/web", "github.com/acme/api"
    assert project_multiplier((), frozenset({web})) == 1.0
    assert project_multiplier((web,), frozenset({web, api})) == pytest.approx(1.15)
    assert project_multiplier((web, api), frozenset({web})) == pytest.approx(0.9)  # not all keys
    assert project_multiplier((web,), frozenset()) == pytest.approx(0.9)
    # the invalid sentinel is never boosted, even if someone puts it in the active set
    assert project_multiplier((INVALID_PROJECT,), frozenset({INVALID_PROJECT})) == pytest.approx(
        0.9
    )


@given(
    values=st.dictionaries(st.integers(1, 50), st.floats(-1, 1, allow_nan=False), max_size=20),
    scaling=st.sampled_from(["spread", "minmax", "raw"]),
)
def test_lane_scores_stay_in_unit_interval_and_keep_the_order(
    values: dict[int, float], scaling: str
) -> None:
    out = spread(values, scaling)
    assert set(out) == set(values)
    assert all(-1e-9 <= v <= 1 + 1e-9 for v in out.values())
    for a in values:  # scaling never reorders a lane
        for b in values:
            if values[a] > values[b] and max(values[a], values[b]) > 0:
                assert out[a] >= out[b] - 1e-12


def test_spread_keeps_a_weak_best_hit_weak() -> None:
    """The absolute half keeps the min score meaningful: an unrelated query's best hit
    (cosine 0.1) does not become 1.0 as plain min-max would make it."""
    out = spread({1: 0.1, 2: 0.05, 3: 0.0})
    assert out[1] == pytest.approx(0.1)
    assert spread({1: 0.1, 2: 0.05, 3: 0.0}, "minmax")[1] == 1.0


# -- the chain -------------------------------------------------------------------------


@given(cands=candidate_lists(), active=active_sets, cfg=configs)
@settings(max_examples=40, deadline=None)
def test_final_is_the_documented_product(
    cands: list[Candidate], active: frozenset[str], cfg: RankConfig
) -> None:
    for s in score(cands, cfg, today=TODAY, active_projects=active):
        c = s.candidate
        assert s.final == pytest.approx(s.hybrid * s.decay * s.importance_mult * s.project_mult)
        if cfg.keyword_only:
            assert s.hybrid == pytest.approx(s.text)  # the vector lane plays no part
        else:
            assert s.hybrid == pytest.approx(cfg.w_vec * s.vector + cfg.w_text * s.text)
        if c.kind not in ("journal", "transcript"):
            assert s.decay == 1.0  # curated and other files are evergreen
        assert s.final >= 0.0


@given(cands=candidate_lists(min_size=1), active=active_sets, cfg=configs)
@settings(max_examples=40, deadline=None)
def test_keyword_only_ignores_cosines(
    cands: list[Candidate], active: frozenset[str], cfg: RankConfig
) -> None:
    cfg = RankConfig(**{**cfg.__dict__, "keyword_only": True})
    with_cos = {s.candidate.chunk_id: s.final for s in score(cands, cfg, today=TODAY)}
    without = [Candidate(**{**c.__dict__, "cosine": None}) for c in cands]
    assert {
        s.candidate.chunk_id: s.final for s in score(without, cfg, today=TODAY)
    } == pytest.approx(with_cos)


@given(
    cands=candidate_lists(min_size=1),
    which=st.integers(0, 100),
    lo=st.integers(1, 10),
    hi=st.integers(1, 10),
)
@settings(max_examples=40, deadline=None)
def test_final_is_monotone_in_importance(
    cands: list[Candidate], which: int, lo: int, hi: int
) -> None:
    lo, hi = sorted((lo, hi))
    i = which % len(cands)

    def final_with(importance: int) -> float:
        changed = list(cands)
        changed[i] = Candidate(**{**cands[i].__dict__, "importance": importance})
        return {s.candidate.chunk_id: s.final for s in score(changed, CFG, today=TODAY)}[
            cands[i].chunk_id
        ]

    assert final_with(lo) <= final_with(hi) + 1e-12


@given(
    age=st.integers(0, 500),
    extra=st.integers(1, 500),
    kind=st.sampled_from(["journal", "transcript"]),
)
def test_older_journal_never_scores_higher(age: int, extra: int, kind: str) -> None:
    fresh = cand(
        1, "kafka broker", kind=kind, day=TODAY - timedelta(days=age), bm25=-4.0, cosine=0.8
    )
    old = cand(
        2, "kafka broker", kind=kind, day=TODAY - timedelta(days=age + extra), bm25=-4.0, cosine=0.8
    )
    by_id = {s.candidate.chunk_id: s.final for s in score([fresh, old], CFG, today=TODAY)}
    assert by_id[2] <= by_id[1]


def test_curated_entry_is_not_decayed_even_with_a_day() -> None:
    old_day = TODAY - timedelta(days=400)
    (s,) = score([cand(1, "kafka", kind="curated", day=old_day, bm25=-4.0)], CFG, today=TODAY)
    assert s.decay == 1.0


# -- rank: tiers, min score, MMR ----------------------------------------------------------


def _by_id(scored: list[Scored]) -> dict[int, Scored]:
    return {s.candidate.chunk_id: s for s in scored}


@given(cands=candidate_lists(), active=active_sets, cfg=configs)
@settings(max_examples=60, deadline=None)
def test_rank_never_rescores_and_never_crosses_a_tier(
    cands: list[Candidate], active: frozenset[str], cfg: RankConfig
) -> None:
    plain = _by_id(score(cands, cfg, today=TODAY, active_projects=active))
    ranked = rank(cands, cfg, today=TODAY, active_projects=active)
    assert len(ranked) <= cfg.max_results
    assert len({s.candidate.chunk_id for s in ranked}) == len(ranked)  # merged, not duplicated
    assert [s.mmr_rank for s in ranked] == list(range(1, len(ranked) + 1))
    for s in ranked:
        p = plain[s.candidate.chunk_id]
        # MMR reorders, never rescores: every factor is what score() computed
        assert (s.final, s.hybrid, s.decay, s.importance_mult, s.project_mult) == (
            p.final,
            p.hybrid,
            p.decay,
            p.importance_mult,
            p.project_mult,
        )
    tiers = [s.tier for s in ranked]
    assert tiers == sorted(tiers, reverse=True)  # full path > basename > stem > content


@given(cands=candidate_lists(), active=active_sets, cfg=configs)
@settings(max_examples=60, deadline=None)
def test_min_score_and_flagged_keyword_fallback(
    cands: list[Candidate], active: frozenset[str], cfg: RankConfig
) -> None:
    ranked = rank(cands, cfg, today=TODAY, active_projects=active)
    plain = score(cands, cfg, today=TODAY, active_projects=active)
    # the min score judges relevance (everything but decay): decay only orders
    content_pass = [s for s in plain if s.tier == 0 and relevance(s, cfg) >= cfg.min_score]
    has_tier = any(s.tier > 0 for s in plain)
    for s in ranked:
        if s.tier == 0 and not s.below_min:
            assert relevance(s, cfg) >= cfg.min_score
            assert s.hybrid * s.importance_mult * s.project_mult >= cfg.min_score
        if s.below_min:
            # only when nothing passes; only keyword hits; never a path-tier hit
            assert not content_pass and not has_tier
            assert s.candidate.bm25 is not None and s.tier == 0
            assert relevance(s, cfg) < cfg.min_score
    if content_pass or has_tier:
        assert not any(s.below_min for s in ranked)
    if not content_pass and not has_tier:
        keyword = [s for s in plain if s.candidate.bm25 is not None]
        assert len(ranked) == min(cfg.max_results, len(keyword))
        assert all(s.below_min for s in ranked)


def test_fallback_hits_are_flagged_and_vector_only_junk_is_dropped() -> None:
    weak_keyword = cand(1, "kafka", bm25=-0.05)  # 0.048 after normalisation
    weak_vector = cand(2, "gateway", cosine=0.01)
    ranked = rank([weak_keyword, weak_vector], CFG, today=TODAY)
    assert [s.candidate.chunk_id for s in ranked] == [1]
    assert ranked[0].below_min and ranked[0].explain()["below_min_score"] is True


def test_nothing_at_all_returns_nothing() -> None:
    assert rank([], CFG, today=TODAY) == []
    assert rank([cand(1, "gateway", cosine=0.0)], CFG, today=TODAY) == []


def test_path_tier_beats_a_far_better_content_hit_despite_decay() -> None:
    ancient = cand(
        1,
        "rack power",
        kind="journal",
        path="memory/2024-01-10.md",
        day=date(2024, 1, 10),
        path_tier=2,
    )
    stem = cand(
        2,
        "rack notes",
        kind="journal",
        path="memory/x/2024-01-10.md",
        day=date(2024, 1, 10),
        path_tier=1,
    )
    star = cand(3, "2024-01-10 archive", importance=10, cosine=1.0, bm25=-30.0)
    full = cand(
        4, "ops", kind="journal", path="memory/2024-01-10.md", day=date(2024, 1, 10), path_tier=3
    )
    ranked = rank([star, stem, ancient, full], CFG, today=TODAY)
    assert [s.candidate.chunk_id for s in ranked] == [4, 1, 2, 3]
    assert ranked[0].final < ranked[-1].final  # the order is by tier, not by score


def test_mmr_moves_a_distinct_hit_above_near_duplicates_without_rescoring() -> None:
    dup = "kafka broker alpha listens on port 9092 for staging traffic"
    cands = [
        cand(1, dup, cosine=0.90, bm25=-8.0),
        cand(2, dup + " again", cosine=0.89, bm25=-7.9),
        cand(3, dup + " too", cosine=0.88, bm25=-7.8),
        cand(4, "retention keeps seven days of logs", cosine=0.80, bm25=-6.0),
    ]
    cfg = replace(CFG, scaling="raw")  # MMR mechanics alone, on unscaled lane scores
    plain = _by_id(score(cands, cfg, today=TODAY))
    by_score = sorted(plain, key=lambda cid: -plain[cid].final)
    assert by_score[-1] == 4  # the distinct hit has the lowest score ...
    ranked = rank(cands, cfg, today=TODAY)
    order = [s.candidate.chunk_id for s in ranked]
    assert order[0] == 1 and order[1] == 4  # ... yet MMR lists it second
    assert {s.candidate.chunk_id: s.final for s in ranked} == {c: plain[c].final for c in plain}


@given(cands=candidate_lists(min_size=3))
@settings(max_examples=40, deadline=None)
def test_mmr_always_starts_each_tier_with_its_best_score(cands: list[Candidate]) -> None:
    cfg = RankConfig(max_results=50, min_score=0.0)
    ranked = rank(cands, cfg, today=TODAY)
    for tier in (3, 2, 1, 0):
        group = [s for s in ranked if s.tier == tier]
        if len(group) >= 3:
            assert group[0].final == max(s.final for s in group)


def test_two_hits_are_listed_best_first() -> None:
    weaker = cand(1, "espresso grinder setting", importance=2, cosine=0.9, bm25=-5.0)
    stronger = cand(2, "espresso grinder setting", importance=9, cosine=0.9, bm25=-5.0)
    ranked = rank([weaker, stronger], CFG, today=TODAY)
    assert [s.candidate.chunk_id for s in ranked] == [2, 1]
    tiers = rank(
        [cand(3, "a", path_tier=2), cand(4, "b", path_tier=2, importance=10, bm25=-9.0)],
        CFG,
        today=TODAY,
    )
    assert [s.candidate.chunk_id for s in tiers] == [4, 3]


def test_explain_reports_every_factor() -> None:
    c = cand(
        1,
        "kafka",
        kind="journal",
        day=TODAY - timedelta(days=30),
        importance=9,
        projects=("github.com/acme/web",),
        cosine=0.7,
        bm25=-3.0,
    )
    (s,) = rank(
        [c],
        RankConfig(min_score=0.0),
        today=TODAY,
        active_projects=frozenset({"github.com/acme/web"}),
    )
    e = s.explain()
    assert e["decay"] == pytest.approx(0.5)
    assert e["importance_mult"] == pytest.approx(1.2)
    assert e["project_mult"] == pytest.approx(1.15)
    assert e["text"] == pytest.approx(0.75)
    assert e["final"] == pytest.approx(round(s.hybrid * 0.5 * 1.2 * 1.15, 4), abs=1e-4)
    assert math.isclose(s.final, s.hybrid * 0.5 * 1.2 * 1.15)


def test_a_lane_blind_to_a_chunk_does_not_vote() -> None:
    """Cross-lingual recall: an English question cannot share a word with a Chinese
    note, so the keyword lane's silence does not halve that note's vector score."""
    cfg = RankConfig(min_score=0.35)
    zh = cand(1, "用户喜欢在所有编辑器里使用深色主题。", cosine=0.6)
    en = cand(2, "the user likes dark themes in every editor", cosine=0.6)
    asked = scripts("which editor theme does the user like?")
    assert keyword_blind(asked, zh.text) and not keyword_blind(asked, en.text)
    ranked = rank([zh], cfg, today=TODAY, asked=asked)
    assert [s.candidate.chunk_id for s in ranked] == [1] and not ranked[0].below_min
    assert ranked[0].hybrid == pytest.approx(ranked[0].vector)
    # the same vector evidence on a chunk the keyword lane could see but did not find
    # is weighed as usual and falls under the min score
    assert rank([en], cfg, today=TODAY, asked=asked) == []


def test_the_next_results_reach_other_days() -> None:
    """``mmr_same_file``: a day's second journal hit waits for the best hit of another
    day; entries of one curated file (MEMORY.md) are not held back; 0 turns it off."""
    today = date(2026, 5, 1)
    day = dict(kind="journal", day=today, cosine=None)
    cands = [
        cand(1, "zqa ferry booked friday", path="memory/2026-05-01.md", bm25=-9.0, **day),
        cand(2, "zqb harbour parking note", path="memory/2026-05-01.md", bm25=-8.5, **day),
        cand(3, "zqc ticket price noted", path="memory/2026-04-30.md", bm25=-6.0, **day),
    ]
    cfg = RankConfig(max_results=3, min_score=0.0, mmr_lambda=0.8, mmr_same_file=1.0)
    assert [s.candidate.chunk_id for s in rank(cands, cfg, today=today)] == [1, 3, 2]
    off = replace(cfg, mmr_same_file=0.0)
    assert [s.candidate.chunk_id for s in rank(cands, off, today=today)] == [1, 2, 3]
    curated = [replace(c, kind="curated", path="MEMORY.md", day=None) for c in cands]
    curated[2] = replace(curated[2], path="USER.md")
    assert [s.candidate.chunk_id for s in rank(curated, cfg, today=today)] == [1, 2, 3]
