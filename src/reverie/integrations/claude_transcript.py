"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) read as
messages with a declared source, for the session API to compute origins from.

Pure code: it turns the bytes of a transcript into :class:`Turn` values and never
decides an origin itself (that stays with :func:`reverie.provenance.origin_for`, through
the session that records each turn). What each record becomes:

- a ``user`` record whose content is a string (or ``text`` blocks): the person at the
  terminal, source ``owner``; its ``tool_result`` blocks: source ``tool``;
- an ``assistant`` record's ``text`` blocks: source ``assistant`` (the session's taint
  rule then makes a reply after tool output ``untrusted``); ``tool_use`` and
  ``thinking`` blocks are the agent's working, not statements, and are left out;
- ``isSidechain`` records (a sub-agent's own conversation): flagged ``sidechain``, so
  the caller records them in a sub-agent session (never evidence, R-PROV-3);
- compaction summaries ("This session is being continued from a previous
  conversation..."), ``summary`` records, hook attachments and anything carrying the
  blocks we inject: source ``recalled`` (stripped at ingestion, R-PROV-4);
- ``isMeta`` user records, ``<system-reminder>`` blocks and command caveats: source
  ``scaffold``; local command output (``<local-command-stdout>``, ``<bash-stdout>``):
  source ``tool``;
- any other record type (file snapshots, queue operations, system notices) is skipped.

A line that is not JSON raises :class:`~reverie.errors.ParseError` naming the file and
line, except a torn last line (Claude Code still writing it), which is left for the
next read: :func:`parse` reports how far it got (``end``), the caller's checkpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import ParseError
from ..provenance.frames import INJECTED_BLOCK
from ..provenance.origin import Source

COMPACT_SUMMARY = "This session is being continued from a previous conversation"
_TOOL_OUTPUT = re.compile(
    r"^\s*<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>"
)
_SCAFFOLD = re.compile(
    r"^\s*<(system-reminder|command-name|command-message|command-args|local-command-caveat)>"
    r"|^\s*Caveat: |^\s*\[Request interrupted by user"
)


@dataclass(frozen=True)
class Turn:
    """One message of a Claude Code transcript, with the source it came from."""

    line: int  # 1-based line of the transcript
    source: Source
    text: str
    sidechain: bool = False
    ts: str | None = None
    cwd: str | None = None
    compaction: bool = False  # a compaction boundary: the runtime compacted its context


@dataclass
class Parsed:
    """What :func:`parse` read: the turns, how far (a byte offset), the lines skipped."""

    turns: list[Turn]
    end: int
    lines: int = 0
    skipped: int = 0
    session_id: str | None = None
    cwd: str | None = None


def _text_of(content: Any) -> str:
    """The text of a tool result's content (a string or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _user_text_source(text: str, record: dict[str, Any]) -> Source:
    if record.get("isCompactSummary") or text.lstrip().startswith(COMPACT_SUMMARY):
        return Source.RECALLED
    if INJECTED_BLOCK.search(text):
        return Source.RECALLED  # our own injected context, echoed back
    if record.get("isMeta") or _SCAFFOLD.search(text):
        return Source.SCAFFOLD
    if _TOOL_OUTPUT.search(text):
        return Source.TOOL
    return Source.OWNER


def parse_ts(ts: str | None) -> datetime | None:
    """An ISO 8601 time stamp (``...Z`` too) as an aware datetime; None when absent or
    unreadable (the message then counts as said now)."""
    if not ts:
        return None
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def turns_of(record: dict[str, Any], line: int) -> Iterator[Turn]:
    """The turns one transcript record holds (none for records that are no message)."""
    kind = record.get("type")
    side = record.get("isSidechain") is True
    ts = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None

    def turn(source: Source, text: str) -> Turn:
        return Turn(line, source, text, side, ts, cwd)

    if kind == "summary":
        summary = record.get("summary")
        if isinstance(summary, str) and summary.strip():
            yield turn(Source.RECALLED, summary)
        return
    if kind == "system":
        if record.get("subtype") == "compact_boundary":
            yield Turn(line, Source.SCAFFOLD, "", side, ts, cwd, compaction=True)
        return
    if kind == "attachment":  # hook output and other context the runtime attached
        text = json.dumps(record.get("attachment"), ensure_ascii=False)
        yield turn(Source.RECALLED, text)
        return
    if kind not in ("user", "assistant"):
        return
    message = record.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if kind == "user":
        if isinstance(content, str):
            if content.strip():
                yield turn(_user_text_source(content, record), content)
            return
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                text = _text_of(block.get("content"))
                if text.strip():
                    yield turn(Source.TOOL, text)
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                text = str(block["text"])
                yield turn(_user_text_source(text, record), text)
        return
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "text":
            text = str(block.get("text", ""))
            if text.strip():
                yield turn(Source.ASSISTANT, text)
    if isinstance(content, str) and content.strip():
        yield turn(Source.ASSISTANT, content)


def parse(data: bytes, *, start: int = 0, first_line: int = 1, path: str = "") -> Parsed:
    """The turns of ``data[start:]`` (``first_line``: the line number at ``start``).
    Stops before a last line with no newline that is not yet valid JSON."""
    parsed = Parsed([], start)
    offset, number = start, first_line
    while offset < len(data):
        nl = data.find(b"\n", offset)
        raw = data[offset:] if nl < 0 else data[offset:nl]
        after = len(data) if nl < 0 else nl + 1
        if raw.strip():
            try:
                record = json.loads(raw)
            except RecursionError:
                raise ParseError(
                    "not a Claude Code transcript record: nested too deeply", path=path, line=number
                ) from None
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                if nl < 0:
                    break  # torn last line: still being written, read it next time
                raise ParseError(
                    f"not a Claude Code transcript record ({exc})", path=path, line=number
                ) from None
            if not isinstance(record, dict):
                raise ParseError(
                    "a transcript record must be a JSON object", path=path, line=number
                )
            before = len(parsed.turns)
            parsed.turns.extend(turns_of(record, number))
            if len(parsed.turns) == before:
                parsed.skipped += 1
            if isinstance(record.get("sessionId"), str):
                parsed.session_id = parsed.session_id or record["sessionId"]
            if isinstance(record.get("cwd"), str):
                parsed.cwd = record["cwd"]
        offset, number = after, number + 1
        parsed.end, parsed.lines = offset, parsed.lines + 1
    return parsed


# The record types Claude Code writes to a transcript. A real transcript often opens
# with a ``file-history-snapshot`` (no ``sessionId``), so the type alone must do.
RECORD_TYPES = frozenset(
    {
        "summary",
        "user",
        "assistant",
        "system",
        "attachment",
        "file-history-snapshot",
        "queue-operation",
    }
)


def is_claude_code_record(line: bytes) -> bool:
    """True when ``line`` (a transcript's first line) has the shape of a Claude Code
    record (for a helpful error where another format was expected)."""
    try:
        first = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and ("sessionId" in first or first.get("type") in RECORD_TYPES)


__all__ = [
    "COMPACT_SUMMARY",
    "RECORD_TYPES",
    "Parsed",
    "Turn",
    "is_claude_code_record",
    "parse",
    "parse_ts",
    "turns_of",
]
