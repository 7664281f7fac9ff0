"""What each page of the review UI shows, gathered from the engine as plain data.

No HTML here: the templates (:mod:`.templates`, autoescaped) render these dicts, so
memory text only ever reaches the page as escaped text.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..dreaming.curate import OWNER_GATES
from ..dreaming.memory_file import ANCHOR_RE, entries
from ..dreaming.report import last_entry
from ..engine import Reverie
from ..provenance.origin import Origin
from ..provenance.paths import CURATED_FILES, SourceKind
from ..storage import reader
from ..storage.document import parse_lines
from ..storage.walk import FileEntry
from ..timewords import cron_in_words
from .why import reasons

EPISODIC = (SourceKind.JOURNAL, SourceKind.TRANSCRIPT, SourceKind.IMPORT, SourceKind.NOTE)


def _read(engine: Reverie, rel: str) -> str:
    """The file's text under the reader policy: a FIFO or a link out of the workspace
    is refused (a ValueError the page shows), never opened."""
    root = engine.workspace.root
    try:
        return reader.read_text(root / rel, root)
    except FileNotFoundError:
        return ""
    except reader.Refused as exc:
        raise ValueError(str(exc).replace(str(root) + "/", "")) from None


def curated(engine: Reverie) -> list[dict[str, Any]]:
    """MEMORY.md and USER.md entries with their trailers as fields."""
    out = []
    for name in CURATED_FILES:
        items = []
        for e in entries(_read(engine, name)):
            anchor = (e.anchors or (None,))[0]
            observed = None
            if anchor:
                stem = anchor.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
                observed = stem if len(stem) == 10 and stem[4] == "-" else None
            items.append(
                {
                    "line": e.line,
                    "text": ANCHOR_RE.sub("", e.text).strip(),
                    "key": f"{name}:{e.line}",
                    "importance": e.trailers.importance,
                    "triggers": list(e.trailers.triggers),
                    "projects": list(e.trailers.projects),
                    "source": anchor,
                    "observed": observed,
                    "status": "promoted by dreaming" if e.generated else "written by hand",
                }
            )
        out.append({"name": name, "entries": items})
    return out


def episodic_files(engine: Reverie) -> list[dict[str, str]]:
    """Journals, the session corpus, imports and notes: path and kind."""
    out = []
    for e in engine.workspace.walk():
        if isinstance(e, FileEntry):
            kind = engine.workspace.classify(e.relpath, e.real).kind
            if kind in EPISODIC:
                out.append({"path": e.relpath, "kind": kind.value})
    return out


def file_lines(engine: Reverie, rel: str) -> dict[str, Any]:
    """One episodic file's lines with their origin and session kind."""
    ws = engine.workspace
    ws.resolve(rel)  # refuses paths that leave the workspace
    pclass = ws.classify(rel)
    if pclass.kind not in EPISODIC:
        raise ValueError(f"{rel}: not a journal, corpus, import or note file")
    text = _read(engine, rel)
    parsed, _ = parse_lines(rel, text, pclass, key=ws.origin_key() if pclass.markers else None)
    lines = [
        {
            "number": ln.number,
            "text": ln.text,
            "origin": ln.origin.value,
            "session": ln.session.value if ln.session else None,
            "key": f"{rel}:{ln.number}",
        }
        for ln in parsed
        if ln.text.strip()
    ]
    day = pclass.day.isoformat() if pclass.day else None
    return {"path": rel, "kind": pclass.kind.value, "day": day, "lines": lines}


def every_line(engine: Reverie) -> list[dict[str, Any]]:
    """Every non-blank line of every episodic file, with its file, day and origin (the
    rows :func:`reverie.ui.listing.lines_of` filters)."""
    out = []
    for f in episodic_files(engine):
        try:
            data = file_lines(engine, f["path"])
        except (OSError, ValueError):  # gone or unreadable since the walk: skipped
            continue
        out += [{**ln, "path": f["path"], "day": data["day"]} for ln in data["lines"]]
    return out


def candidates(engine: Reverie) -> dict[str, Any]:
    """The dream candidate pool with every signal and gate (``dream explain``)."""
    report = engine.dream(dry_run=True)
    return {
        "candidates": [
            {**asdict(c), "may_promote": _may_promote(c.gates)} for c in report.candidates
        ],
        "dropped": report.dropped,
        "themes": report.themes,
    }


def last_night(engine: Reverie) -> dict[str, Any]:
    """What dreaming did last, in words: whether it is on and when it last ran, the newest
    DREAMS.md entry (:func:`reverie.dreaming.report.last_entry`) and that night's phase
    report."""
    status = engine.dream_status()
    entry = last_entry(_read(engine, "DREAMS.md"))
    ws = engine.workspace
    reports = sorted(ws.dream_reports_dir.glob("*.md"))
    # read as every view reads a file: the reader policy (no FIFO, no link out)
    text = _read(engine, reports[-1].relative_to(ws.root).as_posix()) if reports else ""
    phases = [ln[2:] for ln in text.split("\n") if ln.startswith("- ")]
    return {
        "enabled": status.enabled,
        "schedule": status.schedule,
        "schedule_in_words": cron_in_words(status.schedule),
        "last_run": status.last_run,
        "promoted": status.promoted,
        "heading": entry[0] if entry else None,
        "said": entry[1] if entry else [],
        "phases": phases,
    }


def _may_promote(gates: Any) -> bool:
    """The owner may promote past every gate but those no one waives (provenance...)."""
    return not any(g["name"] in OWNER_GATES and not g["passed"] for g in gates)


def preimages(engine: Reverie) -> list[Path]:
    """MEMORY.md's pre-images, newest first (listed, not read)."""
    return list(reversed(engine.preimages()))


def history(engine: Reverie, images: Sequence[Path]) -> list[dict[str, Any]]:
    """``images`` (pre-images of MEMORY.md: a page, or the one restored), each read and
    shown as a diff to the current file."""
    current = _read(engine, "MEMORY.md").split("\n")
    out = []
    for p in images:
        old = p.read_text(encoding="utf-8", errors="replace").split("\n")  # a person reads it
        diff = [
            {"sign": d[:1], "text": d[1:]}
            for d in difflib.unified_diff(old, current, lineterm="", n=1)
            if not d.startswith(("+++", "---", "@@"))
        ]
        out.append({"name": p.name, "diff": diff})
    return out


def search(engine: Reverie, query: str) -> list[dict[str, Any]]:
    """Hits in score order with why each is there in words (:mod:`.why`) and the
    explain chain's numbers; ``untrusted`` ones are framed by the template."""
    if not query.strip():
        return []
    response = engine.search(query, record=False)
    return [
        {
            "source": f"{h.path}#L{h.start_line}-L{h.end_line}",
            "snippet": h.snippet,
            "score": round(h.score, 4),
            "origin": h.origin.value,
            "kind": h.kind.value,
            "untrusted": h.untrusted,
            "explain": h.explain,
            "why": reasons(h.explain),
            "lines": _linkable(h),
        }
        for h in response.hits
    ]


def _linkable(h: Any) -> list[dict[str, str]]:
    """The lines of a journal hit the owner may link ("this replaces that"): the owner's
    and the agent's, each with its anchor; none of any other hit."""
    if h.kind is not SourceKind.JOURNAL or h.origin not in (Origin.OWNER, Origin.AGENT):
        return []
    lines = h.snippet.split("\n")
    return [
        {"anchor": f"{h.path}#L{n}", "text": text}
        for n, text in enumerate(lines, start=h.start_line)
        if text.strip() and not text.lstrip().startswith("#")
    ]


def line_text(engine: Reverie, anchor: str) -> str:
    """The text of the line ``path#Ln`` names (for the confirm step)."""
    path, _, number = anchor.partition("#L")
    if not path or not number.isdigit():
        raise ValueError(f"not a line: {anchor!r} (want path#Ln)")
    return engine.get(path, from_line=int(number), lines=1).text.strip()


__all__ = [
    "candidates",
    "curated",
    "episodic_files",
    "file_lines",
    "history",
    "line_text",
    "search",
]
