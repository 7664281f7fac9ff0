"""The slot likeness of a search's hits (:mod:`reverie.recall.slots`): each hit that
names the question's owner, embedded again without the owner, against the question
without it. Zero model calls beyond the embedder; a few short texts a search, kept in
a small memo so a question asked again embeds nothing. Fails open: an embedder error
gives no likeness (supersession then groups as before)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import ProviderError
from ..storage.embedders.base import Embedder
from ..tokens import QUERY_STOP_WORDS, query_terms, stem_set
from .ranking import Scored
from .slots import masked, owner_of
from .supersede import subject_terms

MEMO = 4096  # masked texts kept (a vector each)


class SlotLikeness:
    def __init__(self, embedder: Embedder, *, content_words: bool) -> None:
        self.embedder, self.content_words = embedder, content_words
        self.memo: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()

    def __call__(
        self, query: str, pool: Sequence[Scored]
    ) -> tuple[dict[int, float], frozenset[int]]:
        """chunk id -> cosine of the hit without the owner to ``query`` without it,
        for each dated journal or transcript hit naming the owner (``query``: the
        question without its time words)."""
        dated = [
            s for s in pool
            if s.tier == 0 and s.candidate.day is not None
            and s.candidate.kind in ("journal", "transcript")
        ]  # fmt: skip
        subject = subject_terms(query)
        owner = owner_of(query, subject.owners, (s.candidate.text for s in dated))
        if not owner:
            return {}, frozenset()
        named = [s for s in dated if owner.named_in(s.candidate.text)]
        if len(named) < 2:
            return {}, frozenset()
        about = {t for t in subject.terms if not owner.holds(t)}
        topical = frozenset(
            s.candidate.chunk_id for s in named if about & stem_set(s.candidate.text)
        )
        q = masked(query, owner)
        if self.content_words:
            q = " ".join(query_terms(q, QUERY_STOP_WORDS)) or q
        try:
            qv = self._vectors([q], query=True)[0]
            lv = self._vectors([masked(s.candidate.text, owner) for s in named], query=False)
        except ProviderError:
            return {}, frozenset()
        like = {s.candidate.chunk_id: float(v @ qv) for s, v in zip(named, lv, strict=True)}
        return like, topical

    def _vectors(self, texts: list[str], *, query: bool) -> list[np.ndarray]:
        todo = [t for t in dict.fromkeys(texts) if (query, t) not in self.memo]
        if todo:
            got = (
                [self.embedder.embed_query(todo[0])]
                if query
                else list(self.embedder.embed_documents(todo))
            )
            for t, v in zip(todo, got, strict=True):
                u = np.asarray(v, dtype=np.float64)
                n = float(np.linalg.norm(u))
                self.memo[(query, t)] = u / n if n else u
        while len(self.memo) > MEMO:
            self.memo.popitem(last=False)
        return [self.memo[(query, t)] for t in texts]
