"""Sync: the indexing pipeline's steps 0-1 and 6-8 (hash-driven, incremental).

- A file whose size and mtime are unchanged is skipped without reading; a changed one
  is hashed, and an equal hash only refreshes its registry row.
- Each file commits in one transaction: its chunks, FTS rows, vectors, ranking notes,
  provenance and registry hash together. A kill -9 leaves every file either fully old
  or fully new; the next run resumes with the files not yet done.
- ``force`` bumps a generation counter instead of wiping the index, so an interrupted
  rebuild resumes where it stopped.
- The index is marked dirty when a sync starts and clean only when it completes, and
  only if no writer marked it dirty meanwhile: an interrupted sync (exception, kill -9)
  leaves it dirty, so the next start-up sync runs.
- Embedding failures never fail the sync: chunks are indexed keyword-only and their
  vectors are filled in by a later sync.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from ...errors import ProviderError
from .. import reader
from ..chunking import CHUNKING_VERSION, Chunk
from ..document import FileWarning, by_entry, chunk_document, decode
from ..embedders.base import Embedder
from ..embedders.pipeline import EmbeddingPipeline
from ..tombstones import Tombstones
from ..walk import FileEntry
from ..workspace import Workspace
from . import owner
from .backfill import backfill
from .port import IndexPort
from .rows import SourceRow

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use

TOKENIZER = "unicode61+cjk-unigram"
GROUP_FILES = 64
EMBED_SLICE = 512  # chunks whose vectors are held at once
Progress = Callable[[int, int, str], None]
T = TypeVar("T")
Vec: TypeAlias = "np.ndarray | None"


@dataclass
class SyncStats:
    """What one sync did: files changed, chunks written, embeddings computed, warnings."""

    files_scanned: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: int = 0
    chunks_written: int = 0
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embeddings_failed: int = 0
    vectors_missing: int = 0
    keyword_only: bool = False
    rebuilt_schema: bool = False
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Prepared:
    entry: FileEntry
    digest: str
    chunks: list[Chunk]
    day: str | None
    kind: str


def _digest(key: bytes) -> str:
    """Which signing key the index was built with (a restored key re-reads every file)."""
    return hashlib.sha256(b"origin-key\0" + key).hexdigest()[:16]


def chunking_version(settings: Any) -> str:
    """The index's ``chunking_version`` meta: a change of policy re-chunks every file."""
    return f"{CHUNKING_VERSION}/journals-by-{settings.journal_chunking}"


def _groups(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Syncer:
    """One sync of the index with the files: diff by hash, one transaction per file."""

    def __init__(
        self,
        index: IndexPort,
        workspace: Workspace,
        settings: Any,
        embedder: Embedder | None,
        *,
        now: Callable[[], datetime],
    ) -> None:
        self.ix: IndexPort = index
        self.ws = workspace
        self.settings = settings
        self.embedder = embedder
        self.now = now
        self.cache = index.cache
        self.pipeline: EmbeddingPipeline | None = None
        self.breaker_open = False  # once open, the rest of this sync is keyword-only
        self.embedder_error: str | None = None  # an unusable provider, reported (R-RECALL-4)
        self.key = b""
        if embedder is not None:
            self.pipeline = EmbeddingPipeline(
                embedder,
                self.cache,
                batch_tokens=settings.embed_batch_tokens,
                attempts=settings.embed_attempts,
                backoff_min=settings.embed_backoff_min,
                backoff_max=settings.embed_backoff_max,
                breaker_failures=settings.embed_breaker_failures,
            )

    # -- the run ------------------------------------------------------------------
    def run(self, *, force: bool = False, progress: Progress | None = None) -> SyncStats:
        t0 = time.perf_counter()
        stats = SyncStats()
        ix = self.ix
        stats.rebuilt_schema = ix.ensure_schema()
        owner.check(ix, self.settings, self.ws.root, force=force)
        with ix.transaction():  # dirty until this sync completes (kill -9 included)
            seq = ix.dirty_seq()
            ix.set_meta("dirty", 1)
        self.key = self.ws.origin_key()  # once per run (created here if it was lost)
        self.forgotten = Tombstones(self.ws.tombstones_path)  # a re-imported export stays out
        if (note := self.ws.key_warning()) is not None:
            self._warn(stats, note)
        key_changed = ix.meta("key_fingerprint") not in (None, _digest(self.key))
        generation = self._generation(force or stats.rebuilt_schema or key_changed)
        self._check_identity(stats)
        registry = ix.sources()
        todo: list[FileEntry] = []
        seen: set[str] = set()
        for item in self.ws.walk():
            if isinstance(item, FileWarning):
                self._warn(stats, item)
                continue
            stats.files_scanned += 1
            seen.add(item.relpath)
            reg = registry.get(item.relpath)
            if reg and reg[3] == generation and reg[1] == item.size and reg[2] == item.mtime_ns:
                stats.files_unchanged += 1
            else:
                todo.append(item)
        for path in sorted(set(registry) - seen):
            self._delete(path)
            stats.files_deleted += 1
            stats.changed_paths.append(path)
        done = 0
        for group in _groups(todo, GROUP_FILES):
            # bounded memory (issue 22.12): small files are embedded together, a file
            # with many chunks is written keyword-only, its vectors backfilled 256 at a time
            pending: list[_Prepared] = []
            for e in group:
                if (p := self._prepare(e, registry, generation, stats)) is None:
                    continue
                if len(p.chunks) > EMBED_SLICE:  # vectors filled in below (_backfill)
                    self._write_file(p, repeat(None, len(p.chunks)), generation, stats)
                    continue
                pending.append(p)
                if sum(len(q.chunks) for q in pending) > EMBED_SLICE:
                    self._write_group(pending, generation, stats)
                    pending = []
            self._write_group(pending, generation, stats)
            done += len(group)
            if progress:
                progress(done, len(todo), group[-1].relpath)
        self._backfill(stats)
        stats.vectors_missing = self.ix.missing_vectors()
        changed = bool(stats.files_changed or stats.files_deleted or stats.rebuilt_schema)
        stats.keyword_only = self.embedder is None or stats.vectors_missing > 0
        with ix.transaction():
            ix.set_meta("last_sync", self.now().isoformat(timespec="seconds"))
            if ix.dirty_seq() == seq:  # nobody marked it dirty meanwhile
                ix.set_meta("dirty", 0)
            ix.set_meta("chunking_version", self._chunking_version)
            ix.set_meta("embedder_error", self.embedder_error or "")
            ix.set_meta("key_fingerprint", _digest(self.key))
            owner.record(ix, self.settings, self.ws.root)
            ix.set_meta("tokenizer", TOKENIZER)
            if changed or stats.embeddings_computed or stats.embeddings_cached:
                ix.set_meta("index_version", int(ix.meta("index_version", "0") or 0) + 1)
        self.cache.trim()
        stats.seconds = round(time.perf_counter() - t0, 3)
        return stats

    # -- steps --------------------------------------------------------------------
    def _generation(self, bump: bool) -> int:
        current = int(self.ix.meta("generation", "0") or 0)
        stored = self.ix.meta("chunking_version")
        stale_chunking = stored not in (None, self._chunking_version)
        if bump or stale_chunking or current == 0:
            current += 1
            with self.ix.transaction():
                self.ix.set_meta("generation", current)
        return current

    @property
    def _chunking_version(self) -> str:
        return chunking_version(self.settings)

    def _check_identity(self, stats: SyncStats) -> None:
        """A changed embedder never mixes vectors of two models: the vector table is
        recreated and every chunk is re-embedded (from the cache where possible). An
        embedder that cannot tell its identity (a remote probe failed) makes this sync
        keyword-only, with a warning: the keyword index is always committed."""
        if self.embedder is None:
            return
        try:
            ident = self.embedder.identity  # may probe a remote server
        except ProviderError as exc:
            self._embedder_failed(stats, exc)
            return
        if self.ix.meta("embedder") != ident.label() or not self.ix.has_vectors():
            with self.ix.transaction():
                self.ix.create_vectors(ident.dims)
                self.ix.set_meta("embedder", ident.label())

    def _warn(self, stats: SyncStats, warning: FileWarning | str) -> None:
        stats.warnings.append(str(warning))

    def _embedder_failed(self, stats: SyncStats, exc: ProviderError) -> None:
        self.breaker_open = True
        if self.embedder_error is None:
            self.embedder_error = str(exc)
            self._warn(
                stats,
                f"embedder unusable ({exc}); indexed keyword-only, "
                "vectors are filled in by a later sync",
            )

    def _prepare(
        self,
        entry: FileEntry,
        registry: dict[str, tuple[Any, ...]],
        generation: int,
        stats: SyncStats,
    ) -> _Prepared | None:
        rel = entry.relpath
        if entry.size > self.settings.max_file_bytes:
            self._warn(
                stats,
                FileWarning(
                    rel,
                    None,
                    f"{entry.size} bytes is over max_file_bytes "
                    f"({self.settings.max_file_bytes}); skipped",
                ),
            )
            stats.files_skipped += 1
            return None
        try:
            data = reader.read(entry.path, self.ws.root, limit=self.settings.max_file_bytes).data
        except reader.Refused as exc:  # swapped for a FIFO, a link out, grown since the walk
            self._warn(stats, FileWarning(rel, None, f"{exc}; skipped"))
            stats.files_skipped += 1
            return None
        except FileNotFoundError:
            self._warn(stats, FileWarning(rel, None, "deleted during sync"))
            if rel in registry:
                self._delete(rel)
                stats.files_deleted += 1
            return None
        except OSError as exc:
            self._warn(stats, FileWarning(rel, None, f"cannot read: {exc.strerror}"))
            stats.files_skipped += 1
            return None
        digest = hashlib.sha256(data).hexdigest()
        reg = registry.get(rel)
        if reg and reg[0] == digest and reg[3] == generation:
            with self.ix.transaction():
                self.ix.touch_source(rel, size=entry.size, mtime_ns=entry.mtime_ns)
            stats.files_unchanged += 1
            return None
        decoded = decode(rel, data)
        if decoded.binary:  # its old rows are not the file any more: drop them
            self._warn(
                stats, FileWarning(rel, None, "binary file (NUL bytes, no text line); skipped")
            )
            if rel in registry:
                self._delete(rel)
                stats.files_deleted += 1
                stats.changed_paths.append(rel)
            stats.files_skipped += 1
            return None
        for w in decoded.warnings:
            self._warn(stats, w)
        text = decoded.text
        pclass = self.ws.classify(rel, entry.real)
        if not text.strip():
            self._warn(stats, FileWarning(rel, None, "empty file"))
        chunks, warnings = chunk_document(
            rel,
            self.forgotten.blank(text.lstrip("\ufeff")),
            pclass,
            key=self.key,
            budget=self.settings.chunk_tokens,
            overlap=self.settings.chunk_overlap,
            by_entry=by_entry(pclass.kind, self.settings.journal_chunking),
            damaged=decoded.damaged,
        )
        for w in warnings:
            self._warn(stats, w)
        day = pclass.day.isoformat() if pclass.day else None
        return _Prepared(entry, digest, chunks, day, pclass.kind.value)

    def _embed(self, texts: list[str], stats: SyncStats) -> list[np.ndarray | None]:
        if self.pipeline is None or self.breaker_open or not texts:
            return [None] * len(texts)
        outcome = self.pipeline.embed_documents(texts)
        self.breaker_open = self.breaker_open or outcome.breaker_open
        stats.embeddings_computed += outcome.computed
        stats.embeddings_cached += outcome.cached
        stats.embeddings_failed += outcome.failed
        for err in outcome.errors[:3]:
            self._warn(stats, f"embedding: {err}")
        if outcome.fatal is not None:
            self._embedder_failed(stats, outcome.fatal)
        return list(outcome.vectors)

    def _write_group(self, group: list[_Prepared], generation: int, stats: SyncStats) -> None:
        vectors = self._embed([c.text for p in group for c in p.chunks], stats)
        offset = 0
        for p in group:
            n = len(p.chunks)
            self._write_file(p, vectors[offset : offset + n], generation, stats)
            offset += n

    def _write_file(
        self, p: _Prepared, vecs: Iterable[Vec], generation: int, stats: SyncStats
    ) -> None:
        self._write(p, vecs, generation)
        stats.files_changed += 1
        stats.chunks_written += len(p.chunks)
        stats.changed_paths.append(p.entry.relpath)

    def _delete(self, path: str) -> None:
        with self.ix.transaction():
            self.ix.delete_file(path)

    def _write(self, p: _Prepared, vectors: Iterable[np.ndarray | None], generation: int) -> None:
        with self.ix.transaction():
            self.ix.write_file(
                SourceRow(
                    p.entry.relpath,
                    p.kind,
                    p.day,
                    p.digest,
                    p.entry.size,
                    p.entry.mtime_ns,
                    generation,
                    self.now().isoformat(timespec="seconds"),
                ),
                p.chunks,
                vectors,
            )

    def _backfill(self, stats: SyncStats) -> None:
        if self.pipeline is not None:
            backfill(self.ix, lambda texts: self._embed(texts, stats), lambda: self.breaker_open)


__all__ = ["TOKENIZER", "SyncStats", "Syncer", "chunking_version"]
