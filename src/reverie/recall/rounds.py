"""The looks a search takes beyond the whole question (issue 21 point 6): its parts, the
named speaker's lines, a second round seeded by the best hits (:mod:`reverie.recall.
hops` holds the pure rules; this module asks the index for what they need).

Each costs nothing unless it applies: a question with no parts asks no extra query; a
second round asks one keyword query, only when a search fills a budget and the best
hits hold terms the question does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

from ..provenance.paths import in_group_corpus
from ..storage.index.port import IndexReader
from ..storage.index.rows import NO_SCORES, Candidate, LaneScores
from .hops import names, parts, seed_terms, speaker, speaker_boosts
from .ranking import RankConfig, Scored, score

SEEDS = 3  # the best hits a second round takes its terms from
SECOND_K = 24  # what the second round's keyword query returns
RARE = True
WITH_QUESTION = False


def usable(c: Candidate) -> bool:
    """A content chunk a search may show (no group chat: R-LANE2-2)."""
    return c.path_tier == 0 and not in_group_corpus(c.path)


def _note(s: Scored, note: str) -> Scored:
    return replace(s, notes=(*s.notes, note))


def scored(
    ix: IndexReader,
    query: str,
    cands: list[Candidate],
    cfg: RankConfig,
    *,
    today: date,
    active_projects: frozenset[str],
    k: int,
    drop: frozenset[str],
    split: bool,
    speaker_boost: float,
    keyword: bool,
) -> list[Scored]:
    """Every candidate scored for the whole question and, when it asks two questions
    (``split``), for each part on its own (one keyword query a part; a candidate keeps
    its best score), then the lines spoken by a person the question names lifted by
    ``speaker_boost``."""

    def passes(q: str, cs: list[Candidate]) -> list[Scored]:
        out = score(cs, cfg, today=today, active_projects=active_projects, query=q)
        boosts = speaker_boosts(
            q, ((s.candidate.chunk_id, s.candidate.text) for s in out), speaker_boost
        )
        for i, s in enumerate(out):
            lift = boosts.get(s.candidate.chunk_id)
            if lift is not None and s.tier == 0:
                f, who = lift
                out[i] = _note(
                    replace(s, hybrid=s.hybrid * f, final=s.final * f), f"spoken by {who}"
                )
        return out

    best = {s.candidate.chunk_id: s for s in passes(query, cands)}
    for part in parts(query) if split and keyword else []:
        bm25 = ix.keyword_top(part, k, drop)
        known = {c.chunk_id for c in cands}
        fresh = ix.candidates([i for i in bm25 if i not in known], NO_SCORES)
        cands = cands + [c for c in fresh if usable(c)]
        alone = [replace(c, bm25=bm25.get(c.chunk_id), path_tier=0) for c in cands]
        for s in passes(part, alone):
            cid = s.candidate.chunk_id
            held = best.get(cid)
            if held is None or (s.final > held.final and held.tier == 0):
                best[cid] = _note(s, f"question part: {part}")
    return list(best.values())


def second_round(
    ix: IndexReader,
    query: str,
    ranked: list[Scored],
    cands: Sequence[Candidate],
    *,
    share: float,
    drop: frozenset[str],
) -> list[Scored]:
    """``ranked`` with the hits of one more keyword query, for the entities and rare
    terms of the best hits (:func:`reverie.recall.hops.seed_terms`): each scored
    ``share`` x the best hit's score x its keyword strength relative to that query's
    best; a hit already ranked keeps the better of its two scores. Read by score in a
    budget, like a neighbour."""
    seeds = [s for s in ranked if s.tier == 0 and not s.below_min][:SEEDS]
    if share <= 0 or not seeds:
        return ranked
    mine = {s.candidate.chunk_id for s in seeds}
    others = [c.text for c in cands if c.chunk_id not in mine]
    found = seed_terms(query, [s.candidate.text for s in seeds], others, rare=RARE)
    if not found:
        return ranked
    asked = " ".join([query] if WITH_QUESTION else [])
    bm25 = ix.keyword_top(" ".join([asked, *found]), SECOND_K, drop)
    top = max((abs(v) for v in bm25.values()), default=0.0)
    if top <= 0:
        return ranked
    base = share * seeds[0].final
    lift = {cid: base * abs(v) / top for cid, v in bm25.items()}
    why = "second round: " + " ".join(found)
    out = []
    for s in ranked:
        got = lift.pop(s.candidate.chunk_id, 0.0)
        out.append(_note(replace(s, final=got), why) if got > s.final and s.tier == 0 else s)
    fresh = ix.candidates(list(lift), LaneScores({}, bm25, {}))
    out += [_note(Scored(c, final=lift[c.chunk_id]), why) for c in fresh if usable(c)]
    return out


__all__ = ["scored", "second_round"]


def sessions_together(ranked: list[Scored], bonus: float, *, floor: float) -> list[Scored]:
    """A budget's hits with the lines of a session (one journal or transcript file)
    that holds several direct hits lifted together: ``bonus`` x the share of its other
    direct hits (up to three) of relevance >= ``floor``, so a session that keeps to the
    question's topic is read as a whole before stray lines of other days."""
    if bonus <= 0:
        return ranked
    count: dict[str, int] = {}
    for s in ranked:
        c = s.candidate
        if s.tier == 0 and c.kind in ("journal", "transcript") and s.relevance >= floor:
            count[c.path] = count.get(c.path, 0) + 1
    out = []
    for s in ranked:
        others = min(3, count.get(s.candidate.path, 0) - 1)
        if s.tier or others <= 0:
            out.append(s)
            continue
        f = 1.0 + bonus * others / 3
        out.append(_note(replace(s, final=s.final * f), f"session of {others + 1} hits"))
    return out


SPEAKER_CONTEXT = True  # a neighbour is lifted by its own speaker, not its parent's


def context_speaker(
    query: str, ranked: Sequence[Scored], factor: float
) -> tuple[list[float], Callable[[str], float]]:
    """For the neighbours of a budget: each ranked hit's score without its speaker
    lift, and the lift a neighbour's own line earns (the named person's reply beside
    the other's message is lifted, the other's line beside the named one's is not)."""
    lifted = [any(n.startswith("spoken by") for n in s.notes) for s in ranked]
    if not SPEAKER_CONTEXT or not any(lifted):
        return [s.final for s in ranked], lambda _text: 1.0
    asked = names(query)

    def lift(text: str) -> float:
        return factor if speaker(text) in asked else 1.0

    return [s.final / factor if up else s.final for s, up in zip(ranked, lifted, strict=True)], lift
