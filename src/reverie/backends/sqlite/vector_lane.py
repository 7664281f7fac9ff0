"""The vector lane: top-k cosine over the index's vectors.

A warm process holds the vectors as a numpy matrix, several times faster a search. A
one-shot process maps the last snapshot when it was made at the index's very version
(:meth:`VectorLane.adopt`: nothing read from the index), else asks vec0's KNN. The
matrix comes from the last snapshot kept beside the index (:mod:`.warm_files`,
memory-mapped: start-up does not grow with the memory, and no second copy is made while
loading), checked row by row against the index: a row whose chunk is gone or holds other
text is masked out, and the chunks written since are read from vec0 into a small second
matrix. When those outgrow a quarter of the snapshot, the lane reloads everything and
writes a new one. In a warm process the mapped matrix moves into the process's own
memory after the first search (:mod:`.resident`): a product over it is faster.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import sqlean as sqlite3

from ...storage.blas import blas_threads
from . import warm_files
from .db import get_meta, index_version
from .query import VEC_K_MAX, top_by_location
from .resident import Resident

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np  # loaded on first use

_MARKS = 900
_BATCH = 4096
REBUILD_SHARE = 0.25  # new rows past this share of the snapshot: reload and save anew
REBUILD_MIN = 2000


def _stored(conn: sqlite3.Connection, ids: list[int]) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    for i in range(0, len(ids), _MARKS):
        part = ids[i : i + _MARKS]
        rows = conn.execute(
            f"SELECT rowid, embedding FROM vec_chunks WHERE rowid IN ({','.join('?' * len(part))})",
            part,
        ).fetchall()
        for r in rows:
            out[int(r[0])] = np.frombuffer(r[1], dtype=np.float32)
    return out


def _read_all(conn: sqlite3.Connection, dims: int, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Every stored vector (ids, matrix), filled batch by batch into one array."""
    ids = np.zeros(bound, np.int64)
    matrix = np.zeros((bound, dims), np.float32)
    n = 0
    cur = conn.execute("SELECT rowid, embedding FROM vec_chunks")
    while rows := cur.fetchmany(_BATCH):
        if n + len(rows) > len(ids):  # more than the chunks said: grow
            grow = max(len(rows), len(ids) // 2)
            ids = np.concatenate([ids, np.zeros(grow, np.int64)])
            matrix = np.concatenate([matrix, np.zeros((grow, dims), np.float32)])
        for r in rows:
            ids[n] = int(r[0])
            matrix[n] = np.frombuffer(r[1], dtype=np.float32)
            n += 1
    return ids[:n], matrix[:n]


class VectorLane:
    """Top-k cosine: vec0 KNN until :meth:`load`, then the matrix (module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._label: str | None = None
        self._base: np.ndarray | None = None  # the snapshot's (or a full read's) rows
        self._base_ids = np.zeros(0, np.int64)
        self._base_keys = np.zeros(0, np.int64)
        self._valid = np.zeros(0, bool)  # base rows whose chunk still holds that text
        self._masked = False  # some base row is not valid
        self._extra = np.zeros((0, 1), np.float32)  # rows written since
        self._extra_ids = np.zeros(0, np.int64)
        self._all_ids = np.zeros(0, np.int64)  # base ids (-1 when masked), then extra ids
        self._sorted = np.zeros(0, np.int64)
        self._not_at: str | None = None  # the index version no current snapshot held
        self._resident: Resident | None = None  # a mapped base moving into memory

    @property
    def warm(self) -> bool:
        return self._base is not None

    def adopt(self, conn: sqlite3.Connection) -> bool:
        """Warm from the snapshot beside the index if it was made at this very index
        version: memory-mapped, nothing read from the index, nothing written (a one-shot
        search pays a mapped product, not vec0's scan). Else False, and the lane stays
        on vec0 (bringing a snapshot up to date is :meth:`load`'s)."""
        with self._lock:
            if self._base is not None:
                return True
            version = index_version(conn)
            dims = get_meta(conn, "vec_dims")
            folder = warm_files.warm_dir(conn) if version != self._not_at else None
            snap = (
                warm_files.load_vectors(folder, warm_files.tag(conn), only_at=version)
                if folder is not None and dims is not None
                else None
            )
            if snap is None or snap[2].shape[1] != int(dims or 0):
                self._not_at = version
                return False
            self._set_base(*snap[:3])
            self._all_valid()
            self._version, self._label = version, get_meta(conn, "embedder")
            return True

    def load(self, conn: sqlite3.Connection) -> None:
        """Warm: the snapshot's matrix (checked against the index), which moves into
        the process's own memory after the first search (:mod:`.resident`)."""
        with self._lock:
            self._load(conn)
            if self._resident is None and isinstance(self._base, np.memmap):
                self._resident = Resident(self._base)

    def _load(self, conn: sqlite3.Connection) -> None:
        version = index_version(conn)
        if self._base is not None and version == self._version:
            return
        label, dims = get_meta(conn, "embedder"), get_meta(conn, "vec_dims")
        has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_chunks'").fetchone()
        if not has_table or label is None or dims is None:  # keyword-only index
            self._set_base(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 1)))
            self._apply(conn, np.zeros(0, np.int64), np.zeros(0, np.int64))
            self._version, self._label = version, label
            return
        folder = warm_files.warm_dir(conn)
        made_from = warm_files.tag(conn)
        if self._base is None or label != self._label:
            snap = warm_files.load_vectors(folder, made_from) if folder else None
            if snap is not None and snap[2].shape[1] == int(dims):
                self._set_base(*snap[:3])
                if snap[3] == version:  # made at this version: nothing changed since
                    self._all_valid()
                    self._version, self._label = version, label
                    return
            else:
                self._base = None
        rows = conn.execute("SELECT id, text_hash FROM chunks WHERE has_vector = 1").fetchall()
        ids = np.fromiter((int(r[0]) for r in rows), np.int64, count=len(rows))
        keys = warm_files.hash_keys([str(r[1]) for r in rows])
        if self._base is None:
            self._full(conn, int(dims), ids, keys, folder, made_from, version)
        self._apply(conn, ids, keys)
        if len(self._extra_ids) > max(REBUILD_MIN, REBUILD_SHARE * len(self._base_ids)):
            self._full(conn, int(dims), ids, keys, folder, made_from, version)
            self._apply(conn, ids, keys)
        self._version, self._label = version, label

    def _all_valid(self) -> None:
        """Every base row current, nothing written since."""
        assert self._base is not None
        self._valid = np.ones(len(self._base_ids), bool)
        self._extra = np.zeros((0, self._base.shape[1]), np.float32)
        self._extra_ids = np.zeros(0, np.int64)
        self._all_ids = np.asarray(self._base_ids)  # not the memmap: a plain read is faster
        self._masked = False
        self._sorted = np.argsort(self._all_ids)

    def _full(
        self,
        conn: sqlite3.Connection,
        dims: int,
        ids: np.ndarray,
        keys: np.ndarray,
        folder: Path | None,
        made_from: str,
        version: str,
    ) -> None:
        """Every vector read from vec0 as the base; saved as the snapshot."""
        got_ids, matrix = _read_all(conn, dims, len(ids))
        got_keys = np.full(len(got_ids), -1, np.int64)  # -1: no chunk says it has it
        if len(ids):
            order = np.argsort(ids)
            at = order[np.searchsorted(ids, got_ids, sorter=order).clip(0, len(ids) - 1)]
            got_keys = np.where(ids[at] == got_ids, keys[at], -1)
        self._set_base(got_ids, got_keys, matrix)
        if folder is not None and len(got_ids):
            warm_files.save_vectors(folder, made_from, version, got_ids, got_keys, matrix)

    def _set_base(self, ids: np.ndarray, keys: np.ndarray, matrix: np.ndarray) -> None:
        if self._resident is not None:  # the matrix on its way into memory is replaced
            self._resident.stop()
            self._resident = None
        self._base, self._base_ids, self._base_keys = matrix, ids, keys

    def _apply(self, conn: sqlite3.Connection, ids: np.ndarray, keys: np.ndarray) -> None:
        """Mask the base rows the index no longer holds; read the rows it holds anew."""
        assert self._base is not None
        order = np.argsort(ids)
        if len(ids):
            pos = np.searchsorted(ids, self._base_ids, sorter=order).clip(0, len(ids) - 1)
            hit = order[pos]
            valid = (ids[hit] == self._base_ids) & (keys[hit] == self._base_keys)
            fresh = np.ones(len(ids), bool)
            fresh[hit[valid]] = False
        else:
            valid, fresh = np.zeros(len(self._base_ids), bool), np.zeros(0, bool)
        new = [int(i) for i in ids[fresh]]
        stored = _stored(conn, new)
        kept = [i for i in new if i in stored]
        dims = self._base.shape[1] if self._base.ndim == 2 and len(self._base) else None
        width = dims or (len(next(iter(stored.values()))) if stored else 1)
        self._extra = (
            np.stack([stored[i] for i in kept]).astype(np.float32)
            if kept
            else np.zeros((0, width), np.float32)
        )
        self._extra_ids = np.asarray(kept, np.int64)
        self._valid = valid
        self._masked = not bool(valid.all())
        ids_now = np.concatenate([np.where(valid, self._base_ids, -1), self._extra_ids])
        self._all_ids = np.asarray(ids_now)  # (a memmap's subclass would carry over)
        self._sorted = np.argsort(self._all_ids)

    def top(self, conn: sqlite3.Connection, qvec: np.ndarray, k: int) -> dict[int, float]:
        if get_meta(conn, "vec_dims") is None:
            return {}
        if self._base is not None or self.adopt(conn):
            if index_version(conn) != self._version:
                self.load(conn)
            return top_by_location(conn, self._top_numpy(qvec, k), k)
        # KNN breaks ties by rowid: fetch past the k-th score, then cut in content order
        blob = np.asarray(qvec, np.float32).tobytes()
        fetch = min(max(1, k) * 2, VEC_K_MAX)
        while True:
            rows = conn.execute(
                "SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ?",
                (blob, fetch),
            ).fetchall()
            sims = {int(r[0]): 1.0 - float(r[1]) for r in rows}
            if len(rows) < fetch or fetch >= VEC_K_MAX or len(rows) <= k:
                break
            kth = sorted(sims.values(), reverse=True)[k - 1]
            if min(sims.values()) < kth:
                break
            fetch = min(fetch * 2, VEC_K_MAX)
        return top_by_location(conn, sims, k)

    def vectors(self, conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks (those that have one), warm or from vec0."""
        want = list(dict.fromkeys(int(i) for i in ids))
        if not want or get_meta(conn, "vec_dims") is None:
            return {}
        if self._base is None and not self.adopt(conn):
            return _stored(conn, want)
        if index_version(conn) != self._version:
            self.load(conn)
        assert self._base is not None
        pos = np.searchsorted(self._all_ids, want, sorter=self._sorted)
        out = {}
        n_base = len(self._base_ids)
        for cid, p in zip(want, pos, strict=True):
            if p < len(self._sorted) and int(self._all_ids[self._sorted[p]]) == cid:
                row = int(self._sorted[p])
                out[cid] = (
                    np.asarray(self._base[row]) if row < n_base else self._extra[row - n_base]
                )
        return out

    def _top_numpy(self, qvec: np.ndarray, k: int) -> dict[int, float]:
        """Every chunk scoring at least the k-th best (ties at the cut-off included)."""
        assert self._base is not None
        q = np.asarray(qvec, np.float32)
        moving = self._resident
        with blas_threads(1):
            parts = []
            if len(self._base_ids):
                base = moving.product(q) if moving is not None else self._base @ q
                parts.append(np.where(self._valid, base, -np.inf) if self._masked else base)
            if len(self._extra_ids):
                parts.append(self._extra @ q)
        if moving is not None and moving.finished and moving.memory is not None:
            with self._lock:  # in memory now: the mapping goes
                if self._resident is moving:
                    self._base, self._resident = moving.memory, None
        elif moving is not None:
            moving.start()  # after the first answer, not before it
        if not parts or k < 1:
            return {}
        sims = np.concatenate(parts) if len(parts) > 1 else np.asarray(parts[0])
        live = int(np.count_nonzero(np.isfinite(sims)))
        if not live:
            return {}
        k = min(k, live)
        kth = np.partition(sims, len(sims) - k)[len(sims) - k]
        idx = np.nonzero(sims >= kth)[0]
        # tolist: Python ints and floats of the same values, without a scalar per element
        return dict(zip(self._all_ids[idx].tolist(), sims[idx].tolist(), strict=True))


__all__ = ["VectorLane"]
