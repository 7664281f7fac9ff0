"""The stores a forget reaches besides the Markdown files: session transcripts, the
pending agent requests, the standing intents, the trigger snapshot, and the bytes of
every SQLite file (:mod:`reverie.storage.scrub`). Each step is safe to repeat."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..recall.trigger_snapshot import TriggerSnapshot
from ..storage.files import atomic_write
from ..storage.scrub import scrub_file
from ..storage.workspace import TRANSCRIPT_SUFFIX, Workspace
from ..write.transcript import forget_in

Blocked = Callable[[str], bool]
FORGOTTEN = "(forgotten by the owner)"


def transcripts(ws: Workspace, blocked: Blocked, *, dry_run: bool = False) -> dict[str, int]:
    """Records changed, by transcript file name (the session API's and the Claude Code
    mirror's, live or ended: the escalation lane reads them)."""
    out: dict[str, int] = {}
    if not ws.sessions_dir.is_dir():
        return out
    for path in sorted(ws.sessions_dir.glob("*" + TRANSCRIPT_SUFFIX)):
        if path.is_symlink() or not path.is_file():
            continue
        n = forget_in(path, blocked, dry_run=dry_run)
        if n:
            out[path.name] = n
    return out


def pending(ws: Workspace, blocked: Blocked, at: str, *, dry_run: bool = False) -> int:
    """Agent requests whose text was forgotten: the text goes; a waiting forget request
    is done (the owner forgot it), a waiting correction is dropped (its new text is
    kept, for the owner to add again). ``pending confirm`` holds the request lock while
    it forgets, so the lock is not taken again here (the write is atomic)."""
    path = ws.pending_path
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return 0
    n = 0
    for r in items if isinstance(items, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("text"), str):
            continue
        if r["text"] == FORGOTTEN or not any(blocked(ln) for ln in r["text"].split("\n")):
            continue
        n += 1
        r["text"] = FORGOTTEN
        if r.get("status") == "pending":
            r["status"] = "confirmed" if r.get("kind") == "forget" else "rejected"
            r["decided"] = at
    if n and not dry_run:
        atomic_write(path, json.dumps(items, ensure_ascii=False, indent=1))
    return n


def intents(ws: Workspace, blocked: Blocked, *, dry_run: bool = False) -> int:
    """Standing intents whose text (or firing detail) holds forgotten text: removed with
    their firings, so nothing fires it again. INTENTS.md is re-rendered by the next
    change of the table; a forget removes its lines as any workspace file's."""
    import sqlean as sqlite3

    path = ws.intents_db_path
    if not path.is_file():
        return 0
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        rows = conn.execute("SELECT id, text, triggers FROM intents").fetchall()
        gone = [
            str(i)
            for i, text, triggers in rows
            if any(blocked(ln) for ln in f"{text}\n{triggers}".split("\n"))
        ]
        details = conn.execute("SELECT id, detail FROM firings").fetchall()
        fired = [int(i) for i, d in details if any(blocked(ln) for ln in str(d).split("\n"))]
        if (gone or fired) and not dry_run:
            conn.execute("BEGIN IMMEDIATE")
            for i in gone:
                conn.execute("DELETE FROM firings WHERE intent_id = ?", (i,))
                conn.execute("DELETE FROM intents WHERE id = ?", (i,))
            for f in fired:
                conn.execute("UPDATE firings SET detail = '' WHERE id = ?", (f,))
            conn.execute("COMMIT")
    finally:
        conn.close()
    if not dry_run:
        _intents_view(ws, blocked, rewrite=bool(gone))
    return len(gone)


def _intents_view(ws: Workspace, blocked: Blocked, *, rewrite: bool) -> None:
    """INTENTS.md rendered again from the table; kept hand edits of it cleaned."""
    from ..intents.store import Store
    from ..intents.view import ViewWriter

    view = ViewWriter(ws)
    if rewrite or any(blocked(ln) for ln in _text(view.path).split("\n")):
        store = Store(ws.intents_db_path)
        try:
            view.write(store.select())
        finally:
            store.close()
    edits = ws.intents_view_edits_dir
    for path in sorted(edits.glob("*.md")) if edits.is_dir() else []:
        old = _text(path).split("\n")
        kept = [ln for ln in old if not blocked(ln)]
        if kept != old:
            atomic_write(path, "\n".join(kept))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def snapshot(ws: Workspace) -> None:
    """The trigger snapshot holds entries' text: removed (the next build writes it)."""
    TriggerSnapshot(ws.trigger_snapshot_path).discard()


def scrub_files(ws: Workspace, done: set[Path]) -> tuple[list[str], bool]:
    """Every other SQLite file of the agent's state dir rewritten without deleted bytes:
    the names of those whose WAL another process kept, and whether all were rewritten."""
    busy, ok = [], True
    for path in sorted(ws.agent_dir.glob("*.sqlite")):
        if path in done or path == ws.trigger_snapshot_path:
            continue
        try:
            if not scrub_file(path):
                busy.append(path.name)
        except Exception:  # a locked or broken file: the next open tries it all again
            ok = False
    return busy, ok


def checkpoints(ws: Workspace, names: list[str]) -> list[str]:
    """The WALs of ``names`` (rewritten already) emptied; those still busy."""
    out = []
    for name in names:
        try:
            if not scrub_file(ws.agent_dir / name, vacuum=False):
                out.append(name)
        except Exception:
            out.append(name)
    return out


__all__ = [
    "FORGOTTEN",
    "checkpoints",
    "intents",
    "pending",
    "scrub_files",
    "snapshot",
    "transcripts",
]
