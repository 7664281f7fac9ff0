"""``reverie forget``: deletion that really deletes, and stays deleted.

One forget, under the dream lock:

1. plan: every line the selector names (:mod:`.select`), widened to every line of the
   same content in any indexed file (journals, the session corpus, imports, notes,
   MEMORY.md, USER.md; AGENTS.md, the owner's instructions, is never touched);
2. the forget journal (:mod:`.forget_journal`, hashes only) is written before the first
   change: a forget killed from here on is finished by the next open, by any door
   (:meth:`Forgetter.resume`); every step below is safe to repeat;
3. tombstones (:mod:`reverie.storage.tombstones`): from this moment a journal append,
   an ingestion, an index sync and a dream all refuse the text;
4. the files: curated roots through :class:`~reverie.dreaming.safe_write.MemoryFile`
   (hash re-check, atomic exchange, pre-image), the others under their writer's lock
   with a re-read; then the session transcripts (redacted in place, seals intact), the
   pending agent requests, the standing intents (:mod:`.forget_stores`);
5. the recall log's signals, the trigger snapshot, the index (a sync) and the cached
   vectors of the old chunks;
6. DREAMS.md and the dream phase reports; with ``purge_history`` the MEMORY.md/USER.md
   pre-images too (without it the report names every pre-image still holding it);
7. one DREAMS.md entry naming the files and counts, never the text; then every SQLite
   file is rewritten (:mod:`reverie.storage.scrub`) so no deleted byte stays on disk,
   and the journal goes.

``dry_run`` does 1 and reports what the rest would do; it writes nothing at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from ..dreaming.safe_write import MemoryFile, sha
from ..errors import ParseError, ReverieError
from ..provenance.paths import CURATED_FILES, SourceKind
from ..storage.document import parse_lines
from ..storage.embedders.base import text_hash
from ..storage.files import atomic_write
from ..storage.links import link_class
from ..storage.locks import held
from ..storage.reader import undecodable
from ..storage.tombstones import Tombstones, tokens
from ..storage.walk import FileEntry
from . import forget_stores
from .forget_journal import Blocked, ForgetJournal
from .forget_plan import ForgetPorts, ForgetReport, PlanMatch, read_text, without
from .select import Selector

SKIPPED_KINDS = frozenset({SourceKind.INSTRUCTIONS, SourceKind.REVIEW, SourceKind.STATE})


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
            text = read_text(e.path)
            parsed, _ = parse_lines(e.relpath, text, pclass, key=key if pclass.markers else None)
            raw = text.split("\n")
            for line in parsed:
                r = raw[line.number - 1]
                if sel.direct(e.relpath, line.number, r, pclass.kind.value, line.origin.value):
                    found.add(tokens(r))
        return found

    def _matcher(self, sel: Selector, files: list[FileEntry], stones: Tombstones) -> PlanMatch:
        return PlanMatch(self._direct(sel, files), tokens(sel.text) if sel.text else None, stones)

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
        correction, whose new text may well contain the old words)."""
        self.ws.require()
        report = ForgetReport(sel.describe(), dry_run)
        wait, busy = 600, "a dream is running; forget again when it is done"
        lock = (
            contextlib.nullcontext() if dry_run else held(self.ws.dream_lock, wait=wait, busy=busy)
        )
        with lock:
            if not dry_run:
                self._finish(ForgetReport("", False))  # a forget killed before goes first
                self._settle_temps()
            files = self._files()
            stones = Tombstones(self.ws.tombstones_path)
            match = self._matcher(sel, files, stones)
            removals: dict[str, list[str]] = {}
            for e in files:
                hits = [
                    {"line": n, "text": raw}
                    for n, raw in enumerate(read_text(e.path).split("\n"), start=1)
                    if match(raw)
                ]
                if edit is not None:  # a correction: each hit shows its new line
                    for h in hits:
                        h["new"] = edit(e.relpath, str(h["text"]))
                if hits:
                    report.files[e.relpath] = hits
                    removals[e.relpath] = [str(h["text"]) for h in hits]
            at = self.p.now().isoformat(timespec="seconds")
            every = [t for lines in removals.values() for t in lines]
            new = stones.plan(
                every, sel.text if phrase_stone else None, at=at, reason=f"{by}: {sel.describe()}"
            )
            report.tombstones = len(new)
            match.contents |= {tokens(t) for t in every}
            report.recall_signals = self._recall(match, dry_run=True)
            report.stores = self._stores(match, at, dry_run=True)
            report.reports = self._history(match, self._report_files(), dry_run=True)
            history = self._history(match, self._preimages(), dry_run=True)
            if purge_history:
                report.history = history
            else:
                report.history_kept = sorted(history)
            if dry_run or not (
                removals
                or new
                or report.recall_signals
                or any(report.stores.values())
                or report.reports
                or (purge_history and history)
            ):
                return report
            journal = ForgetJournal.plan(
                stones.salt,
                at=at,
                by=by,
                selector=sel.describe(),
                purge_history=purge_history,
                stones=new,
                phrase=sel.text if sel.text and not phrase_stone else None,
                contents=match.contents,
                vectors=self._vectors(list(removals), match),
                files={rel: len(v) for rel, v in removals.items()},
                edits={
                    str(h["text"]): str(h["new"])
                    for hits in report.files.values()
                    for h in hits
                    if h.get("new") is not None
                },
            )
            journal.save(self.ws.forget_journal_path)  # before the first change
            self._carry_out(journal, report)
        return report

    def resume(self, *, wait: float = 0, locked: bool = False) -> ForgetReport | None:
        """Finish a forget that was killed halfway (None: there was none, or another
        process holds the dream lock: a live forget, or a dream, which resumes it)."""
        if not self.ws.forget_journal_path.exists():
            return None
        report = ForgetReport("a forget that was interrupted", False)
        if locked:
            self._finish(report)
            return report
        try:
            with held(self.ws.dream_lock, wait=wait, busy="busy"):
                self._finish(report)
        except ReverieError:
            return None
        return report

    def _finish(self, report: ForgetReport) -> None:
        journal = ForgetJournal.load(self.ws.forget_journal_path)
        if journal is not None:
            self._settle_temps()
            report.selector = journal.selector
            self._carry_out(journal, report)

    def _carry_out(self, journal: ForgetJournal, report: ForgetReport) -> None:
        """Every step of the forget in ``journal``; each safe to repeat, so a killed
        run is finished by running this again. The journal goes when all are done."""
        if journal.busy:  # all done but the checkpoint of WALs another process kept
            self._close(journal, forget_stores.checkpoints(self.ws, journal.busy), True, report)
            return
        stones = Tombstones(self.ws.tombstones_path)
        journal.lay(stones)  # from here on nothing can bring it back
        blocked = journal.matcher(stones)
        edit = journal.edit if journal.edits else None
        for e in self._files():
            if any(blocked(ln) for ln in read_text(e.path).split("\n")):
                self._rewrite(e.relpath, blocked, report, edit)
        report.stores = self._stores(blocked, journal.at, dry_run=False)
        report.recall_signals = self._recall(blocked, dry_run=False)
        forget_stores.snapshot(self.ws)
        self._sync(report)
        self._drop_vectors(journal.vectors, report)
        report.reports = self._history(blocked, self._report_files(), dry_run=False)
        if journal.purge_history:
            report.history = self._history(blocked, self._preimages(), dry_run=False)
        else:
            report.history_kept = sorted(self._history(blocked, self._preimages(), dry_run=True))
        self._record(journal)
        busy, ok = self._scrub()
        with contextlib.suppress(Exception):  # (the store says what it cannot remove)
            report.remains = list(self.p.index().remains)
        self._close(journal, busy, ok, report)

    def _close(
        self, journal: ForgetJournal, busy: list[str], ok: bool, report: ForgetReport
    ) -> None:
        """The journal goes once no deleted byte is left; while another process keeps a
        WAL, the next open only retries its checkpoint (``journal.busy``)."""
        path = self.ws.forget_journal_path
        if ok and not busy:
            path.unlink(missing_ok=True)
            return
        report.warnings.append(
            f"{', '.join(busy) or 'a SQLite file'}: another process was using it; the deleted "
            "bytes go when the next command finishes this forget"
        )
        if ok:
            journal.busy = busy
            journal.save(path)

    def _settle_temps(self) -> None:
        """What a killed write of MEMORY.md / USER.md left: kept as pre-images when they
        hold a version found nowhere else (the dream lock is held)."""
        for name in CURATED_FILES:
            with contextlib.suppress(Exception):
                MemoryFile(self.ws, preimages_kept=self.p.preimages_kept, name=name).recover()

    def _stores(self, blocked: Callable[[str], bool], at: str, *, dry_run: bool) -> dict[str, int]:
        ws = self.ws
        n = sum(forget_stores.transcripts(ws, blocked, dry_run=dry_run).values())
        return {
            "transcripts": n,
            "pending_requests": forget_stores.pending(
                self.p.requests, blocked, at, dry_run=dry_run
            ),
            "intents": forget_stores.intents(self.p.intents(), ws, blocked, dry_run=dry_run),
        }

    def _writer_lock(self, rel: str) -> contextlib.AbstractContextManager[object]:
        """The lock the file's own writer holds: journal appends, ingestion."""
        pclass = link_class(rel, None)
        if pclass.kind is SourceKind.JOURNAL and pclass.day is not None:
            lock = self.ws.journal_lock(pclass.day)
        elif pclass.kind is SourceKind.TRANSCRIPT:
            lock = self.ws.ingest_lock
        else:
            return contextlib.nullcontext()
        lock.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock), timeout=120)

    def _rewrite(
        self,
        rel: str,
        blocked: Callable[[str], bool],
        report: ForgetReport,
        edit: Callable[[str, str], str | None] | None = None,
    ) -> None:
        path = self.ws.check_inside(rel)  # a link inside is written through, never replaced
        if rel in CURATED_FILES:
            mf = MemoryFile(self.ws, preimages_kept=self.p.preimages_kept, name=rel)
            for _ in range(5):
                old = mf.read()
                new = without(old, blocked, rel, edit)
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
            old = read_text(path)
            new = without(old, blocked, rel, edit)
            problem = undecodable(path.read_bytes(), rel) if new != old else None
            if problem is not None:  # its bytes cannot round-trip: never rewritten
                report.files.pop(rel, None)
                report.warnings.append(f"{problem}; not rewritten: fix it, then forget again")
            elif new != old:
                atomic_write(path, new)

    def _recall(self, blocked: Callable[[str], bool], *, dry_run: bool) -> list[str]:
        log = self.p.recall_log()
        if log is None:
            return []  # a signal is its line's content, wherever the line has moved to
        return log.drop(lambda _key, snippet: blocked(snippet), dry_run=dry_run)

    def _vectors(self, paths: list[str], blocked: Callable[[str], bool]) -> list[str]:
        """The hashes of the chunk texts holding a removed line (their cached vectors go)."""
        try:
            texts = self.p.index().chunk_texts(paths)
        except Exception:  # a broken index is rebuilt from the files anyway
            return []
        return [text_hash(t) for t in texts if any(blocked(ln) for ln in t.split("\n"))]

    def _sync(self, report: ForgetReport) -> None:
        try:
            self.p.reindex()
        except ReverieError as exc:
            report.warnings.append(f"the files are forgotten, but the index sync failed: {exc}")

    def _drop_vectors(self, hashes: list[str], report: ForgetReport) -> None:
        if hashes:
            with contextlib.suppress(Exception):
                report.cached_vectors = self.p.index().drop_cached_hashes(hashes)

    def _scrub(self) -> tuple[list[str], bool]:
        """No deleted byte left in a SQLite file or WAL: the names of those whose WAL
        another process kept, and whether every file was rewritten."""
        busy, ok = forget_stores.scrub_files(self.ws, {self.ws.index_path})
        try:  # the index through its own port (SQLite: its connection, sqlite-vec loaded)
            if not self.p.index().scrub():
                busy.append(self.ws.index_path.name)
            log = self.p.recall_log()  # (SQLite: one of the files above; else its tables)
            ok = (log is None or log.scrub()) and ok
        except Exception:  # locked past the timeout: the next open tries it all again
            ok = False
        return busy, ok

    def _preimages(self) -> list[Path]:
        d = self.ws.preimages_dir
        return sorted(d.glob("*.md")) + sorted(d.glob(".*.tmp")) if d.is_dir() else []

    def _report_files(self) -> list[Path]:
        """DREAMS.md and the dream phase reports (always cleaned: they are in the
        workspace, and nothing restores from them)."""
        out = [self.ws.dreams_log] if self.ws.dreams_log.exists() else []
        if self.ws.dream_reports_dir.is_dir():
            out += sorted(self.ws.dream_reports_dir.glob("*.md"))
        return out

    def _history(
        self, blocked: Blocked | PlanMatch, paths: list[Path], *, dry_run: bool
    ) -> dict[str, int]:
        """Lines holding the text in ``paths`` (removed unless ``dry_run``), by file
        (state-dir files named by their file name)."""
        found: dict[str, int] = {}
        for path in paths:
            old = read_text(path)
            n = sum(1 for ln in old.split("\n") if blocked.history_line(ln))
            if not n:
                continue
            shown = self.ws.relpath(path) if path.is_relative_to(self.ws.root) else path.name
            found[shown] = n
            if not dry_run:
                kept = [ln for ln in old.split("\n") if not blocked.history_line(ln)]
                atomic_write(path, "\n".join(kept))
        return found

    def _record(self, journal: ForgetJournal) -> None:
        """One DREAMS.md entry (once, however often the journal is carried out)."""
        if not journal.files:
            return
        head = f"## Forget {journal.at} ({journal.id})"
        mf = MemoryFile(self.ws, preimages_kept=self.p.preimages_kept)
        if head in read_text(self.ws.dreams_log):
            return
        lines = [head, "", f"- by the owner: {journal.selector}; the text is not kept here"]
        lines += [f"- {rel}: {n} line(s) removed" for rel, n in sorted(journal.files.items())]
        mf.append_dreams("\n".join(lines) + "\n")


__all__ = ["ForgetPorts", "ForgetReport", "Forgetter"]
