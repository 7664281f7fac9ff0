"""The note left when a new origin key was created over lines signed with a lost one
(:meth:`reverie.storage.workspace.Workspace.origin_key`), and the warning it gives."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from .files import atomic_write, read_regular

_SIG_RE = re.compile(rb"<!--[^<>]*\bsig\s*:\s*[0-9a-fA-F]{8}")


def fingerprint(key: bytes) -> str:
    import hashlib  # (OpenSSL: not on a one-shot hook's path)

    return hashlib.sha256(key).hexdigest()[:16]


def signed_files(root: Path, corpus_dir: Path) -> list[str]:
    """Marker files (journals, the session corpus) holding signed lines."""
    found: list[str] = []
    candidates = [*sorted((root / "memory").glob("*.md")), *sorted(corpus_dir.rglob("*.md"))]
    for p in candidates:
        try:
            if not p.is_symlink() and _SIG_RE.search(read_regular(p)):
                found.append(p.relative_to(root).as_posix())
        except OSError:
            continue
    return found


def note_new_key(note_path: Path, key: bytes, signed: list[str]) -> None:
    """Record that ``key`` was created while ``signed`` files hold lines of another."""
    if not signed:
        return  # a new workspace, or nothing signed: nothing lost
    note = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "fingerprint": fingerprint(key),
        "signed_files": len(signed),
        "example": signed[0],
    }
    atomic_write(note_path, json.dumps(note) + "\n")


def key_warning(note_path: Path, key_path: Path) -> str | None:
    """A loud warning while the key in use is one created over lines signed with a
    lost key (their trust silently dropped: owner lines read as agent, corpus lines
    as untrusted). Gone once the old key is restored or the note deleted."""
    try:
        note = json.loads(note_path.read_text())
        current = bytes.fromhex(key_path.read_text().strip())
    except (OSError, ValueError):
        return None
    if note.get("fingerprint") != fingerprint(current):  # the old key is back
        note_path.unlink(missing_ok=True)
        return None
    return (
        f"{key_path} was missing: a new signing key was created on "
        f"{note.get('created')}, but {note.get('signed_files')} file(s) (e.g. "
        f"{note.get('example')}) hold lines signed with the old one, so their owner "
        "lines now read as agent and session-corpus lines as untrusted. Restore "
        "origin.key from a backup of the state dir (the next sync re-reads every "
        f"file), or delete {note_path} to accept the new key"
    )


__all__ = ["fingerprint", "key_warning", "note_new_key", "signed_files"]
