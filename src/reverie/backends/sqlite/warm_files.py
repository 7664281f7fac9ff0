"""The warm lanes' arrays kept beside the index (issue 41 point 2), so that a daemon,
an MCP server or a search process starts in about the same time at 10,000 and at
300,000 chunks instead of reading every vector and re-tokenising every chunk.

Layout, next to ``index.sqlite`` (derived like the index; deleted with it, by
``reverie index --force`` and by every forget, and rebuilt by the next warm process):

    index.warm/vectors.json          which snapshot is current (replaced atomically)
    index.warm/vectors-<token>/      ids.npy, hashes.npy, matrix.npy (memory-mapped)
    index.warm/keyword.json          which keyword snapshot is current
    index.warm/keyword-<token>/      state.pickle (small), the postings' arrays (.npy)

A snapshot names the index version it was made at and the content it holds (each
row's chunk id and text hash); whoever loads one at another version compares it with
the index and reads only the rows that changed since (never stale). A reader that has mapped an older snapshot keeps it until it lets go: files are
replaced by renaming, never rewritten in place. A snapshot that cannot be read is
ignored (the lanes load from the index as before).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3

from ...storage.workspace import warm_pointer, warm_snapshot_dir

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np  # loaded on first use


def warm_dir(conn: sqlite3.Connection) -> Path | None:
    """``<index file>.warm`` for an index on disk; None in memory."""
    with contextlib.suppress(sqlite3.Error):
        for row in conn.execute("PRAGMA database_list"):
            if row[1] == "main" and row[2]:
                return warm_snapshot_dir(Path(str(row[2])))
    return None


def hash_keys(hashes: list[str]) -> np.ndarray:
    """A text hash (hex) as an int64: its first 15 hex digits."""
    return np.fromiter((int(h[:15], 16) for h in hashes), np.int64, count=len(hashes))


LAYOUT = 1  # the files' layout: a snapshot of another layout is not read


def tag(conn: sqlite3.Connection) -> str:
    """What a snapshot must have been made from: this layout, the embedder and the
    index's generation (``reverie index --force`` starts a new one)."""
    from .db import get_meta

    return f"{LAYOUT}|{get_meta(conn, 'embedder')}|{get_meta(conn, 'generation')}"


def _pointer(folder: Path, name: str, made_from: str) -> tuple[Path, str] | None:
    """The current snapshot ``name`` made from ``made_from``, and the index version it
    holds."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        data = json.loads(warm_pointer(folder, name).read_text(encoding="utf-8"))
        target = folder / str(data["file"])
        if data["tag"] == made_from and target.parent == folder and target.exists():
            return target, str(data["version"])
    return None


def _switch(folder: Path, name: str, target: Path, meta: dict[str, Any]) -> None:
    """Point ``name`` at ``target`` (atomic), then delete the older snapshots of it."""
    tmp = warm_pointer(folder, name, temporary=str(os.getpid()))
    tmp.write_text(json.dumps({"file": target.name, **meta}), encoding="utf-8")
    os.replace(tmp, warm_pointer(folder, name))
    for old in folder.glob(f"{name}-*"):
        if old != target:
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)


def load_vectors(
    folder: Path, made_from: str, *, only_at: str | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str] | None:
    """(chunk ids, hash keys, matrix memory-mapped, index version) of the current vector
    snapshot, if it was made from ``made_from`` (:func:`tag`) and, given ``only_at``, at
    that index version; else None."""
    found = _pointer(folder, "vectors", made_from)
    if found is None or only_at not in (None, found[1]):
        return None
    target, version = found
    try:
        ids = np.load(target / "ids.npy")
        keys = np.load(target / "hashes.npy")
        matrix = np.load(target / "matrix.npy", mmap_mode="r")
    except (OSError, ValueError):
        return None
    if not (len(ids) == len(keys) == len(matrix)) or matrix.ndim != 2:
        return None
    return ids, keys, matrix, version


def save_vectors(
    folder: Path,
    made_from: str,
    version: str,
    ids: np.ndarray,
    keys: np.ndarray,
    matrix: np.ndarray,
) -> None:
    """Write a vector snapshot and make it current; failures leave the old one."""
    target = folder / f"vectors-{os.urandom(4).hex()}"
    try:
        target.mkdir(parents=True)
        np.save(target / "ids.npy", np.ascontiguousarray(ids, np.int64))
        np.save(target / "hashes.npy", np.ascontiguousarray(keys, np.int64))
        np.save(target / "matrix.npy", np.ascontiguousarray(matrix, np.float32))
        _switch(folder, "vectors", target, {"tag": made_from, "version": version})
    except OSError:
        shutil.rmtree(target, ignore_errors=True)


def load_keyword(
    folder: Path, made_from: str, *, only_at: str | None = None
) -> tuple[dict[str, Any], dict[str, np.ndarray], str] | None:
    """The keyword snapshot's small state, its arrays (memory-mapped) and the index
    version it holds (``only_at``: only a snapshot made at that version), or None. The
    state folder is the owner's (its key signs every origin marker): the pickle it holds
    is trusted."""
    found = _pointer(folder, "keyword", made_from)
    if found is None or only_at not in (None, found[1]):
        return None
    target, version = found
    try:
        with (target / "state.pickle").open("rb") as fh:
            state = pickle.load(fh)  # the state folder's own file
        arrays = {p.stem: np.load(p, mmap_mode="r") for p in target.glob("*.npy")}
    except Exception:  # a damaged snapshot is ignored, never fatal
        return None
    return (state, arrays, version) if isinstance(state, dict) else None


def save_keyword(
    folder: Path, made_from: str, version: str, state: dict[str, Any], arrays: dict[str, Any]
) -> None:
    target = folder / f"keyword-{os.urandom(4).hex()}"
    try:
        target.mkdir(parents=True)
        with (target / "state.pickle").open("wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for name, array in arrays.items():
            np.save(target / f"{name}.npy", np.ascontiguousarray(array))
        _switch(folder, "keyword", target, {"tag": made_from, "version": version})
    except OSError:
        shutil.rmtree(target, ignore_errors=True)


def drop(folder: Path | None) -> None:
    """Delete every snapshot (a forget, a forced rebuild)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = [
    "drop",
    "hash_keys",
    "load_keyword",
    "load_vectors",
    "save_keyword",
    "save_vectors",
    "tag",
    "warm_dir",
]
