"""``reverie import FORMAT PATH``: other assistants' memories and conversations, with
their provenance decided by code.

Everything is written through the engine's own write paths, so every check they make
applies (redaction, markers, the index's dirty flag):

- conversations (ChatGPT, Claude.ai, Claude Code transcripts) are recorded through the
  session API, one session per conversation, and ingested (R-WRITE-3): their lines land
  in the session corpus with an origin each;
- facts (Claude Code memory files, the MCP memory server's graph) are appended with
  :meth:`reverie.engine.Reverie.write`.

Trust: an import is external text, so every line lands ``untrusted`` (found by search,
never promoted or injected) unless the owner, at the CLI, passes ``--as-owner``. Then
the person's turns and memory-file notes count as the owner's, the other assistant's
turns and stored facts as ``agent``, and tool output and attachments stay
``untrusted``; each line records the decision (``role: vouched`` on facts, the import
session's anchor on conversation lines).

Idempotent and resumable: a ledger per conversation (``<state>/<agent>/integrations/
imports/``) holds the keys of what was written; importing again adds nothing, and an
interrupted import picks up at the first conversation not finished. Facts are known by
their content across every ledger of the format, so a renamed or moved file adds nothing
either; and a re-import never changes the origin a fact landed with: ``--as-owner`` on
facts first imported without it adds nothing and says how many stay ``untrusted``
(trust is raised only by the owner stating the fact, ``reverie write``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import Reverie
from ..errors import ParseError, ReverieError
from ..provenance.origin import (
    EXTERNAL,
    OWNER_AT_CLI,
    PROMOTABLE_ORIGINS,
    Author,
    Origin,
    Source,
)
from ..storage import reader
from ..storage.files import atomic_write
from ..storage.workspace import checkpoint_paths
from . import json_stream
from .claude_mirror import Mirror
from .claude_transcript import is_claude_code_record, parse_ts
from .claude_transcript import parse as parse_transcript
from .import_files import conversations_stream, read_checked, side_files
from .import_formats import (
    CONVERSATION_PARSERS,
    PARSERS,
    SIDE_PARSERS,
    Conversation,
    digest,
    unwrap,
)

FORMATS = ("claude-code", "chatgpt", "claude-ai", "mcp-memory")
OWNER = "owner"
Progress = Callable[[int, int, str], None]  # (done, total, what)


@dataclass
class ImportReport:
    """What one import did (or would do): counts, origins, files written."""

    format: str
    path: str
    dry_run: bool
    as_owner: bool
    conversations: int = 0
    items: int = 0
    new: int = 0
    already: int = 0
    origins: dict[str, int] = field(default_factory=dict)
    lines_written: int = 0
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def count(self, origin: str, n: int = 1) -> None:
        self.origins[origin] = self.origins.get(origin, 0) + n

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _source(role: str, as_owner: bool) -> Source:
    """The provenance source of an imported item's role (fails closed to import)."""
    if not as_owner:
        return Source.IMPORT
    return {
        "person": Source.OWNER,
        "note": Source.OWNER,
        "assistant": Source.ASSISTANT,
        "memory": Source.ASSISTANT,
    }.get(role, Source.TOOL)


class Importer:
    """One import run of ``fmt`` into ``engine``."""

    def __init__(
        self,
        engine: Reverie,
        fmt: str,
        *,
        as_owner: bool = False,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> None:
        if fmt not in FORMATS:
            raise ReverieError(f"unknown import format {fmt!r}; one of {', '.join(FORMATS)}")
        self.engine = engine
        self.fmt = fmt
        self.as_owner = as_owner
        self.dry_run = dry_run
        self.progress = progress or (lambda done, total, what: None)
        self.ledgers = engine.workspace.integration_dir("imports", fmt)
        self.skipped: list[str] = []  # files the reader policy refused

    # -- what to read ----------------------------------------------------------------
    def _units(self, path: Path) -> Iterator[Path | Conversation]:
        """A transcript file or a parsed conversation, for everything in ``path``."""
        if self.fmt in CONVERSATION_PARSERS:  # streamed: one conversation at a time
            parse = CONVERSATION_PARSERS[self.fmt]
            seen: set[str] = set()  # the person's standing context, once per export
            with conversations_stream(path) as (fh, where):
                elements = unwrap(json_stream.items(fh, where), where)
                for n, conv in enumerate(elements, start=1):
                    parsed = parse(conv, n, where)
                    yield parsed
                    about = [i for i in parsed.about if i.key not in seen]
                    seen.update(i.key for i in about)
                    if about:
                        yield Conversation(f"{self.fmt}:about", "About the person", about,
                                           kind="facts")  # fmt: skip
            for name, data, where in side_files(path, SIDE_PARSERS.get(self.fmt, {})):
                yield from SIDE_PARSERS[self.fmt][name](data, where)
            return
        if self.fmt == "mcp-memory":
            for conv in PARSERS["mcp-memory"](read_checked(path, path.parent), str(path)):
                yield conv
            return
        root = path.parent if not path.is_dir() else path
        files = [path] if not path.is_dir() else sorted(path.rglob("*"))
        for file in files:
            named = file.name in ("CLAUDE.md", "CLAUDE.local.md") or (
                file == path and file.suffix == ".md"
            )
            if not (named or file.suffix == ".jsonl"):
                continue
            try:
                reader.check(file, root)  # no FIFO, no link out of what was named
            except (reader.Refused, FileNotFoundError) as exc:
                if file == path:
                    raise ParseError(f"{exc}; nothing imported") from None
                self.skipped.append(f"{exc}; skipped")
                continue
            if named:
                for conv in PARSERS["claude-md"](read_checked(file, root), str(file)):
                    yield conv
            elif self._is_transcript(file, root):
                yield file

    @staticmethod
    def _is_transcript(file: Path, root: Path) -> bool:
        """A Claude Code transcript (not ``history.jsonl`` or another JSONL beside it):
        its first non-blank line is a Claude Code record (a ``file-history-snapshot``
        opens many real ones)."""
        with reader.open_checked(file, root) as fh:
            for raw in fh:
                if raw.strip():
                    return is_claude_code_record(raw)
        return False

    def run(self, path: Path) -> ImportReport:
        self.engine.workspace.require()
        if not path.exists():
            raise ReverieError(f"{path}: no such file or folder")
        report = ImportReport(self.fmt, str(path), self.dry_run, self.as_owner)
        # parse all first: a malformed file writes nothing. An export is parsed in a
        # first pass that keeps nothing, then streamed again to write (bounded memory)
        if self.fmt in CONVERSATION_PARSERS:
            total = sum(1 for _ in self._units(path))
            units: Iterable[Path | Conversation] = self._units(path)
        else:
            listed = list(self._units(path))
            total, units = len(listed), listed
        report.warnings += self.skipped
        for done, unit in enumerate(units, start=1):
            if isinstance(unit, Path):
                self._transcript(unit, report)
                label = unit.name
            elif unit.kind == "facts":
                self._facts(unit, report)
                label = unit.title
            else:
                self._conversation(unit, report)
                label = unit.title
            report.conversations += 1
            self.progress(done, total, label)
        report.files = sorted(set(report.files))
        return report

    # -- ledgers -----------------------------------------------------------------------
    def _ledger_path(self, unit_id: str) -> Path:
        return checkpoint_paths(self.ledgers, digest(unit_id))[0]

    def _done(self, unit_id: str) -> set[str]:
        path = self._ledger_path(unit_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except ValueError:
            raise ReverieError(
                f"{path}: not an import ledger (delete it to import again)"
            ) from None
        return set(data.get("keys", [])) if isinstance(data, dict) else set()

    def _save(self, unit_id: str, keys: set[str], vouched: set[str] | None = None) -> None:
        self.ledgers.mkdir(parents=True, exist_ok=True)
        body: dict[str, Any] = {
            "id": unit_id,
            "format": self.fmt,
            "as_owner": self.as_owner,
            "keys": sorted(keys),
        }
        if vouched is not None:
            body["vouched"] = sorted(vouched)
        atomic_write(self._ledger_path(unit_id), json.dumps(body, ensure_ascii=False))

    def _known_facts(self) -> dict[str, bool]:
        """Every fact this format imported before, from any file (a renamed or moved
        file holds the same facts): its key, and whether it was vouched (--as-owner)."""
        known: dict[str, bool] = {}
        for ledger in sorted(self.ledgers.glob("*.json")) if self.ledgers.is_dir() else ():
            try:
                data = json.loads(ledger.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # _done names a broken ledger of the file being imported
            if not isinstance(data, dict):
                continue
            keys = [k for k in data.get("keys", []) if isinstance(k, str)]
            vouched = data.get("vouched")
            if not isinstance(vouched, list):  # a ledger from before "vouched"
                vouched = keys if data.get("as_owner") is True else []
            for key in keys:
                known[key] = known.get(key, False) or key in vouched
        return known

    # -- writers -----------------------------------------------------------------------
    def _conversation(self, conv: Conversation, report: ImportReport) -> None:
        done = self._done(conv.id)
        new = [i for i in conv.items if i.key not in done]
        report.items += len(conv.items)
        report.already += len(conv.items) - len(new)
        report.new += len(new)
        if not new:
            return
        if self.dry_run:
            tainted = False  # the session's taint rule, replayed without writing
            for item in new:
                source = _source(item.role, self.as_owner)
                origin = Author(sender=OWNER, owner=OWNER, tainted=tainted).origin(source)
                if source is Source.OWNER and origin in PROMOTABLE_ORIGINS:
                    tainted = False
                elif source in EXTERNAL or origin is Origin.UNTRUSTED:
                    tainted = True
                report.count(origin.value)
            return
        who = OWNER if self.as_owner else None
        session = self.engine.open_session(
            session_id=f"imp-{self.fmt}-{'o' if self.as_owner else 'u'}-{digest(conv.id)[:16]}",
            sender=who,
            owner=who,
        )
        for item in new:
            source = _source(item.role, self.as_owner)
            rec = session.record(item.text, source=source, at=parse_ts(item.ts))
            report.count(rec.origin.value)
            done.add(item.key)
        self._save(conv.id, done)
        result = self.engine.ingest(session.path)
        report.lines_written += result.lines_written
        report.files += result.files
        report.warnings += result.warnings

    def _facts(self, conv: Conversation, report: ImportReport) -> None:
        """Facts are deduplicated by content (the item's key), whatever file they came
        from and whatever flags: a fact imported before is never written again, and
        keeps the origin it landed with (a re-import never changes trust)."""
        done = self._done(conv.id)
        known = self._known_facts()
        by_source: dict[Source, list[str]] = {}
        written: set[str] = set()
        stayed = 0
        report.items += len(conv.items)
        for item in conv.items:
            if item.key in done or item.key in known or item.key in written:
                report.already += 1
                if self.as_owner and item.key not in written and not known.get(item.key):
                    stayed += 1
                continue
            written.add(item.key)
            by_source.setdefault(_source(item.role, self.as_owner), []).append(item.text)
            report.new += 1
        if stayed:
            report.warnings.append(
                f"{stayed} fact(s) were imported before without --as-owner and keep their "
                "origin (untrusted): a re-import never changes the trust of a line. To "
                "vouch for one, state it yourself with `reverie write TEXT`."
            )
        role = "vouched" if self.as_owner else "import"
        for source, texts in by_source.items():
            origin = OWNER_AT_CLI.origin(source)
            if self.dry_run:
                report.count(origin.value, len(texts))
                continue
            info = {"role": role, "anchor": f"import:{self.fmt}:{digest(conv.id)[:12]}"}
            appended = self.engine.write(
                "\n".join(texts), source=source, author=OWNER_AT_CLI, info=info
            )
            report.count(appended.origin.value, len(appended.lines))
            report.lines_written += len(appended.lines)
            report.files.append(appended.path)
            report.warnings += list(appended.warnings)
        if not self.dry_run and by_source:
            vouched = {k for k, v in known.items() if v and k in done}
            self._save(conv.id, done | written, vouched | (written if self.as_owner else set()))

    def _transcript(self, file: Path, report: ImportReport) -> None:
        data = read_checked(file, file.parent)
        parsed = parse_transcript(data, path=str(file))  # malformed: the file and line
        sid = parsed.session_id or file.stem
        report.items += len(parsed.turns)
        if not parsed.turns:
            return
        if self.dry_run:
            report.new += len(parsed.turns)
            return
        result = Mirror(self.engine, sid, owner=self.as_owner).sync(file, end=True)
        report.new += result.recorded
        report.already += len(parsed.turns) - result.recorded - result.scaffold
        for origin, n in result.origins.items():
            report.count(origin, n)
        report.lines_written += result.lines_written
        report.warnings += result.warnings


__all__ = ["FORMATS", "ImportReport", "Importer"]
