"""The shipped weights of the durable-line classifier and the labelled lines it may
show, read once per process from the package (``durable.npz``, fitted by
``bench/train_durable.py``; ``durable_examples.tsv``, the written sets' training rows)."""

from __future__ import annotations

import io
import json
import threading
from importlib import resources
from typing import TYPE_CHECKING

from .model import DurableModel

if TYPE_CHECKING:
    import numpy as np
else:
    from ..storage.lazy import numpy as np

_MODEL: DurableModel | None = None
_MODEL_LOCK = threading.Lock()


def load_model() -> DurableModel:
    """The shipped weights (read once per process)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            raw = resources.files(__package__).joinpath("durable.npz").read_bytes()
            with np.load(io.BytesIO(raw)) as z:
                _MODEL = DurableModel(
                    weights=z["weights"],
                    bias=z["bias"],
                    threshold=float(z["threshold"]),
                    embedder=str(z["embedder"]),
                    meta=json.loads(str(z["meta"])),
                )
        return _MODEL


def examples() -> list[tuple[str, str]]:
    """The labelled lines the weights were fitted on that may be shown (text, label)."""
    raw = resources.files(__package__).joinpath("durable_examples.tsv").read_text("utf-8")
    rows = [line.split("\t") for line in raw.splitlines()[1:] if line.strip()]
    return [(r[0], r[1]) for r in rows if len(r) >= 2]


__all__ = ["examples", "load_model"]
