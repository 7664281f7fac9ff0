"""memory_search and memory_get (R-RECALL-2..6): the lane-1 recall entry points.

Orchestrates the index port (:mod:`reverie.storage.index.port`, whichever backend holds
the index) and the pure ranking in :mod:`reverie.recall.ranking`. Zero model calls apart from embedding the query.

The question is read once (:mod:`reverie.recall.question`); the stages of a search,
in the order :meth:`Searcher._search` runs them, each reading that one value:

1. lanes: the vector lane (a question's content words; the whole of a sentence that
   names no one: it is about the user, and its form carries the meaning), the keyword
   lane, the path tiers;
2. score: each lane's spread, recency decay, a lane blind to a line's script not voting
   (:mod:`reverie.recall.ranking`);
3. speakers: lines spoken by a person the question names (:mod:`reverie.recall.hops`);
4. versions: the best hit's versions in the order the question's time asks
   (:mod:`reverie.recall.versions`);
5. chains: the newer lines the files link to a hit (:mod:`reverie.recall.chains`);
6. the cut, then in a budget the sessions kept together, a reranker when configured,
   the entries beside each journal hit, and the budget's packing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ProviderError, ReverieError
from ..provenance.paths import in_group_corpus
from ..storage.embedders.base import Embedder
from ..storage.index.port import IndexReader
from ..storage.index.rows import NO_SCORES, LaneScores
from ..tokens import QUERY_STOP_WORDS, count_tokens
from .chains import Link
from .follow import SUPERSEDE_POOL, chains_of, versions_of
from .get import GetResult, memory_get  # (memory_get's home; imported from here too)
from .hits import Hit, SearchResponse
from .hops import context_speaker, lift_speakers, lift_window, sessions_together
from .neighbours import neighbour_scores
from .question import Question, read
from .ranking import RankConfig, Scored, rank_scored, score
from .snippets import focus, pack_grouped
from .versions import Version

if TYPE_CHECKING:
    from .rerank import Reranker

Lanes = Literal["hybrid", "keyword", "vector"]
SNIPPET_TOKENS = 400  # a snippet grows around its best line up to this many tokens


class Searcher:
    """Hybrid search over the index: vector lane, keyword lane, path tiers, ranking."""

    def __init__(self, settings: Any, embedder: Embedder | None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.reranker: Reranker | None = None
        if settings.rerank_url:  # (its module, a thread pool's with it, only when set)
            from .rerank import Reranker

            self.reranker = Reranker(
                settings.rerank_url,
                model=settings.rerank_model,
                api_key=settings.rerank_api_key,
                timeout=settings.rerank_timeout,
            )

    def config(self, *, keyword_only: bool, max_results: int | None) -> RankConfig:
        if max_results is not None and max_results < 1:
            raise ReverieError(f"max_results must be at least 1, got {max_results}")
        s = self.settings
        return RankConfig(
            max_results=max_results or s.search_max_results,
            min_score=s.search_min_score,
            w_vec=s.search_vector_weight,
            w_text=s.search_text_weight,
            half_life_days=s.journal_half_life_days,
            decay_floor=s.journal_decay_floor,
            mmr_lambda=s.search_mmr_lambda,
            mmr_same_file=s.search_mmr_same_file,
            scaling=s.search_scaling,
            min_before_decay=s.search_min_before_decay,
            keyword_only=keyword_only,
        )

    def _query_vector(self, ix: IndexReader, q: Question) -> tuple[Any, str | None]:
        """The query vector, or None and why the vector lane is off.

        No embedder, or a transient failure: keyword-only, and the response says so.
        An explicitly configured provider that is unreachable (bad URL, bad key) is an
        error that names the provider (R-RECALL-4)."""
        if self.embedder is None:
            return None, "no embedder configured"
        stored = ix.meta("embedder")
        try:
            label = self.embedder.identity.label()  # may probe a remote server
        except ProviderError as exc:
            if exc.transient:
                return None, f"embedding failed transiently ({exc}); keyword-only"
            raise
        if stored is None or ix.meta("vec_dims") is None:
            return None, "the index has no vectors yet"
        if stored != label:
            return None, (
                f"vector search paused: the index holds vectors of {stored}, not "
                f"{label}; run `reverie index` to re-embed"
            )
        mode = self.settings.search_embed
        # the content words, not the form, of a question about someone (module doc)
        whole = mode == "question" or (mode == "auto" and q.about_user)
        words = q.bare if whole else q.content
        try:
            return self.embedder.embed_query(words or q.text), None
        except ProviderError as exc:
            if exc.transient:
                return None, f"embedding failed transiently ({exc}); keyword-only"
            raise

    def search(
        self,
        ix: IndexReader,
        query: str,
        *,
        today: date,
        max_results: int | None = None,
        active_projects: frozenset[str] = frozenset(),
        lanes: Lanes = "hybrid",
        decay: bool = True,
        budget_tokens: int | None = None,
    ) -> SearchResponse:
        """Hybrid search. ``budget_tokens``: as many hits as fit in that many tokens of
        what a model reads (rank order, no line shown twice), instead of
        ``max_results``."""
        if budget_tokens is not None and budget_tokens < 1:
            raise ReverieError(f"budget_tokens must be at least 1, got {budget_tokens}")
        with ix.reading():  # the index's settings read once for the whole search
            return self._search(
                ix, read(query, today), max_results=max_results,
                active_projects=active_projects, lanes=lanes, decay=decay,
                budget_tokens=budget_tokens,
            )  # fmt: skip

    def _search(
        self,
        ix: IndexReader,
        q: Question,
        *,
        max_results: int | None,
        active_projects: frozenset[str],
        lanes: Lanes,
        decay: bool,
        budget_tokens: int | None,
    ) -> SearchResponse:
        s = self.settings
        query, today = q.text, q.today
        k = s.search_budget_candidates if budget_tokens else s.search_candidates
        if max_results and not budget_tokens:  # a long list needs the candidates to fill it
            k = max(k, 2 * max_results)
        qvec, degraded = (
            (None, "keyword lane only (requested)")
            if lanes == "keyword"
            else self._query_vector(ix, q)
        )
        cosines = ix.vector_top(qvec, k) if qvec is not None else {}
        drop = QUERY_STOP_WORDS if s.search_stop_words else frozenset()
        bm25 = ix.keyword_top(query, k, drop) if lanes != "vector" else {}
        tiers = ix.path_chunks(query, k) if lanes == "hybrid" else {}
        keyword_only = qvec is None
        mode = (
            "keyword-only" if keyword_only else ("vector-only" if lanes == "vector" else "hybrid")
        )
        cfg = self.config(
            keyword_only=keyword_only, max_results=3 * k if budget_tokens else max_results
        )
        if q.about_user and not keyword_only:  # its meaning more than its words
            w = s.search_unnamed_vector_weight
            cfg = RankConfig(**{**cfg.__dict__, "w_vec": w, "w_text": 1.0 - w})
        if budget_tokens:  # asked to fill a budget: weaker hits may have the evidence
            cfg = RankConfig(**{**cfg.__dict__, "min_score": s.search_budget_min_score})
        if lanes == "vector":
            cfg = RankConfig(**{**cfg.__dict__, "w_vec": 1.0, "w_text": 0.0})
        if not decay:
            cfg = RankConfig(**{**cfg.__dict__, "half_life_days": 1e12})
        ids = list(cosines) + list(bm25) + list(tiers)
        cands = ix.candidates(ids, LaneScores(cosines, bm25, tiers))
        cands = [c for c in cands if not in_group_corpus(c.path)]  # no group chat: R-LANE2-2
        want = cfg.max_results
        supersedes = s.search_supersede
        every = score(cands, cfg, today=today, active_projects=active_projects, asked=q.scripts)
        every = lift_speakers(every, q.names, s.search_speaker_boost)  # the named speaker
        if q.ask.start is not None and q.ask.end is not None:  # the days it names
            every = lift_window(every, q.ask.start, q.ask.end, s.search_window_boost)
        # a newer version just past the cut may come in
        ranked = rank_scored(every, cfg, pool=SUPERSEDE_POOL if supersedes else 0)
        marks: dict[int, Version] = {}
        if supersedes and len(ranked) > 1:
            ranked, marks = versions_of(ix, ranked, q)
        links: dict[int, Link] = {}
        if supersedes and ranked:  # a link is followed, and claimed, always
            rank = lambda found: score(found, cfg, today=today, asked=q.scripts,  # noqa: E731
                                       active_projects=active_projects)  # fmt: skip
            ranked, links = chains_of(ix, ranked, q.ask, rank, qvec)
        ranked = ranked[:want]
        if budget_tokens:  # a session that keeps to the topic is read together
            bonus = s.search_session_bonus
            ranked = sessions_together(ranked, bonus, floor=s.search_min_score)
        notes: list[str] = []
        reranked: dict[int, float] = {}
        if self.reranker is not None and ranked:
            ranked, reranked = self._rerank(query, ranked, notes)
        hits = [self._hit(r, query, s.snippet_context_lines, marks, links) for r in ranked]
        for i, value in reranked.items():
            hits[i].explain["rerank"] = round(value, 4)
        if budget_tokens and s.search_context_reach:
            hits = self._with_neighbours(ix, ranked, hits, q, keep_order=bool(reranked))
        if budget_tokens:
            costs = [
                (
                    count_tokens(h.piece(under_head=False)),
                    count_tokens(h.piece(under_head=True)),
                    h.group,
                    frozenset((h.path, n) for n in h.lines),
                )
                for h in hits
            ]
            hits = [hits[i] for i in pack_grouped(costs, budget_tokens)]
        if any(s.below_min for s in ranked):
            notes.append("nothing passed the min score; showing keyword hits below it")
        return SearchResponse(query, hits, mode, None if lanes == "keyword" else degraded, notes)

    def _with_neighbours(
        self,
        ix: IndexReader,
        ranked: list[Scored],
        hits: list[Hit],
        q: Question,
        *,
        keep_order: bool = False,
    ) -> list[Hit]:
        """The hits with the entries beside each journal hit (:mod:`reverie.recall.
        neighbours`): context a budget reads too. Path-tier hits stay first; the rest
        are read by score, a neighbour's being its lift (a direct hit keeps the better
        of its own score and its lift). ``keep_order`` (a reranker ordered the hits):
        the hits stay in their order, each neighbour right after the hit it sits by."""
        s = self.settings
        journal = [r.candidate for r in ranked if r.candidate.kind in ("journal", "transcript")]
        if not journal:
            return hits
        own, speaks = context_speaker(q.names, ranked, s.search_speaker_boost)
        lifts = neighbour_scores(
            [(r.candidate.chunk_id, r.candidate.path, f) for r, f in zip(ranked, own, strict=True)],
            ix.entry_order(c.path for c in journal),
            reach=s.search_context_reach,
            share=s.search_context_share,
        )
        parents = {r.candidate.chunk_id: r.candidate for r in ranked}
        tiered: list[Hit] = []
        content: list[Hit] = []
        for r, h in zip(ranked, hits, strict=True):
            lift = lifts.get(r.candidate.chunk_id)
            if r.tier:
                tiered.append(h)
                continue
            up = lift.score * speaks(r.candidate.text) if lift is not None else 0.0
            if lift is not None and up > h.score:
                h = self._lifted(h, up, parents[lift.parent])
            content.append(h)
        fresh = [cid for cid in lifts if cid not in parents]
        extra: dict[int, list[tuple[int, Hit]]] = {}
        for c in ix.candidates(fresh, NO_SCORES):
            lift = lifts[c.chunk_id]
            hit = self._hit(Scored(c, final=0.0), q.text, s.snippet_context_lines)
            lifted = self._lifted(hit, lift.score * speaks(c.text), parents[lift.parent])
            extra.setdefault(lift.parent, []).append((lift.distance, lifted))
        if keep_order:
            after = {r.candidate.chunk_id: i for i, r in enumerate(ranked)}
            by_hit: dict[int, list[Hit]] = {}
            for parent, near in extra.items():
                by_hit[after[parent]] = [h for _, h in sorted(near, key=lambda p: p[0])]
            return [x for i, h in enumerate(hits) for x in (h, *by_hit.get(i, []))]
        content += [h for near in extra.values() for _, h in near]
        content.sort(key=lambda h: (-h.score, h.path, h.start_line))
        return tiered + content

    @staticmethod
    def _lifted(h: Hit, score: float, parent: Any) -> Hit:
        """``h`` scored as the neighbour of ``parent`` (its relevance stays its own)."""
        explain = {**h.explain, "final": round(score, 4)}
        explain["context_of"] = f"{parent.path}#L{parent.start_line}-L{parent.end_line}"
        return replace(h, score=score, explain=explain)

    def _rerank(
        self, query: str, ranked: list[Scored], notes: list[str]
    ) -> tuple[list[Scored], dict[int, float]]:
        """The top candidates in the reranker's order (fail-open: unchanged, and the
        notes say why). Returns the list and the rerank score by new position."""
        from .rerank import reorder

        assert self.reranker is not None
        top = ranked[: self.settings.rerank_top]
        result = self.reranker.rerank(query, [r.candidate.text for r in top])
        notes.append(result.note)
        if result.scores is None:
            return ranked, {}
        now = reorder(list(range(len(top))), result.scores)
        moved = [top[i] for i in now] + ranked[len(top) :]
        return moved, {pos: result.scores[i] for pos, i in enumerate(now) if i in result.scores}

    @staticmethod
    def _hit(
        s: Scored,
        query: str,
        context: int,
        marks: dict[int, Version] | None = None,
        links: dict[int, Link] | None = None,
    ) -> Hit:
        c = s.candidate
        shown = focus(c.text, c.start_line, query, context=context, max_tokens=SNIPPET_TOKENS)
        mark = (marks or {}).get(c.chunk_id)
        link = (links or {}).get(c.chunk_id)
        explain = s.explain()
        if mark is not None:
            explain["versions"] = mark.as_dict()
        if link is not None:  # the one claim search makes, and only with a link
            explain["link"] = f"replaced by {link.superseded_by} (its signed replaces: link)"
        return Hit(
            c.path,
            shown.start_line,
            shown.end_line,
            shown.text,
            s.final,
            c.origin,
            c.kind,
            explain,
            c.session_kind,
            c.day,
            c.text,
            c.start_line,
            # "earlier; changed" is a claim, and a claim needs a version link (issue 38)
            link.superseded_by if link else None,
            link.changed_on if link else None,
        )


__all__ = ["GetResult", "Hit", "SearchResponse", "Searcher", "memory_get"]
