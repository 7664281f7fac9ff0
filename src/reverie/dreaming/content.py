"""What a line says (R-DREAM-Q1): its durable sentences only, judged by a learned scorer.

A line is cut into sentences (media markup out, the speaker kept apart) and each
sentence is scored on its own by a :data:`Scorer`: the classifier of
:mod:`reverie.durable.model` over the shipped embedder's vectors (wired by
:mod:`reverie.dreaming.judge`). A sentence is a ``fact``, a ``pref`` (a preference,
habit or instruction) or ``chatter`` (a question, a greeting, a reaction, a feeling of
the moment, advice, a fragment). A line passes when at least one sentence is kept, and
its promoted text is those sentences only, with the speaker in front ("Caroline: ...").

Every verdict names its labels and scores, so "why was this not promoted?" has a plain
answer. Pure: the text and a scorer in, a verdict out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..durable.model import Score

Scorer = Callable[[Sequence[str]], Sequence[Score]]

_MEDIA = re.compile(
    r"!\[[^\]]*\]\([^)]*\)"  # ![alt](url)
    r"|<img\b[^>]*>"
    r"|\[(?:shares?|shared|sends?|sent|posts?|posted|attach(?:es|ed)?)\s+(?:a|an|the)?\s*"
    r"(?:photo|picture|image|pic|video|gif|sticker|file)[^\]]*\]"
    r"|\[(?:image|photo|picture|video|sticker|图片|照片|视频|表情)(?:[:：][^\]]*)?\]",
    re.IGNORECASE,
)
_SPEAKER = re.compile(
    r"^(?P<who>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}|[\u4e00-\u9fff]{1,4})[:：]\s+"
)
_SENTENCE = re.compile(r"[^.!?。！？…]+(?:[.!?。！？…]+[\"'”’)]*|$)")


@dataclass(frozen=True)
class Sentence:
    """One sentence, its label (``fact``, ``pref`` or ``chatter``) and why."""

    text: str
    kind: str
    rule: str
    keep: float = 0.0  # the scorer's probability that it is worth keeping


@dataclass(frozen=True)
class Verdict:
    """The judgement of one line: durable or not, why, and its kept sentences."""

    durable: bool
    reason: str
    speaker: str | None
    statements: tuple[str, ...]
    sentences: tuple[Sentence, ...]

    @property
    def text(self) -> str:
        """The promoted text: the speaker, then the kept sentences only."""
        body = " ".join(self.statements)
        return f"{self.speaker}: {body}" if self.speaker else body


def strip_media(text: str) -> str:
    """Media markup ([shares a photo: ...], ![alt](url), <img>) removed."""
    return " ".join(_MEDIA.sub(" ", text).split())


def split_speaker(text: str) -> tuple[str | None, str]:
    m = _SPEAKER.match(text)
    if not m:
        return None, text
    return m.group("who"), text[m.end() :]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def parts(text: str) -> tuple[str | None, list[str]]:
    """A line's speaker and its sentences, media markup out (what :func:`judge` scores)."""
    speaker, body = split_speaker(strip_media(text))
    return speaker, sentences(body)


def judge(text: str, scorer: Scorer) -> Verdict:
    """The verdict on one (cleaned) line, each sentence scored by ``scorer``."""
    speaker, parts_ = parts(text)
    scored = list(scorer(parts_)) if parts_ else []
    judged = tuple(
        Sentence(s, sc.label, f"{sc.label} (kept {sc.keep:.2f})", sc.keep)
        for s, sc in zip(parts_, scored, strict=True)
    )
    kept = tuple(j.text for j in judged if j.kind != "chatter")
    if kept:
        left = sum(j.kind == "chatter" for j in judged)
        kinds = Counter(j.kind for j in judged if j.kind != "chatter")
        why = "durable: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        return Verdict(
            True, why + (f" ({left} chatter left out)" if left else ""), speaker, kept, judged
        )
    best = max((sc.keep for sc in scored), default=0.0)
    why = f"no durable sentence (best {best:.2f})" if judged else "no durable sentence: empty"
    return Verdict(False, why, speaker, (), judged)


class Judge(Protocol):
    """A line in, its verdict out (:class:`reverie.dreaming.judge.Judge`); ``prime``
    scores a pool of lines in one batch before they are judged one by one."""

    def __call__(self, text: str) -> Verdict: ...

    def prime(self, lines: Sequence[str]) -> None: ...

    def explain(self, text: str) -> list[dict[str, Any]]:
        """Each sentence's label and score, and what the judgement rests on."""
        ...

    def keep(self, text: str) -> float:
        """How likely ``text`` is worth keeping (1.0 when no judgement was made)."""
        ...


__all__ = [
    "Judge",
    "Scorer",
    "Sentence",
    "Verdict",
    "judge",
    "parts",
    "sentences",
    "split_speaker",
    "strip_media",
]
