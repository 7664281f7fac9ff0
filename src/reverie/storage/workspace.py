"""The workspace (Markdown, the truth) and the state dir (index, keys, logs).

Layout (SPEC section 1)::

    workspace/  AGENTS.md MEMORY.md USER.md DREAMS.md
                memory/YYYY-MM-DD.md  memory/imports/  memory/.dreams/
    state/      origin.key  <agent>/index.sqlite ...
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PathEscapeError, WorkspaceError
from ..provenance.paths import SESSION_CORPUS, PathClass
from .files import write_if_absent
from .links import link_class, resolve_inside
from .origin_key import key_warning, load_or_create_key, signed_files
from .skeleton import SKELETON
from .trusted import load_trusted

if TYPE_CHECKING:  # the walk is not on the per-prompt path
    from .file_warning import FileWarning
    from .walk import FileEntry

MAX_PATH_CHARS = 1024  # no note needs a longer workspace path
FOLDERS = ("memory", "memory/imports", "memory/.dreams")


TRANSCRIPT_SUFFIX = ".jsonl"  # <agent>/sessions/<session id>.jsonl


def transcript_name(session_id: str) -> str:
    return f"{session_id}{TRANSCRIPT_SUFFIX}"


# the synced repository's own files (reverie.sync): paths in its tree, never on disk
SYNC_META = ".reverie/"
SYNC_DEVICES = ".reverie/devices.json"  # the paired devices, HMAC'd with the owner's key
SYNC_LEASE = ".reverie/lease.json"  # the dreaming lease
SYNC_REQUEST = "request.json"  # a pairing request, on its side ref
SYNC_STONES = ".reverie/forgotten/{}.json"  # a device's forget tombstones (hashes only)


def checkpoint_paths(folder: Path, key: str) -> tuple[Path, Path]:
    """A resumable reader's checkpoint in ``folder`` and the lock that guards it."""
    return folder / f"{key}.json", folder / f"{key}.lock"


def warm_snapshot_dir(index_file: Path) -> Path:
    """``<agent>/index.warm/``: the warm lanes' snapshot beside an index file
    (:mod:`reverie.backends.sqlite.warm_files`; derived, deleted by every forget)."""
    return index_file.with_suffix(".warm")


def warm_pointer(folder: Path, name: str, *, temporary: str = "") -> Path:
    """``<agent>/index.warm/<name>.json``: which snapshot of ``name`` is current
    (``temporary``: the file written before it is renamed into place)."""
    return folder / (f".{name}.{temporary}.json" if temporary else f"{name}.json")


def lock_beside(path: Path) -> Path:
    """The lock that serialises creating (or rewriting) the file at ``path``."""
    return path.with_name(path.name + ".lock")


def hooks_log_path(state_dir: Path) -> Path:
    """The hooks' own log, beside the agents' folders (written before any workspace is
    opened, so it depends on the state dir alone)."""
    return state_dir / "hooks.log"


def daemon_endpoint_path(state_dir: Path, agent: str) -> Path:
    """Where ``reverie serve`` keeps its loopback port and bearer token (mode 0600),
    kept across restarts so an installed HTTP hook's URL stays valid. A function of the
    state dir alone: the CLI's client reads it without opening a workspace."""
    return state_dir / agent / "daemon-endpoint.json"


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
    def user_path(self) -> Path:
        """USER.md: the owner's directives."""
        return self.root / "USER.md"

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
    def pending_path(self) -> Path:
        """Agent requests (forget, correct) waiting for the owner."""
        return self.curation_dir / "pending.json"

    @property
    def trusted_path(self) -> Path:
        """Folders the owner declared owner-written (``reverie trust``)."""
        return self.curation_dir / "trusted.json"

    @property
    def mcp_initialize_path(self) -> Path:
        """The MCP server's answers to ``initialize`` (versions and capabilities, no memory
        text), given at once to the next client that asks the same (issue 43)."""
        return self.agent_dir / "mcp-initialize.json"

    @property
    def trigger_snapshot_path(self) -> Path:
        """The trigger index as one-shot hooks read it (derived, rebuilt at will)."""
        return self.agent_dir / "triggers.sqlite"

    @property
    def intents_db_path(self) -> Path:
        """The standing intents table (R-INTENT-1..3)."""
        return self.agent_dir / "intents.sqlite"

    @property
    def intents_view_stamp(self) -> Path:
        """The hash of the INTENTS.md view as last written (an edit is noticed)."""
        return self.agent_dir / "intents-view.sha256"

    @property
    def intents_view_edits_dir(self) -> Path:
        """Hand edits of INTENTS.md set aside before the view is rewritten."""
        return self.agent_dir / "intents-view-edits"

    @property
    def forget_journal_path(self) -> Path:
        """A forget under way (hashes only): finished by the next open if it was killed."""
        return self.agent_dir / "forget-journal.json"

    def session_transcript(self, session_id: str) -> Path:
        """A session's transcript (JSONL); ``session_id`` is checked by the caller."""
        return self.sessions_dir / transcript_name(session_id)

    def journal_lock(self, day: date) -> Path:
        """Serialises appends to (and forgets in) one day's journal."""
        return self.locks_dir / f"journal-{day.isoformat()}.lock"

    @property
    def ingest_lock(self) -> Path:
        """Serialises ingestion (and a forget of the session corpus)."""
        return self.ingest_checkpoints_dir / "ingest.lock"

    def ingest_checkpoint(self, session_id: str) -> Path:
        """How far a transcript was ingested (letters, digits, ``_.-`` kept)."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)
        return self.ingest_checkpoints_dir / f"{safe}.json"

    def dream_intent_path(self, name: str) -> Path:
        """The intent record of a safe write of ``name`` (MEMORY.md, USER.md)."""
        stem = name.removesuffix(".md").lower()
        intent = "intent.json" if name == "MEMORY.md" else f"intent-{stem}.json"
        return self.dream_state_path.parent / intent

    def integration_dir(self, *parts: str) -> Path:
        """State of an integration (``claude-code``, ``imports/<format>``)."""
        return self.agent_dir.joinpath("integrations", *parts)

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

    # git sync (reverie.sync): a private git dir whose work tree is the workspace
    @property
    def sync_git_dir(self) -> Path:  # the repository `reverie sync` commits to
        return self.state_dir / "sync.git"

    @property
    def sync_git_lock(self) -> Path:  # one sync (or pairing) at a time per workspace
        return self.state_dir / "sync.git.lock"

    @property
    def device_path(self) -> Path:  # this device's id, name and pairing key (never synced)
        return self.state_dir / "device.json"

    @property
    def replaced_key_path(self) -> Path:  # the origin key a pairing replaced
        return self.state_dir / "origin.key.before-pair"

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
    def daemon_endpoint(self) -> Path:
        return daemon_endpoint_path(self.state_dir, self.agent)

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
        return load_or_create_key(self.origin_key_path, self._signed_files, self.key_note_path)

    @property
    def key_note_path(self) -> Path:
        """Written when a new key was created over lines signed with a lost one."""
        return self.state_dir / "origin.key.new"

    def _signed_files(self) -> list[str]:
        """Marker files (journals, the session corpus) holding signed lines."""
        memory = self.root / "memory"
        candidates = [*sorted(memory.glob("*.md")), *sorted(self.corpus_dir.rglob("*.md"))]
        return [self.relpath(p) for p in signed_files(candidates)]

    def key_warning(self) -> str | None:
        """A loud warning while the key in use is one created over lines signed with a
        lost key (see :func:`reverie.storage.origin_key.key_warning`)."""
        return key_warning(self.origin_key_path, self.key_note_path)

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
        from .walk import walk

        return walk(self)


__all__ = [
    "FOLDERS",
    "TRANSCRIPT_SUFFIX",
    "Workspace",
    "checkpoint_paths",
    "daemon_endpoint_path",
    "hooks_log_path",
    "lock_beside",
    "transcript_name",
]
