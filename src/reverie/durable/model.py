"""Fact, preference or chatter: a small learned classifier over the shipped embedder's
vectors (issue 39, R-DREAM-Q1).

Each sentence of a line is scored on its own: its vector from the shipped embedder
(USE multilingual v3, 512 dimensions), and three features of its shape (it ends as a
question, its length, it holds a digit), multiplied by one weight matrix into the
probabilities of three labels. A sentence is kept when the probability of ``fact`` or
``pref`` reaches the model's threshold, chosen on a development split for precision.

The weights were fitted by ``bench/train_durable.py`` on labelled sentences committed
in ``bench/data/durable/`` (LoCoMo and LongMemEval turns, Chinese chat, coding-agent
sessions, personal notes; train/dev/test split before fitting) and ship with the
package (:mod:`reverie.durable.weights`). Pure: the model and the vectors in, the
scores out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:
    from ..storage.lazy import numpy as np

LABELS = ("fact", "pref", "chatter")


@dataclass(frozen=True)
class DurableModel:
    """The fitted classifier: ``weights`` (features x labels), ``bias`` (labels)."""

    weights: np.ndarray
    bias: np.ndarray
    threshold: float  # keep when p(fact) + p(pref) >= threshold
    embedder: str  # the identity label the vectors must come from
    meta: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Score:
    """One sentence's verdict: the likeliest label, and the probability it is kept."""

    label: str
    keep: float
    probabilities: tuple[float, ...]


def shape(text: str) -> list[float]:
    """Three features of a sentence's shape, read from punctuation and characters only
    (no word of any language): it ends as a question, its length, it holds a digit."""
    t = text.rstrip(" \"'”’)")
    question = 1.0 if t.endswith(("?", "？")) else 0.0
    return [question, math.log1p(len(text)) / 5.0, 1.0 if _digit(t) else 0.0]


_ASCII_DIGIT = re.compile(r"[0-9]")


def _digit(text: str) -> bool:
    """Whether ``text`` holds a character ``str.isdigit`` says is one (a search reads
    24 lines a question: a scan in C, Python's loop only for what is not ASCII)."""
    if _ASCII_DIGIT.search(text):
        return True
    return not text.isascii() and any(map(str.isdigit, text))


def features(texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """The feature matrix: each vector, then its sentence's shape."""
    extra = np.array([shape(t) for t in texts], dtype=np.float32).reshape(len(texts), 3)
    return np.hstack([np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1), extra])


def probabilities(model: DurableModel, x: np.ndarray) -> np.ndarray:
    """Softmax over the labels, one row per feature row."""
    z = x @ model.weights + model.bias
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def keep(model: DurableModel, texts: Sequence[str], vectors: np.ndarray) -> list[float]:
    """The probability that each text is worth keeping (``fact`` + ``pref``)."""
    if not texts:
        return []
    p = probabilities(model, features(texts, vectors))
    return [float(row[0] + row[1]) for row in p]


def scores(model: DurableModel, texts: Sequence[str], vectors: np.ndarray) -> list[Score]:
    """Each sentence's score; a sentence below the threshold is ``chatter``."""
    if not texts:
        return []
    p = probabilities(model, features(texts, vectors))
    out: list[Score] = []
    for row in p:
        keep = float(row[0] + row[1])
        label = LABELS[0] if row[0] >= row[1] else LABELS[1]
        out.append(
            Score(label if keep >= model.threshold else "chatter", keep, tuple(map(float, row)))
        )
    return out


__all__ = [
    "LABELS",
    "DurableModel",
    "Score",
    "features",
    "keep",
    "probabilities",
    "scores",
    "shape",
]
