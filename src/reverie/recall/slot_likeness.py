"""The slot likeness of a search's hits (:mod:`reverie.recall.slots`): each hit that
names the question's owner, embedded again without the owner, against the question
without it. Zero model calls beyond the embedder; a few short texts a search, kept in
a small memo so a question asked again embeds nothing. Fails open: an embedder error
gives no likeness (supersession then groups as before)."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import ProviderError
from ..storage.embedders.base import Embedder
from ..tokens import QUERY_STOP_WORDS, is_cjk, query_terms, stem, stem_set, token_set
from .change import recalls_past
from .ranking import Scored
from .slots import Owner, OwnerLines, SlotView, masked, owner_of, owner_words
from .subject import subject_terms
from .values import differ, values

MEMO = 4096  # masked texts kept (a vector each)
KIN_SHARED = 0.1  # a name's fit gains this when its line shares a word of the slot's line
# a name's line that reads like the slot's line (both without the owner) at least this
# much fits by that, past this, when that says more than the fit: "moved to Grenoble
# last weekend" beside "used to live in Lyon" (0.32), "has a membership at Iron Works"
# (0.25), "joined Core Studio instead" (0.18)
KIN_LINE_MIN = 0.15
# a name after the title the slot's value has ("Dr. Okafor" beside "Dr. Moreau") fits
# by this much more: the title says what kind of person fills the slot
KIN_TITLED = 0.2
_TITLE_BEFORE = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof)\.?\s+$", re.I)


class SlotLikeness:
    """Reads a search's pool for the question's slot (a :class:`SlotView`); one per
    searcher, its memo of masked texts' and values' vectors shared by its searches."""

    def __init__(self, embedder: Embedder, *, content_words: bool) -> None:
        self.embedder, self.content_words = embedder, content_words
        self.memo: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()

    def __call__(
        self, query: str, pool: Sequence[Scored], more: OwnerLines | None = None
    ) -> SlotView:
        """The :class:`SlotView` of ``pool``: for each dated journal or transcript hit
        naming the owner, the cosine of the hit without the owner to ``query`` without
        it (``query``: the question without its time words); with ``more``, the owner's
        lines past the pool and how near their values are to the slot's."""
        dated = [
            s for s in pool
            if s.tier == 0 and s.candidate.day is not None
            and s.candidate.kind in ("journal", "transcript")
        ]  # fmt: skip
        subject = subject_terms(query)
        owner = owner_of(query, subject.owners, (s.candidate.text for s in dated))
        if not owner:
            return SlotView()
        named = [s for s in dated if owner.named_in(s.candidate.text)]
        if len(named) < 2 and more is None:
            return SlotView()
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
            return SlotView()
        like = {s.candidate.chunk_id: float(v @ qv) for s, v in zip(named, lv, strict=True)}
        view = SlotView(like, topical)
        if more is None or not like:
            return view
        try:
            return self._kin(view, named, owner, subject.terms, query, more)
        except ProviderError:
            return view

    def _kin(
        self,
        view: SlotView,
        named: list[Scored],
        owner: Owner,
        question: frozenset[str],
        query: str,
        more: OwnerLines,
    ) -> SlotView:
        """``view`` with the owner's lines past the pool (``more``) and, for each of
        the owner's lines stating another value of the kind the slot's best line states
        ("Dr. Okafor" beside "Dr. Moreau", "555-0198" beside "555-0141"), the likeness
        of the two values, each embedded alone."""
        seeds = [s for s in named if values(s.candidate.text, question)]
        if not seeds:
            return view
        seed = max(seeds, key=lambda s: view.likeness[s.candidate.chunk_id])
        mine = values(seed.candidate.text, question)
        seen = {s.candidate.chunk_id for s in named}
        extras = tuple(
            s for s in more(owner_words(query, owner), seen)
            if s.candidate.day is not None and s.candidate.kind in ("journal", "transcript")
            and owner.named_in(s.candidate.text)
        )  # fmt: skip
        said = masked(seed.candidate.text, owner)
        slot_words = _words(said) - question - {v for _, v in mine}
        jobs: list[tuple[int, str, tuple[str, ...], float]] = []  # id, kind, texts, gain
        lines: dict[int, str] = {}  # a name's line without the owner
        for s in (*named, *extras):
            theirs = values(s.candidate.text, question) - mine
            pairs = [(ka, a, b) for ka, a in mine for kb, b in theirs if ka == kb]
            if s is seed or not pairs or not differ(mine, values(s.candidate.text, question)):
                continue
            # a word of the slot's line besides the question's ("salaries", "Dr.") says
            # as much as a nearer fit of the name
            line = masked(s.candidate.text, owner)
            near = KIN_SHARED if slot_words & _words(line) else 0.0
            for k, a, b in pairs:
                texts = _fit_texts(said, a, _spelt(b, s.candidate.text), k)
                title = _title(a, seed.candidate.text)
                titled = KIN_TITLED if title and title == _title(b, s.candidate.text) else 0.0
                jobs.append((s.candidate.chunk_id, k, texts, (near + titled) * (k == "name")))
            if any(k == "name" for k, _, _ in pairs):
                lines[s.candidate.chunk_id] = line
        # every text of every fit and every name's line embedded in one call (the memo
        # keeps them)
        fits = [t for *_, texts, _ in jobs for t in texts]
        self._vectors([*fits, *([said, *lines.values()] if lines else [])], query=False)
        kin: dict[int, tuple[float, str]] = {}
        for cid, k, texts, gain in jobs:
            fit = self._fit(texts) + gain
            if k == "name":  # or as near as its whole line reads to the slot's line
                mine_v, theirs_v = self._vectors([said, lines[cid]], query=False)
                fit = max(fit, float(mine_v @ theirs_v) - KIN_LINE_MIN)
            kin[cid] = max(kin.get(cid, (-2.0, k)), (fit, k))
        past = any(
            s is not seed
            and recalls_past(s.candidate.text)
            and bool(values(s.candidate.text, question) & mine)
            for s in (*named, *extras)
        )
        return SlotView(view.likeness, view.topical, kin, extras, seed.candidate.chunk_id, past)

    def _fit(self, texts: tuple[str, ...]) -> float:
        """How well a value fills the slot (:func:`_fit_texts`): the likeness of the two
        values, or the gain of the slot's line with the name put in over the line with
        no name; -1 when the name could not be put in."""
        if not texts:
            return -1.0
        vs = self._vectors(list(texts), query=False)
        return float(vs[0] @ vs[1]) - (float(vs[0] @ vs[2]) if len(vs) == 3 else 0.0)

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


def _spelt(value: str, text: str) -> str:
    """``value`` (lowercased by :func:`.values.values`) as ``text`` spells it."""
    m = re.search(re.escape(value), text, flags=re.I)
    return m.group(0) if m else value


def _title(value: str, text: str) -> str:
    """The title ``text`` puts before ``value`` ("dr" of "Dr. Okafor"), or ""."""
    m = re.search(rf"\b{re.escape(value)}\b", text, flags=re.I)
    t = _TITLE_BEFORE.search(text[: m.start()]) if m else None
    return t.group(1).lower() if t else ""


def _words(text: str) -> frozenset[str]:
    """The content words of ``text`` as stems (no stop words) and its Chinese pairs."""
    return frozenset(
        stem(t) for t in token_set(text)
        if t not in QUERY_STOP_WORDS and (len(t) == 2 or not is_cjk(t[0]))
    )  # fmt: skip


def _fit_texts(said: str, mine: str, theirs: str, kind: str) -> tuple[str, ...]:
    """What to embed to read how well ``theirs`` fills the slot ``mine`` fills in
    ``said`` (the slot's best line without its owner). Names of every kind look alike
    alone, so a name is put in the line in place of the slot's value: the line, the
    line with the name in ("lives in Bristol" beside "lives in Leeds" gains; "lives in
    Chloe" loses) and the line with no name there at all; none when the value is not
    in the line to be replaced. Numbers and addresses are compared alone: those of one
    slot share their shape ("555-0141", "555-0198")."""
    if kind != "name":
        return mine, theirs.lower()
    put = re.sub(re.escape(mine), lambda _m: theirs, said, flags=re.I)
    if put == said:
        return ()
    return said, put, re.sub(re.escape(mine), " ", said, flags=re.I)
