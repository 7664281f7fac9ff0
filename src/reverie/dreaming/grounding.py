"""Grounding a candidate in its file as it is now, and shaping a promotion.

A recall-log row says where a line was when it was recalled; before it can be promoted
the line is found again in its file and its provenance recomputed from the path and
the line's marker as they are now (the same parse the indexer uses), and the lowest of
then and now wins: a file edited to raise a line's trust cannot raise it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..provenance.origin import Origin, lowest
from ..recall.evidence import RecallStats
from ..storage import reader
from ..storage.document import parse_lines
from ..storage.workspace import Workspace
from . import consolidate
from .content import Judge, split_speaker, strip_media
from .dates import resolve
from .memory_file import (
    AGENT_SUBJECT,
    OWNER_SUBJECT,
    clean_snippet,
    dated,
    normalise,
    render_entry,
)
from .phrases import trigger_phrases
from .signals import promoted_importance

Parsed = dict[str, tuple[tuple[int, int], list[Any]]]


def _lines(ws: Workspace, path: str, parsed: Parsed | None) -> list[Any] | None:
    """The parsed lines of ``path`` now; ``parsed``: the files already parsed this dream
    (a file is parsed again only when its size or mtime changed)."""
    try:
        st = (ws.root / path).stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (-1, -1)
    if parsed is not None and path in parsed and parsed[path][0] == stamp:
        return parsed[path][1]
    try:
        text = reader.read_text(ws.root / path, ws.root)
    except OSError:  # gone, or refused by the reader policy (a FIFO, a link out)
        return None
    pclass = ws.classify(path)
    lines, _warnings = parse_lines(
        path, text, pclass, key=ws.origin_key() if pclass.markers else None
    )
    if parsed is not None:
        parsed[path] = (stamp, lines)
    return lines


def ground(
    ws: Workspace, s: RecallStats, parsed: Parsed | None = None
) -> tuple[RecallStats | None, str]:
    """The candidate at its line as the file holds it now, or None and why not.
    ``parsed``: a dream's cache of parsed files (each file read once, not once per row)."""
    lines = _lines(ws, s.path, parsed)
    if lines is None:
        return None, "source file is gone or unreadable"
    target = normalise(s.snippet)
    for i in (s.start_line - 1, *range(len(lines))):
        if not 0 <= i < len(lines):
            continue
        line = lines[i]
        if normalise(line.text) == target:
            return replace(
                s,
                start_line=line.number,
                end_line=line.number,
                origin=lowest(line.origin, s.origin or Origin.UNTRUSTED),
                session_kind=s.session_kind or line.session,
                projects=line.trailers.projects,  # the project it was written in, if any
            ), ""
    return None, "source line no longer exists"


def with_judgement(ws: Workspace, found: dict[str, Any], judge: Judge) -> dict[str, Any]:
    """A candidate's explanation (``found``: its key, gates, signals) with how each of
    its sentences was judged (``judgement``); a line that cannot be read has none."""
    path, _, rest = str(found.get("key", "")).rpartition(":")
    path, _, start = path.rpartition(":")
    text = found.get("snippet")
    if not text and start.isdigit() and rest.isdigit():
        lines = _lines(ws, path, None) or ()
        text = next((ln.text for ln in lines if ln.number == int(start)), None)
    if text:
        with contextlib.suppress(Exception):  # an explanation never fails the command
            found["judgement"] = judge.explain(clean_snippet(str(text)))
    return found


SAID_BY = {Origin.OWNER: OWNER_SUBJECT, Origin.AGENT: AGENT_SUBJECT}  # a line naming no speaker


def readable(s: RecallStats, judge: Judge) -> str:
    """The entry text a person can read later (R-DREAM-Q1): the durable statements of
    the line only, media markup out, the speaker kept as the subject, relative dates
    resolved against the source day (the journal's date)."""
    cleaned = clean_snippet(s.snippet)
    verdict = judge(cleaned)
    text = verdict.text if verdict.durable else strip_media(cleaned)
    return resolve(text, s.observed)


def promotion(
    s: RecallStats, score: float, judge: Judge, corpus: Sequence[str] = ()
) -> consolidate.Promotion:
    """The entry a winning candidate becomes (SPEC section 8, dreaming deep). Its
    triggers are specific phrases of its text: multi-word, no stop word, rare in
    ``corpus`` (the candidate pool and MEMORY.md's entries), else none."""
    text = readable(s, judge)
    importance = promoted_importance(score)
    tags = trigger_phrases(text, [clean_snippet(d) for d in corpus])
    if s.origin in SAID_BY and split_speaker(text)[0] is None:  # who said it, by its origin
        text = f"{SAID_BY[s.origin]}: {text}"
    anchor = f"{s.path}#L{s.start_line}-L{s.end_line}"
    text = dated(text, s.observed.isoformat() if s.observed else None)  # the day, in the text
    return consolidate.Promotion(
        key=s.key,
        anchor=anchor,
        text=text,
        rendered=render_entry(text, anchor, importance, tags, s.projects),
        score=score,
        importance=importance,
        tags=tags,
        origin=s.origin.value if s.origin else "untrusted",
        session_kind=s.session_kind.value if s.session_kind else None,
        observed=s.observed.isoformat() if s.observed else None,
        projects=s.projects,
    )


__all__ = ["Parsed", "ground", "promotion", "readable", "with_judgement"]
