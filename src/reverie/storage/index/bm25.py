"""An in-memory BM25 index that scores exactly as the index's FTS5 keyword lane does.
Pure code (numpy), no I/O: :mod:`reverie.storage.index.keyword` feeds it rows.

Why not FTS5 in a warm process: at 100,000 chunks one FTS5 ``MATCH ... ORDER BY
bm25`` takes 50-130 ms (it scores every row that holds a common word, through the
virtual-table interface), several times the numpy cosine lane. Postings in numpy
arrays answer the same query in a few milliseconds.

Why not ``bm25s`` (used as the speed reference in ``bench/search.py``): results must
mean what the FTS5 lane's mean, to the score: the ranking reads the BM25 magnitude
(``relative`` scaling keeps a weak best match weak, the min score depends on it),
Chinese terms are phrase queries over single characters, and the index changes a few
chunks at a time. bm25s scores with other IDF variants, has no phrases and rebuilds
to change. So this module is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, IDF
``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, phrase frequency for phrases),
over the tokens FTS5's ``unicode61 remove_diacritics 2`` tokenizer sees in the stored
keyword text, stemmed words (:func:`doc_tokens`), with the query's phrases built the way
:func:`reverie.tokens.fts_query` builds them (:func:`query_phrases`).

Layout: immutable segments of postings (term -> sorted doc numbers and term
frequencies), a liveness mask for deleted chunks, and a merge of the small segments
when they pile up: adding or removing a file's chunks costs that file, not the index.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ...tokens import keyword_phrases, keyword_tokens

K1 = 1.2  # FTS5 bm25() defaults
B = 0.75
IDF_FLOOR = 1e-6
_SEP = "\x1f"
MERGE_AT = 6  # small segments merged into one past this many


def doc_tokens(text: str) -> list[str]:
    """The tokens the FTS5 table holds for ``text`` (:func:`reverie.tokens.keyword_body`):
    lower-cased words, stemmed, every CJK letter on its own, punctuation dropped, Latin
    diacritics removed."""
    return keyword_tokens(text)


def query_phrases(query: str, drop: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """The phrases of :func:`reverie.tokens.fts_query` (OR-ed), each as its tokens
    (:func:`reverie.tokens.keyword_phrases`)."""
    return keyword_phrases(query, drop)


@dataclass(frozen=True)
class Doc:
    """One row to index: its id, a content fingerprint, the text and its sort key."""

    chunk_id: int
    fingerprint: str
    text: str
    location: tuple[str, int, int]  # (path, start_line, part): FTS5 lane tie order


class _Segment:
    """Postings of some documents: for term t, ``docs[ptr[t]:ptr[t+1]]`` and ``tf``."""

    def __init__(self, term_ids: np.ndarray, doc_nums: np.ndarray, n_terms: int) -> None:
        if len(term_ids):
            width = np.int64(int(doc_nums.max()) + 1)
            keys, tf = np.unique(term_ids.astype(np.int64) * width + doc_nums, return_counts=True)
            terms_of = keys // width
            self.docs = (keys % width).astype(np.int64)
            self.tf = tf.astype(np.float64)
        else:
            terms_of = np.zeros(0, np.int64)
            self.docs, self.tf = np.zeros(0, np.int64), np.zeros(0, np.float64)
        self.ptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(np.bincount(terms_of, minlength=n_terms), out=self.ptr[1:])

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        if term + 1 >= len(self.ptr):
            return self.docs[:0], self.tf[:0]
        a, b = self.ptr[term], self.ptr[term + 1]
        return self.docs[a:b], self.tf[a:b]

    @property
    def size(self) -> int:
        return len(self.docs)

    def triples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        terms_of = np.repeat(np.arange(len(self.ptr) - 1), np.diff(self.ptr))
        return terms_of, self.docs, self.tf


class Bm25Index:
    """Documents in, FTS5-equal BM25 scores out; ``add`` and ``remove`` by chunk id."""

    def __init__(self) -> None:
        self.vocab: defaultdict[str, int] = defaultdict()
        self.vocab.default_factory = self.vocab.__len__  # a new term gets the next id
        self._segments: list[_Segment] = []
        self._ids: list[int] = []  # doc number -> chunk id
        self._where: list[tuple[str, int, int]] = []
        self._len = np.zeros(0, np.float64)
        self._alive = np.zeros(0, bool)
        self._seqs: dict[int, str] = {}  # doc number -> token sequence (docs with non-ASCII)
        self._known: dict[int, tuple[int, str]] = {}  # chunk id -> (doc number, fingerprint)
        self._total = 0.0
        self._count = 0
        # read from a snapshot: ids, locations and fingerprints as arrays, turned into
        # the lists and the dict above only when the index changes (_unpack)
        self._packed: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return self._count

    @property
    def known(self) -> dict[int, tuple[int, str]]:
        """chunk id -> (doc number, fingerprint) of every live doc."""
        self._unpack()
        return self._known

    def _unpack(self) -> None:
        p, self._packed = self._packed, None
        if p is None:
            return
        paths = p["paths"].tolist()
        self._ids = p["ids"].tolist()
        self._where = [
            (paths[c], s, t)
            for c, s, t in zip(
                p["path_code"].tolist(), p["start"].tolist(), p["part"].tolist(), strict=True
            )
        ]
        fps = [f.decode("ascii") for f in p["known_fp"].tolist()]
        nums = p["known_num"].tolist()
        self._known = dict(zip(p["known_id"].tolist(), zip(nums, fps, strict=True), strict=True))

    def _docs(self) -> int:
        return len(self._packed["ids"]) if self._packed is not None else len(self._ids)

    def _id(self, n: int) -> int:
        return int(self._packed["ids"][n]) if self._packed is not None else self._ids[n]

    def _loc(self, n: int) -> tuple[str, int, int]:
        p = self._packed
        if p is None:
            return self._where[n]
        return (str(p["paths"][p["path_code"][n]]), int(p["start"][n]), int(p["part"][n]))

    def to_parts(self) -> tuple[dict[str, object], dict[str, np.ndarray]]:
        """What :mod:`reverie.backends.sqlite.warm_files` keeps: the small state (pickled)
        and the arrays (saved as they are, memory-mapped when read)."""
        self._unpack()
        skip = {"_segments", "_ids", "_where", "_known", "_packed", "vocab"}
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        state["vocab"] = dict(self.vocab)
        state["_segments"] = len(self._segments)
        arrays: dict[str, np.ndarray] = {}
        for i, seg in enumerate(self._segments):
            arrays |= {f"s{i}_docs": seg.docs, f"s{i}_tf": seg.tf, f"s{i}_ptr": seg.ptr}
        paths = sorted({w[0] for w in self._where})
        code = {p: i for i, p in enumerate(paths)}
        known = list(self._known.items())
        arrays |= {
            "ids": np.asarray(self._ids, np.int64),
            "paths": np.asarray(paths, dtype=str),
            "path_code": np.fromiter((code[w[0]] for w in self._where), np.int64),
            "start": np.fromiter((w[1] for w in self._where), np.int64),
            "part": np.fromiter((w[2] for w in self._where), np.int64),
            "known_id": np.fromiter((k for k, _ in known), np.int64),
            "known_num": np.fromiter((v[0] for _, v in known), np.int64),
            "known_fp": np.asarray([v[1].encode("ascii") for _, v in known], dtype=bytes),
        }
        return state, arrays

    @classmethod
    def from_parts(cls, state: dict[str, object], arrays: dict[str, np.ndarray]) -> Bm25Index:
        out = cls()
        count = state.pop("_segments")
        assert isinstance(count, int)
        vocab = state.pop("vocab")
        assert isinstance(vocab, dict)
        out.vocab.update(vocab)
        out.__dict__.update(state)
        for i in range(count):
            seg = _Segment.__new__(_Segment)
            # plain views of the mapped arrays: a memmap's subclass costs a Python call
            # per element read and per slice
            seg.docs, seg.tf, seg.ptr = (
                np.asarray(arrays[f"s{i}_{n}"]) for n in ("docs", "tf", "ptr")
            )
            out._segments.append(seg)
        names = ("ids", "paths", "path_code", "start", "part", "known_id", "known_num", "known_fp")
        out._packed = {n: np.asarray(arrays[n]) for n in names}
        return out

    def add(self, docs: Iterable[Doc]) -> None:
        """Index ``docs`` (a chunk id already present is replaced)."""
        batch = list(docs)
        self._unpack()
        self.remove(d.chunk_id for d in batch if d.chunk_id in self.known)
        if not batch:
            return
        first = len(self._ids)
        tokens = [doc_tokens(d.text) for d in batch]
        term_ids = np.fromiter(
            map(self.vocab.__getitem__, itertools.chain.from_iterable(tokens)), np.int64
        )
        lengths = np.fromiter(map(len, tokens), np.int64, count=len(batch))
        doc_nums = np.repeat(np.arange(first, first + len(batch), dtype=np.int64), lengths)
        for i, (d, toks) in enumerate(zip(batch, tokens, strict=True)):
            n = first + i
            if not d.text.isascii() and not all(t.isascii() for t in toks):
                self._seqs[n] = _SEP + _SEP.join(toks) + _SEP
            self._ids.append(d.chunk_id)
            self._where.append(d.location)
            self._known[d.chunk_id] = (n, d.fingerprint)
        self._len = np.concatenate([self._len, lengths.astype(np.float64)])
        self._alive = np.concatenate([self._alive, np.ones(len(batch), bool)])
        self._total += float(lengths.sum())
        self._count += len(batch)
        self._segments.append(_Segment(term_ids, doc_nums, len(self.vocab)))
        if len(self._segments) > MERGE_AT:
            self._merge_small()

    def remove(self, chunk_ids: Iterable[int]) -> None:
        for cid in list(chunk_ids):
            entry = self.known.pop(cid, None)
            if entry is None:
                continue
            n = entry[0]
            self._alive[n] = False
            self._total -= float(self._len[n])
            self._count -= 1
            self._seqs.pop(n, None)

    @property
    def dead_share(self) -> float:
        return 1.0 - self._count / self._docs() if self._docs() else 0.0

    def _merge_small(self) -> None:
        """Every segment but the largest into one (their postings, dead docs dropped)."""
        big = max(range(len(self._segments)), key=lambda i: self._segments[i].size)
        small = [s for i, s in enumerate(self._segments) if i != big]
        parts = [s.triples() for s in small]
        t = np.concatenate([p[0] for p in parts])
        d = np.concatenate([p[1] for p in parts])
        f = np.concatenate([p[2] for p in parts]).astype(np.int64)
        keep = self._alive[d]
        t, d = np.repeat(t[keep], f[keep]), np.repeat(d[keep], f[keep])
        self._segments = [self._segments[big], _Segment(t, d, len(self.vocab))]

    def _postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """Live docs holding ``token`` (ascending) and its frequency in each."""
        tid = self.vocab.get(token)  # .get: a query never adds terms
        if tid is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        parts = [s.postings(tid) for s in self._segments]
        if len(parts) == 1:  # (one segment: its own arrays, read only)
            docs, tf = parts[0]
        else:
            docs = np.concatenate([p[0] for p in parts])
            tf = np.concatenate([p[1] for p in parts])
        if self._count == len(self._alive):  # no doc removed: every one is live
            return docs, tf
        keep = self._alive[docs]
        return docs[keep], tf[keep]

    def _phrase(self, phrase: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        if len(phrase) == 1:
            return self._postings(phrase[0])
        docs: np.ndarray | None = None
        for tok in dict.fromkeys(phrase):
            d = self._postings(tok)[0]
            docs = d if docs is None else np.intersect1d(docs, d, assume_unique=True)
            if not len(docs):
                break
        assert docs is not None
        needle = _SEP + _SEP.join(phrase) + _SEP
        found, freq = [], []
        for n in docs.tolist():
            seq = self._seqs.get(n, "")
            count, at = 0, seq.find(needle)
            while at >= 0:  # every start position counts, overlapping ones too
                count += 1
                at = seq.find(needle, at + 1)
            if count:
                found.append(n)
                freq.append(count)
        return np.asarray(found, np.int64), np.asarray(freq, np.float64)

    def scores(self, phrases: Sequence[tuple[str, ...]]) -> tuple[np.ndarray, np.ndarray]:
        """(doc numbers, positive BM25 score) of every live doc matching a phrase."""
        if not phrases or not self._count:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        n_rows = float(self._count)
        avgdl = self._total / n_rows
        found: list[tuple[np.ndarray, np.ndarray]] = []  # (docs, their score) a phrase
        for phrase in phrases:
            docs, tf = self._phrase(phrase)
            if not len(docs):
                continue
            n_hit = float(len(docs))
            idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = IDF_FLOOR
            # the same operations in the same order as fts5Bm25Function: equal doubles
            # (idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * len / avgdl)), worked in
            # place: a product or sum of two doubles is the same either way round)
            part = self._len[docs]
            part *= B
            part /= avgdl
            part += 1 - B
            part *= K1
            part += tf
            top = tf * (K1 + 1.0)
            top *= idf
            top /= part
            found.append((docs, top))
        if len(found) < 2:  # one phrase's docs (ascending) and scores are the answer
            return found[0] if found else (np.zeros(0, np.int64), np.zeros(0, np.float64))
        acc, hit = np.zeros(self._docs()), np.zeros(self._docs(), bool)
        # each doc's phrase scores summed in phrase order from 0.0 (a score is positive:
        # 0.0 + s is s, so the first is set, not added)
        for i, (docs, top) in enumerate(found):
            if i:
                acc[docs] += top
            else:
                acc[docs] = top
            hit[docs] = True
        nums = np.nonzero(hit)[0]
        return nums, acc[nums]

    def top(self, query: str, k: int, drop: frozenset[str] = frozenset()) -> dict[int, float]:
        """chunk id -> FTS5 rank (the negated score), best first, equal scores in
        content order: what the FTS5 keyword lane returns for ``query``."""
        nums, score = self.scores(query_phrases(query, drop))
        if not len(nums) or k < 1:
            return {}
        if len(nums) > k:
            kth = np.partition(score, len(score) - k)[len(score) - k]
            keep = score >= kth
            nums, score = nums[keep], score[keep]
        order = sorted(range(len(nums)), key=lambda i: (-score[i], self._loc(int(nums[i]))))[:k]
        return {self._id(int(nums[i])): -float(score[i]) for i in order}


__all__ = ["Bm25Index", "Doc", "doc_tokens", "query_phrases"]
