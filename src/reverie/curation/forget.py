"""``reverie forget``: deletion that really deletes, and stays deleted.

One forget, in this order (each step safe to repeat, so a killed forget is finished by
running it again):

1. plan: every line the selector names (:mod:`.select`), widened to every line of the
   same content in any indexed file (journals, the session corpus, imports, notes,
   MEMORY.md, USER.md; AGENTS.md, the owner's instructions, is never touched);
2. tombstones first (:mod:`reverie.storage.tombstones`): from this moment a journal
   append, an ingestion, an index sync and a dream all refuse the text;
3. the files: curated roots through :class:`~reverie.dreaming.safe_write.MemoryFile`
   (hash re-check, atomic exchange, pre-image), the others under their writer's lock
   with a re-read; a file a person edits meanwhile is re-planned, never overwritten;
4. the recall log's signals for those lines, then the index (a sync) and the cached
   vectors of the old chunks;
5. ``purge_history``: the lines also go from MEMORY.md/USER.md pre-images, DREAMS.md
   and the dream phase reports;
6. one DREAMS.md entry naming the files and counts, never the text.

``dry_run`` does 1 and reports what 2-6 would do; it writes nothing at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..dreaming.safe_write import MemoryFile, sha
from ..errors import ParseError, ReverieError
from ..provenance.paths import CURATED_FILES, SourceKind
from ..recall.log import RecallLog
from ..storage.document import parse_lines
from ..storage.embedders.base import text_hash
from ..storage.files import atomic_write
from ..storage.index import store
from ..storage.index.db import Connection
from ..storage.locks import held
from ..storage.reader import undecodable
from ..storage.tombstones import Tombstones, contains, tokens
from ..storage.workspace import FileEntry, Workspace, link_class
from .select import Selector

SKIPPED_KINDS = frozenset({SourceKind.INSTRUCTIONS, SourceKind.REVIEW, SourceKind.STATE})


@dataclass
class ForgetReport:
    """What a forget removed (or, dry run, would remove)."""

    selector: str
    dry_run: bool
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    recall_signals: list[str] = field(default_factory=list)
    tombstones: int = 0
    history: dict[str, int] = field(default_factory=dict)
    history_kept: list[str] = field(default_factory=list)
    cached_vectors: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def removed(self) -> int:
        return sum(len(v) for v in self.files.values())

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "removed_lines": self.removed}


@dataclass(frozen=True)
class ForgetPorts:
    """What a forget needs from the engine (never the facade itself)."""

    workspace: Workspace
    preimages_kept: int
    now: Callable[[], datetime]
    recall_log: Callable[[], RecallLog | None]  # None: there is none (dry run: not created)
    conn: Callable[[], Connection]
    reindex: Callable[[], object]


class Forgetter:
    """Plans and carries out forgets over one workspace."""

    def __init__(self, ports: ForgetPorts) -> None:
        self.p = ports
        self.ws = ports.workspace

    # -- planning ------------------------------------------------------------------------
    def _files(self) -> list[FileEntry]:
        return [
            e
            for e in self.ws.walk()
            if isinstance(e, FileEntry) and link_class(e.relpath, e.real).kind not in SKIPPED_KINDS
        ]

    def _direct(self, sel: Selector, files: list[FileEntry]) -> set[tuple[str, ...]]:
        """The contents (token tuples) of the lines the selector names itself."""
        found: set[tuple[str, ...]] = set()
        key = self.ws.origin_key()
        for e in files:
            pclass = link_class(e.relpath, e.real)
            text = _read(e.path)
            parsed, _ = parse_lines(e.relpath, text, pclass, key=key if pclass.markers else None)
            raw = text.split("\n")
            for line in parsed:
                r = raw[line.number - 1]
                if sel.direct(e.relpath, line.number, r, pclass.kind.value, line.origin.value):
                    found.add(tokens(r))
        return found

    def _matcher(self, sel: Selector, files: list[FileEntry], stones: Tombstones) -> _Match:
        return _Match(self._direct(sel, files), tokens(sel.text) if sel.text else None, stones)

    # -- the forget ----------------------------------------------------------------------
    def forget(
        self,
        sel: Selector,
        *,
        dry_run: bool = False,
        purge_history: bool = False,
        by: str = "owner at the CLI",
        phrase_stone: bool = True,
        edit: Callable[[str, str], str | None] | None = None,
    ) -> ForgetReport:
        """``phrase_stone``: also block any future line holding TEXT (off for a
        correction, whose new text may well contain the old words). ``edit`` (a
        correction): ``(relpath, raw) -> new raw`` replaces a selected line instead of
        removing it (None removes it); each hit then shows its ``new`` line."""
        self.ws.require()
        report = ForgetReport(sel.describe(), dry_run)
        wait, busy = 600, "a dream is running; forget again when it is done"
        lock = (
            contextlib.nullcontext() if dry_run else held(self.ws.dream_lock, wait=wait, busy=busy)
        )
        with lock:
            files = self._files()
            stones = Tombstones(self.ws.tombstones_path)
            match = self._matcher(sel, files, stones)
            removals: dict[str, list[str]] = {}
            for e in files:
                hits: list[dict[str, Any]] = [
                    {"line": n, "text": raw}
                    for n, raw in enumerate(_read(e.path).split("\n"), start=1)
                    if match(raw)
                ]
                if edit is not None:
                    for h in hits:
                        h["new"] = edit(e.relpath, h["text"])
                if hits:
                    report.files[e.relpath] = hits
                    removals[e.relpath] = [str(h["text"]) for h in hits]
            at = self.p.now().isoformat(timespec="seconds")
            every = [t for lines in removals.values() for t in lines]
            new = stones.plan(
                every, sel.text if phrase_stone else None, at=at, reason=f"{by}: {sel.describe()}"
            )
            report.tombstones = len(new)
            blocked = match
            match.contents |= {tokens(t) for t in every}
            report.recall_signals = self._recall(blocked, removals, dry_run=True)
            history = self._history(blocked, dry_run=True)
            if purge_history:
                report.history = history
            else:
                report.history_kept = sorted(history)
            if dry_run or (
                not removals
                and not new
                and not report.recall_signals
                and not (purge_history and history)
            ):
                return report
            stones.save(new)  # from here on nothing can bring it back
            old_chunks = self._chunks(list(removals))
            for rel in removals:
                self._rewrite(rel, blocked, report, edit)
            report.recall_signals = self._recall(blocked, removals, dry_run=False)
            self._sync(report)
            self._drop_vectors(old_chunks, blocked, report)
            if purge_history:
                report.history = self._history(blocked, dry_run=False)
            self._record(report, at)
        return report

    def _rewrite(
        self,
        rel: str,
        blocked: Callable[[str], bool],
        report: ForgetReport,
        edit: Callable[[str, str], str | None] | None,
    ) -> None:
        path = self.ws.check_inside(rel)  # a link inside is written through, never replaced
        if rel in CURATED_FILES:
            mf = MemoryFile(self.ws, preimages_kept=self.p.preimages_kept, name=rel)
            for _ in range(5):
                old = mf.read()
                new = _without(old, blocked, rel, edit)
                if new == old:
                    return
                try:
                    if mf.replace_if_unchanged(sha(old), new):
                        return
                except ParseError as exc:  # its bytes cannot round-trip: never rewritten
                    report.files.pop(rel, None)
                    report.warnings.append(f"{exc}; then run the forget again")
                    return
            report.warnings.append(f"{rel}: kept changing during the forget; run it again")
            return
        with self._writer_lock(rel):
            old = _read(path)
            new = _without(old, blocked, rel, edit)
            problem = undecodable(path.read_bytes(), rel) if new != old else None
            if problem is not None:  # its bytes cannot round-trip: never rewritten
                report.files.pop(rel, None)
                report.warnings.append(f"{problem}; not rewritten: fix it, then forget again")
            elif new != old:
                atomic_write(path, new)

    def _writer_lock(self, rel: str) -> contextlib.AbstractContextManager[object]:
        """The lock the file's own writer holds: journal appends, ingestion."""
        pclass = link_class(rel, None)
        if pclass.kind is SourceKind.JOURNAL and pclass.day is not None:
            lock = self.ws.locks_dir / f"journal-{pclass.day.isoformat()}.lock"
        elif pclass.kind is SourceKind.TRANSCRIPT:
            lock = self.ws.ingest_checkpoints_dir / "ingest.lock"
        else:
            return contextlib.nullcontext()
        lock.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock), timeout=120)

    def _recall(
        self, blocked: Callable[[str], bool], removals: dict[str, list[str]], *, dry_run: bool
    ) -> list[str]:
        log = self.p.recall_log()
        if log is None:
            return []
        del removals  # a signal is its line's content, wherever the line has moved to
        return log.drop(lambda _key, snippet: blocked(snippet), dry_run=dry_run)

    def _chunks(self, paths: list[str]) -> list[str]:
        try:
            return store.chunk_texts(self.p.conn(), paths)
        except Exception:  # a broken index is rebuilt from the files anyway
            return []

    def _sync(self, report: ForgetReport) -> None:
        try:
            self.p.reindex()
        except ReverieError as exc:
            report.warnings.append(f"the files are forgotten, but the index sync failed: {exc}")

    def _drop_vectors(
        self, texts: list[str], blocked: Callable[[str], bool], report: ForgetReport
    ) -> None:
        pairs = [(text_hash(t), t) for t in texts if any(blocked(ln) for ln in t.split("\n"))]
        if pairs:
            with contextlib.suppress(Exception):
                report.cached_vectors = store.drop_cached(self.p.conn(), pairs)

    def _history_files(self) -> list[Path]:
        out = sorted(self.ws.preimages_dir.glob("*.md")) if self.ws.preimages_dir.is_dir() else []
        if self.ws.dreams_log.exists():
            out.append(self.ws.dreams_log)
        if self.ws.dream_reports_dir.is_dir():
            out += sorted(self.ws.dream_reports_dir.glob("*.md"))
        return out

    def _history(self, blocked: _Match, *, dry_run: bool) -> dict[str, int]:
        """Lines holding the text in pre-images, DREAMS.md and phase reports (removed
        unless ``dry_run``), by file (state-dir files named by their file name)."""
        found: dict[str, int] = {}
        for path in self._history_files():
            old = _read(path)
            n = sum(1 for ln in old.split("\n") if _history_line_blocked(ln, blocked))
            if not n:
                continue
            shown = self.ws.relpath(path) if path.is_relative_to(self.ws.root) else path.name
            found[shown] = n
            if not dry_run:
                kept = [ln for ln in old.split("\n") if not _history_line_blocked(ln, blocked)]
                atomic_write(path, "\n".join(kept))
        return found

    def _record(self, report: ForgetReport, at: str) -> None:
        if not report.files and not report.history:
            return
        lines = [
            f"## Forget {at}",
            "",
            f"- by the owner: {report.selector}; the text is not kept here",
        ]
        lines += [
            f"- {rel}: {len(hits)} line(s) removed" for rel, hits in sorted(report.files.items())
        ]
        if report.recall_signals:
            lines.append(f"- recall signals dropped: {len(report.recall_signals)}")
        if report.history:
            lines.append(f"- history purged: {sum(report.history.values())} line(s)")
        MemoryFile(self.ws, preimages_kept=self.p.preimages_kept).append_dreams(
            "\n".join(lines) + "\n"
        )


def _read(path: Path) -> str:
    """The text of ``path`` (invalid UTF-8 replaced: a rewrite checks the bytes first)."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


class _Match:
    """The lines a forget removes: the selected contents, the phrase, and whatever an
    earlier forget left a tombstone for (a copy that came back by hand goes too)."""

    def __init__(
        self, contents: set[tuple[str, ...]], phrase: tuple[str, ...] | None, stones: Tombstones
    ) -> None:
        self.contents, self.phrase, self.stones = contents, phrase, stones

    def __call__(self, raw: str) -> bool:
        toks = tokens(raw)
        if not toks:
            return False
        if toks in self.contents or self.stones.blocks(raw):
            return True
        return self.phrase is not None and contains(toks, self.phrase)

    def cut(self, raw: str) -> bool:
        """A history line cut short (DREAMS.md diffs keep 200 characters)."""
        toks = tokens(raw)
        return len(toks) >= 6 and any(c[: len(toks)] == toks for c in self.contents)


def _without(
    text: str,
    blocked: Callable[[str], bool],
    rel: str = "",
    edit: Callable[[str, str], str | None] | None = None,
) -> str:
    """``text`` without its blocked lines, or with them edited (a correction)."""
    out = []
    for ln in text.split("\n"):
        if not blocked(ln):
            out.append(ln)
        elif edit is not None and (new := edit(rel, ln)) is not None:
            out.append(new)
    return "\n".join(out)


def _history_line_blocked(line: str, blocked: _Match) -> bool:
    """A DREAMS.md diff line (``- `+` text``) reads as its text (tokens skip the signs)."""
    return blocked(line.replace("`", " ")) or blocked.cut(line)


__all__ = ["ForgetPorts", "ForgetReport", "Forgetter"]
