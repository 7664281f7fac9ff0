"""The durable-line judge as dreaming uses it: the shipped classifier's weights, the
shipped embedder's vectors, and a cache so that a line judged by the light phase, the
gates and the entry writer is embedded once.

The weights (:mod:`reverie.durable.weights`) are fitted on the shipped embedder's
vectors, so the judge embeds with that embedder whatever the index uses: the index's
own when it is the same model, else its own instance (same snapshot folder). When the
model cannot be loaded the judge fails closed: no sentence is kept, and the reason
says so (nothing is promoted without a judgement; nothing blocks a reply either).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..durable.model import Score, scores
from ..durable.weights import examples, load_model
from . import content

if TYPE_CHECKING:
    import numpy as np

    from ..storage.embedders.base import Embedder
else:
    from ..storage.lazy import numpy as np

_CACHE_MAX = 50_000


class Unavailable(Exception):
    """The classifier or its embedder could not be loaded."""


class Judge:
    """``judge(text) -> Verdict`` with the learned scorer; sentences scored once."""

    def __init__(self, embedder: Callable[[], Embedder | None], models_dir: Path | None = None):
        self._given = embedder
        self._models_dir = models_dir
        self._embedder: Any = None
        self._cache: dict[str, Score] = {}
        self._broken: str | None = None
        self._examples: np.ndarray | None = None

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        model = load_model()
        if self._embedder is None:
            given = self._given()
            if given is not None and given.identity.label() == model.embedder:
                self._embedder = given
            else:
                from ..storage.embedders.usem3 import Usem3Embedder

                self._embedder = Usem3Embedder(cache_dir=self._models_dir)
        return self._embedder.embed_documents(list(texts))

    def score(self, texts: Sequence[str]) -> list[Score]:
        """Each sentence's score (cached); :class:`Unavailable` when the model is not."""
        if self._broken:
            raise Unavailable(self._broken)
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            try:
                vectors = self._embed(todo)
                fresh = scores(load_model(), todo, vectors)
            except Exception as exc:  # a broken model never blocks the dream
                self._broken = f"{type(exc).__name__}: {exc}"
                raise Unavailable(self._broken) from exc
            if len(self._cache) > _CACHE_MAX:
                self._cache.clear()
            self._cache.update(zip(todo, fresh, strict=True))
        return [self._cache[t] for t in texts]

    def prime(self, lines: Sequence[str]) -> None:
        """Score every sentence of ``lines`` in one batch (a dream's pool). A dream
        starts here: a model that failed on an earlier one is tried again."""
        self._broken = None
        with contextlib.suppress(Unavailable):  # each line then says why
            self.score([s for line in lines for s in content.parts(line)[1]])

    def explain(self, text: str, nearest: int = 3) -> list[dict[str, Any]]:
        """Each sentence's label and score, with the labelled lines nearest to it (by
        the embedder's cosine); empty when the classifier is unavailable."""
        verdict = self(text)
        if not verdict.sentences:
            return []
        labelled = examples()
        if self._examples is None:
            self._examples = self._embed([t for t, _ in labelled])
        sims = self._embed([s.text for s in verdict.sentences]) @ self._examples.T
        out: list[dict[str, Any]] = []
        for s, row in zip(verdict.sentences, sims, strict=True):
            near = [
                {
                    "text": labelled[i][0],
                    "label": labelled[i][1],
                    "similarity": round(float(row[i]), 3),
                }
                for i in np.argsort(-row)[:nearest]
            ]
            out.append(
                {"sentence": s.text, "label": s.kind, "keep": round(s.keep, 3), "nearest": near}
            )
        return out

    def keep(self, text: str) -> float:
        """How likely ``text`` is worth keeping: its best sentence's probability (1.0
        when the classifier is unavailable: a broken model never makes an entry leave)."""
        _speaker, parts = content.parts(text)
        try:
            return max((s.keep for s in self.score(parts)), default=1.0)
        except Unavailable:
            return 1.0

    def __call__(self, text: str) -> content.Verdict:
        try:
            return content.judge(text, self.score)
        except Unavailable as exc:
            speaker, _ = content.split_speaker(text)
            why = f"no judgement: the durable-line classifier is unavailable ({exc})"
            return content.Verdict(False, why, speaker, (), ())


__all__ = ["Judge", "Unavailable"]
