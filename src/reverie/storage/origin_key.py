"""The origin key (``<state>/origin.key``): the secret that signs per-line origin
markers, created once, never in the workspace; and the loud note written when a new
key had to be created over lines signed with a lost one."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from ..errors import WorkspaceError
from .files import atomic_write, read_regular, write_if_absent

_SIG_RE = re.compile(rb"<!--[^<>]*\bsig\s*:\s*[0-9a-fA-F]{8}")


def fingerprint(key: bytes) -> str:
    import hashlib  # (OpenSSL: not on a one-shot hook's path)

    return hashlib.sha256(key).hexdigest()[:16]


def signed_files(candidates: Iterable[Path]) -> list[Path]:
    """The files among ``candidates`` holding signed lines (links never followed)."""
    found: list[Path] = []
    for p in candidates:
        try:
            if not p.is_symlink() and _SIG_RE.search(read_regular(p)):
                found.append(p)
        except OSError:
            continue
    return found


def load_or_create_key(path: Path, signed: Callable[[], list[str]], note_path: Path) -> bytes:
    """The key at ``path``, created (mode 0600) when absent; when ``signed()`` names
    files signed with a lost key, the note at ``note_path`` says so."""
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    except ValueError:
        raise WorkspaceError(f"{path}: corrupt origin key") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)  # what secrets.token_bytes gives
    if write_if_absent(path, key.hex() + "\n"):
        os.chmod(path, 0o600)
        _note_new_key(key, signed(), note_path)
        return key
    return bytes.fromhex(path.read_text().strip())


def _note_new_key(key: bytes, signed: list[str], note_path: Path) -> None:
    if not signed:
        return  # a new workspace, or nothing signed: nothing lost
    note = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "fingerprint": fingerprint(key),
        "signed_files": len(signed),
        "example": signed[0],
    }
    atomic_write(note_path, json.dumps(note) + "\n")


def key_warning(key_path: Path, note_path: Path) -> str | None:
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


__all__ = ["fingerprint", "key_warning", "load_or_create_key", "signed_files"]
