"""The workspace (Markdown, the truth) and the state dir (index, keys, logs).

Layout (SPEC section 1)::

    workspace/  AGENTS.md MEMORY.md USER.md DREAMS.md
                memory/YYYY-MM-DD.md  memory/imports/  memory/.dreams/
    state/      origin.key  <agent>/index.sqlite ...
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..errors import PathEscapeError, WorkspaceError
from ..provenance.origin import lowest
from ..provenance.paths import SESSION_CORPUS, PathClass, classify
from .file_warning import FileWarning
from .files import atomic_write, file_kind, read_regular, write_if_absent
from .trusted import load_trusted

SKELETON: dict[str, str] = {
    "AGENTS.md": (
        "# Agent instructions\n\n"
        "- Record durable facts, decisions and preferences in today's journal as you work\n"
        "  (the `memory_write` tool); dreaming promotes what keeps being useful.\n"
        "- Use `memory_search` before answering questions about earlier work.\n"
    ),
    "MEMORY.md": "# Long-term memory\n\n",
    "USER.md": "# User\n\n",
    "DREAMS.md": "# Dreams\n\nOne change summary per accepted rewrite of MEMORY.md.\n\n",
}
MAX_PATH_CHARS = 1024  # no note needs a longer workspace path
FOLDERS = ("memory", "memory/imports", "memory/.dreams")
# hidden folders that are walked all the same (the session corpus and its parent)
HIDDEN_INDEXED = ("memory/.dreams", SESSION_CORPUS.rstrip("/"))


@dataclass(frozen=True)
class FileEntry:
    """An indexable file found by the workspace walk (``real``: where a symlink at
    ``relpath`` points, inside the workspace)."""

    relpath: str
    path: Path
    size: int
    mtime_ns: int
    real: str | None = None


_SIG_RE = re.compile(rb"<!--[^<>]*\bsig\s*:\s*[0-9a-fA-F]{8}")


def _fingerprint(key: bytes) -> str:
    import hashlib  # (OpenSSL: not on a one-shot hook's path)

    return hashlib.sha256(key).hexdigest()[:16]


def resolve_inside(root: Path, path: Path, *, shown: str | None = None) -> Path:
    """The real path of ``path`` (every symlink followed) if it stays inside ``root``
    (a resolved path); :class:`PathEscapeError` when it leaves. The one symlink policy
    of every reader and writer: a link whose target resolves inside the workspace is
    followed, a link that leaves it is refused."""
    real = path.resolve()
    if real != root and root not in real.parents:
        if shown is None:
            shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        raise PathEscapeError(f"{shown}: resolves outside the workspace")
    return real


def link_class(relpath: str, real: str | None, trusted: Collection[str] = ()) -> PathClass:
    """How the content at ``relpath`` is classified: a symlink to ``real`` reads with
    the lower trust of its own path and its target's (a link never raises trust)."""
    own = classify(relpath, trusted)
    if real is None or real == relpath:
        return own
    target = classify(real, trusted)
    return replace(
        own,
        default_origin=lowest(own.default_origin, target.default_origin),
        ceiling=lowest(own.ceiling, target.ceiling),
    )


class Workspace:
    """The one map of every path on disk: the workspace (Markdown) and the state dir."""

    def __init__(self, root: Path, state_dir: Path, agent: str = "main") -> None:
        self.root = root.expanduser().resolve()
        self.state_dir = state_dir.expanduser().resolve()
        self.agent = agent
        if self.state_dir == self.root or self.root in self.state_dir.parents:
            raise WorkspaceError(
                f"state dir {self.state_dir} is inside the workspace {self.root}; "
                "the workspace must stay pure Markdown (R-LAYOUT-1)"
            )

    @property
    def agent_dir(self) -> Path:
        return self.state_dir / self.agent

    @property
    def index_path(self) -> Path:
        return self.agent_dir / "index.sqlite"

    @property
    def dreams_dir(self) -> Path:
        return self.root / "memory" / ".dreams"

    # -- the one map of every path on disk ---------------------------------------------
    # workspace (Markdown, the truth)
    @property
    def memory_path(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def memory_archive_path(self) -> Path:
        return self.root / "memory" / "archive.md"  # what left MEMORY.md: a searched note

    @property
    def dreams_log(self) -> Path:
        """DREAMS.md: one change summary per rewrite of MEMORY.md (for people)."""
        return self.root / "DREAMS.md"

    @property
    def corpus_dir(self) -> Path:
        """The session corpus: ingested transcripts, dreaming evidence."""
        return self.root / SESSION_CORPUS.rstrip("/")

    @property
    def dream_reports_dir(self) -> Path:
        return self.dreams_dir / "reports"

    # state dir (keys, index, logs; never in the workspace)
    @property
    def origin_key_path(self) -> Path:
        return self.state_dir / "origin.key"

    @property
    def models_dir(self) -> Path:
        """Ready snapshots of embedding models (shared by every agent)."""
        return self.state_dir / "models"

    @property
    def recall_log_path(self) -> Path:
        return self.agent_dir / "recall.sqlite"

    @property
    def sessions_dir(self) -> Path:
        """Session transcripts (JSONL) written by the session API."""
        return self.agent_dir / "sessions"

    @property
    def locks_dir(self) -> Path:
        return self.agent_dir / "locks"

    @property
    def ingest_checkpoints_dir(self) -> Path:
        return self.agent_dir / "ingest"

    @property
    def preimages_dir(self) -> Path:
        """Previous versions of MEMORY.md, kept by dreaming (R-DREAM-9)."""
        return self.agent_dir / "preimages"

    @property
    def tombstones_path(self) -> Path:
        """What the owner forgot, as salted hashes (``reverie forget``)."""
        return self.agent_dir / "tombstones.json"

    @property
    def curation_dir(self) -> Path:
        """The owner's curation state: pending agent requests, trusted folders."""
        return self.agent_dir / "curation"

    @property
    def dream_state_path(self) -> Path:
        return self.agent_dir / "dreams" / "state.json"

    @property
    def dreaming_off_flag(self) -> Path:
        """Present after ``reverie dream off``."""
        return self.agent_dir / "dreaming.off"

    @property
    def dreaming_switched_off(self) -> bool:
        return self.dreaming_off_flag.exists()

    def switch_dreaming(self, on: bool) -> None:
        """The owner's switch (``reverie dream on|off``), kept in the state dir."""
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        if on:
            self.dreaming_off_flag.unlink(missing_ok=True)
        else:
            self.dreaming_off_flag.write_text("dreaming switched off with `reverie dream off`\n")

    @property
    def sync_lock(self) -> Path:
        return self.agent_dir / "sync.lock"

    @property
    def dream_lock(self) -> Path:
        return self.agent_dir / "dream.lock"

    @property
    def daemon_lock(self) -> Path:
        return self.agent_dir / "daemon.lock"

    @property
    def daemon_state(self) -> Path:
        return self.agent_dir / "daemon-state.json"

    @property
    def trusted(self) -> frozenset[str]:
        """Folders the owner declared owner-written (``reverie trust``; state dir only)."""
        return load_trusted(self.curation_dir / "trusted.json")

    def classify(self, relpath: str, real: str | None = None) -> PathClass:
        """:func:`link_class` with the owner's trusted folders."""
        return link_class(relpath, real, self.trusted)

    def exists(self) -> bool:
        return self.root.is_dir()

    def init(self) -> list[str]:
        """Create the layout without overwriting anything. Returns what was created."""
        created: list[str] = []
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in FOLDERS:
            p = self.root / folder
            if not p.exists():
                p.mkdir(parents=True)
                created.append(folder + "/")
        for name, text in SKELETON.items():
            if write_if_absent(self.root / name, text):
                created.append(name)
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        self.origin_key()
        return created

    def require(self) -> None:
        if not self.exists():
            raise WorkspaceError(f"no workspace at {self.root}; run `reverie init` first")

    def origin_key(self) -> bytes:
        """The secret that signs per-line origin markers; outside the workspace."""
        path = self.origin_key_path
        try:
            return bytes.fromhex(path.read_text().strip())
        except FileNotFoundError:
            pass
        except ValueError:
            raise WorkspaceError(f"{path}: corrupt origin key") from None
        self.state_dir.mkdir(parents=True, exist_ok=True)
        key = os.urandom(32)  # what secrets.token_bytes gives
        if write_if_absent(path, key.hex() + "\n"):
            os.chmod(path, 0o600)
            self._note_new_key(key)
            return key
        return bytes.fromhex(path.read_text().strip())

    @property
    def key_note_path(self) -> Path:
        """Written when a new key was created over lines signed with a lost one."""
        return self.state_dir / "origin.key.new"

    def _signed_files(self) -> list[str]:
        """Marker files (journals, the session corpus) holding signed lines."""
        found: list[str] = []
        memory = self.root / "memory"
        candidates = [*sorted(memory.glob("*.md")), *sorted(self.corpus_dir.rglob("*.md"))]
        for p in candidates:
            try:
                if not p.is_symlink() and _SIG_RE.search(read_regular(p)):
                    found.append(self.relpath(p))
            except OSError:
                continue
        return found

    def _note_new_key(self, key: bytes) -> None:
        signed = self._signed_files()
        if not signed:
            return  # a new workspace, or nothing signed: nothing lost
        note = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "fingerprint": _fingerprint(key),
            "signed_files": len(signed),
            "example": signed[0],
        }
        atomic_write(self.key_note_path, json.dumps(note) + "\n")

    def key_warning(self) -> str | None:
        """A loud warning while the key in use is one created over lines signed with a
        lost key (their trust silently dropped: owner lines read as agent, corpus lines
        as untrusted). Gone once the old key is restored or the note deleted."""
        try:
            note = json.loads(self.key_note_path.read_text())
            current = bytes.fromhex(self.origin_key_path.read_text().strip())
        except (OSError, ValueError):
            return None
        if note.get("fingerprint") != _fingerprint(current):  # the old key is back
            self.key_note_path.unlink(missing_ok=True)
            return None
        return (
            f"{self.origin_key_path} was missing: a new signing key was created on "
            f"{note.get('created')}, but {note.get('signed_files')} file(s) (e.g. "
            f"{note.get('example')}) hold lines signed with the old one, so their owner "
            "lines now read as agent and session-corpus lines as untrusted. Restore "
            "origin.key from a backup of the state dir (the next sync re-reads every "
            f"file), or delete {self.key_note_path} to accept the new key"
        )

    def resolve(self, relpath: str) -> Path:
        """``relpath`` inside the workspace; ``..``, absolute paths and symlinks out
        are refused with :class:`PathEscapeError`."""
        if not relpath or os.path.isabs(relpath) or relpath.startswith(("/", "\\")):
            raise PathEscapeError(f"{relpath!r}: absolute or empty paths are refused")
        if "\0" in relpath or len(relpath) > MAX_PATH_CHARS:
            shown = relpath[:80].replace("\0", "\\0")
            raise PathEscapeError(f"{shown!r}: a NUL byte or over {MAX_PATH_CHARS} characters")
        try:
            return resolve_inside(self.root, self.root / relpath, shown=repr(relpath))
        except OSError as exc:  # a name too long for the file system, a link loop
            raise PathEscapeError(f"{relpath[:80]!r}: {exc.strerror}") from None

    def check_inside(self, path: Path | str) -> Path:
        """The real path of ``path`` (absolute, or relative to the workspace) with every
        symlink followed; :class:`PathEscapeError` if it resolves outside the workspace.
        Call it before reading or writing any workspace file (journal appends, MEMORY.md
        rewrites): a link inside is followed, a link that leaves is refused."""
        return resolve_inside(self.root, self.root / path)

    def relpath(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def walk(self) -> Iterator[FileEntry | FileWarning]:
        """Every indexable Markdown file, sorted; warnings for links that leave."""
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            here = Path(dirpath)
            keep = []
            for d in sorted(dirnames):
                p = here / d
                rel = self.relpath(p)
                if p.is_symlink():
                    yield from self._link_warning(p, rel)
                    continue
                if d.startswith(".") and rel not in HIDDEN_INDEXED:
                    continue
                keep.append(d)
            dirnames[:] = keep
            for name in sorted(filenames):
                p = here / name
                rel = self.relpath(p)
                if not name.endswith(".md") or not classify(rel).indexed:
                    continue
                real: str | None = None
                if p.is_symlink():
                    try:
                        real = self.relpath(self.check_inside(p))
                    except PathEscapeError:
                        yield from self._link_warning(p, rel)
                        continue
                try:
                    st = p.stat()
                except FileNotFoundError:
                    if real is not None:
                        yield FileWarning(rel, None, f"broken symlink to {real}; skipped")
                    continue
                kind = file_kind(st.st_mode)
                if kind is not None:  # a FIFO would block the reader forever
                    yield FileWarning(rel, None, f"not a regular file ({kind}); skipped")
                    continue
                yield FileEntry(rel, p, st.st_size, st.st_mtime_ns, real)

    def _link_warning(self, p: Path, rel: str) -> Iterator[FileWarning]:
        """A folder link is not walked: inside the workspace its files are indexed at
        their real paths; one that leaves is refused, with a warning."""
        target = p.resolve()
        if target != self.root and self.root not in target.parents:
            yield FileWarning(
                rel, None, f"symlink to {target} points outside the workspace; skipped"
            )


__all__ = [
    "FOLDERS",
    "HIDDEN_INDEXED",
    "SKELETON",
    "FileEntry",
    "Workspace",
    "link_class",
    "resolve_inside",
]
