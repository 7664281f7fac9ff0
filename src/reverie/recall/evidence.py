"""The evidence rows dreaming reads: one recall-store entry per candidate line.

The recall log (:mod:`.log`) writes them; dreaming's signals (:mod:`reverie.dreaming.signals`)
score them. The recall-store caps (SPEC section 8, "recall store entry") and the
deterministic concept tags live here, once. Pure code.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime

from ..provenance.origin import Origin, SessionKind
from ..stopwords import CJK_GRAMMAR, CONCEPT
from ..tokens import is_cjk

# Recall-store caps (SPEC section 8, "recall store entry").
MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16
MAX_CONCEPT_TAGS = 8
MAX_SNIPPET_CHARS = 800
MAX_TAG_CHARS = 64


@dataclass(frozen=True)
class RecallStats:
    """One promotion candidate as the recall store aggregates it.

    ``origin`` is ``None`` when the store does not know where the text came from; the
    provenance gate then rejects it (fail closed, never default to trusted).
    ``total_score`` sums the scores of every counted signal (recall, daily, grounded),
    so that relevance = total_score / signals is a mean quality.
    """

    key: str  # "path:start:end"
    path: str
    start_line: int
    end_line: int
    snippet: str
    recall_count: int
    daily_count: int
    grounded_count: int
    total_score: float
    max_score: float
    query_hashes: frozenset[str]
    recall_days: frozenset[date]
    concept_tags: tuple[str, ...]
    first_recalled: datetime
    last_recalled: datetime
    light_hits: int = 0
    rem_hits: int = 0
    origin: Origin | None = None
    session_kind: SessionKind | None = None
    observed: date | None = None
    projects: tuple[str, ...] = ()  # the line's project keys, from its signed marker

    @property
    def signal_count(self) -> int:
        """Short-term signals behind frequency and relevance: recall + daily + grounded."""
        return max(0, self.recall_count) + max(0, self.daily_count) + max(0, self.grounded_count)


# --- concept tags -------------------------------------------------------------------

_STOPWORDS = CONCEPT
_CJK_STOP_CHARS = CJK_GRAMMAR  # single Han characters that are grammar, not content
_NUMERIC = re.compile(r"^[\d._-]+$")


def _latin_candidates(term: str) -> list[str]:
    if len(term) < 3 or term in _STOPWORDS or _NUMERIC.match(term):
        return []
    return [term[:MAX_TAG_CHARS]]


def _cjk_bigrams(run: str) -> list[tuple[int, str]]:
    """(offset, bigram) pairs of a Han run, skipping bigrams that contain grammar chars."""
    chars = list(run)
    return [
        (i, chars[i] + chars[i + 1])
        for i in range(len(chars) - 1)
        if chars[i] not in _CJK_STOP_CHARS and chars[i + 1] not in _CJK_STOP_CHARS
    ]


def concept_tags(text: str, limit: int = MAX_CONCEPT_TAGS) -> tuple[str, ...]:
    """Deterministic concept tags: the most repeated content words, then text order.

    Latin words must be 3+ letters and not stop words; Chinese has no spaces, so Han
    runs give 2-character terms (a dictionary-free approximation of words): repeated
    bigrams win, and a bigram overlapping an already chosen one in the same run is
    skipped, so a run of once-seen characters yields its aligned pairs. At most
    ``limit`` (8) tags of <= 64 chars; the same text always yields the same tuple.
    """
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    spans: dict[str, list[tuple[int, int]]] = {}  # bigram -> (run index, offset)
    order = 0
    for run_index, term in enumerate(_all_terms(text)):
        if is_cjk(term[0]):
            cands = _cjk_bigrams(term)
            for offset, gram in cands:
                spans.setdefault(gram, []).append((run_index, offset))
            words = [gram for _, gram in cands]
        else:
            words = _latin_candidates(term)
        for word in words:
            counts[word] += 1
            if word not in first:
                first[word] = order
                order += 1
    ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
    taken: set[tuple[int, int]] = set()  # (run index, char offset) covered by chosen bigrams
    out: list[str] = []
    for word in ranked:
        if len(out) >= limit:
            break
        if word in spans:
            cells = {(r, o + k) for r, o in spans[word] for k in (0, 1)}
            if cells & taken:
                continue
            taken |= cells
        out.append(word)
    return tuple(out)


def _all_terms(text: str) -> list[str]:
    """Latin words (lower-cased) and Han runs in text order, repeats kept.

    Punctuation, including full-width CJK punctuation, separates terms.
    """
    out: list[str] = []
    buf: list[str] = []
    kind: str | None = None
    for ch in text:
        if ch.isalnum():
            this: str | None = "cjk" if is_cjk(ch) else "latin"
        else:
            this = None
        if this != kind and buf:
            out.append("".join(buf).lower())
            buf = []
        kind = this
        if this is not None:
            buf.append(ch)
    if buf:
        out.append("".join(buf).lower())
    return out


__all__ = [
    "MAX_CONCEPT_TAGS",
    "MAX_QUERY_HASHES",
    "MAX_RECALL_DAYS",
    "MAX_SNIPPET_CHARS",
    "MAX_TAG_CHARS",
    "RecallStats",
    "concept_tags",
]
