"""Write safety for MEMORY.md (R-DREAM-9): optimistic, lock-free, nothing lost.

MEMORY.md is hashed when the dream builds its input and re-checked when writing. No
locks on the file: editors stay free. The replacement is built so that a person's
edit can never be lost, whatever the timing:

1. the new version is written to a temp file next to MEMORY.md and fsynced;
2. the temp file and MEMORY.md are *exchanged* atomically (``renameat2`` with
   ``RENAME_EXCHANGE`` on Linux, ``renamex_np`` with ``RENAME_SWAP`` on macOS): no
   moment without a MEMORY.md, and the temp name now holds exactly the bytes that were
   replaced;
3. those bytes are hashed: equal to what the dream read, they become the pre-image;
   different (a person saved in between), the two are exchanged back, the person's
   version is MEMORY.md again and the caller takes the append-only path on it.

Where the file system cannot exchange, the current MEMORY.md is renamed aside (so
again the replaced bytes are exactly the set-aside file), re-checked, and the new file
is put in place with ``link``, which never replaces a file a person created meanwhile.

The last ``preimages_kept`` pre-images are kept in the state dir. Every change appends
a summary to DREAMS.md.

USER.md (R-USER-1) is written the same way: ``MemoryFile(ws, name="USER.md")`` has its
own pre-images (``USER.*.md``), temp files and intent record.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ..errors import ParseError, PathEscapeError, ReverieError, WorkspaceError
from ..provenance.paths import CURATED_FILES
from ..storage import reader
from ..storage.files import atomic_write, atomic_write_bytes, fsync_dir
from ..storage.reader import undecodable
from ..storage.tombstones import Tombstones
from ..storage.workspace import Workspace

PREIMAGE_GLOB = "MEMORY.*.md"
TEMP_PREFIX = ".MEMORY.md."  # the temp files of a write (what a killed write leaves)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Exchange:
    """Atomic exchange of two paths, where the OS has it; ``None`` when it cannot."""

    def __init__(self) -> None:
        self.call = None
        self.flags = 0
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            if sys.platform.startswith("linux"):
                self.call, self.flags = libc.renameat2, 2  # RENAME_EXCHANGE
            elif sys.platform == "darwin":
                self.call, self.flags = libc.renamex_np, 2  # RENAME_SWAP

    def __call__(self, a: Path, b: Path) -> bool | None:
        """True: exchanged. None: not supported here (use the fallback)."""
        if self.call is None:
            return None
        fa, fb = os.fsencode(a), os.fsencode(b)
        if sys.platform.startswith("linux"):
            rc = self.call(-100, fa, -100, fb, self.flags)  # AT_FDCWD
        else:
            rc = self.call(fa, fb, self.flags)
        if rc == 0:
            return True
        err = ctypes.get_errno()
        if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            self.call = None
            return None
        raise OSError(err, os.strerror(err), str(b))


exchange = _Exchange()


class MemoryFile:
    """MEMORY.md, its pre-images and DREAMS.md, as the dream writes them."""

    def __init__(self, ws: Workspace, *, preimages_kept: int, name: str = "MEMORY.md") -> None:
        # one symlink policy: a MEMORY.md linked inside the workspace is written through
        # (the link survives); one linked out of it is refused, as bootstrap and index do.
        # ``name``: another curated root file (USER.md) written the same way.
        self._ws = ws
        self.name = name
        self._stem = name.removesuffix(".md")
        self.temp_prefix = f".{name}."
        self.path = ws.memory_path if name == "MEMORY.md" else ws.root / name
        if self.path.is_symlink():
            try:
                self.path = ws.check_inside(self.path)
            except PathEscapeError as exc:
                self._escape: PathEscapeError | None = exc
            else:
                self._escape = None
        else:
            self._escape = None
        self.preimage_dir = ws.preimages_dir
        self.dreams_log = ws.dreams_log
        self.preimages_kept = max(1, preimages_kept)
        self.intent_path = ws.dream_intent_path(name)
        self._own_dirs = (ws.dream_state_path.parent, ws.preimages_dir, ws.dream_reports_dir)

    # -- a write and its record, as one unit a kill cannot split --------------------------
    def _refuse_escape(self) -> None:
        if self._escape is not None:
            raise self._escape

    def commit(self, expected_sha: str, new: str, summary: str) -> bool:
        """:meth:`replace_if_unchanged`, then the DREAMS.md ``summary``. An intent record
        (the summary and both hashes) is written first and removed last, so a dream
        killed in between is completed by the next run's :meth:`recover`."""
        self._refuse_escape()
        self.check_writable()
        intent = {"old": expected_sha, "new": sha(new), "summary": summary}
        atomic_write(self.intent_path, json.dumps(intent, ensure_ascii=False))
        try:
            if not self.replace_if_unchanged(expected_sha, new):
                return False
            self.append_dreams(summary)
            return True
        finally:
            self.intent_path.unlink(missing_ok=True)

    def recover(self) -> list[str]:
        """Tie up what a killed dream left: set-aside versions of MEMORY.md become
        pre-images, other temp files go, and an interrupted write gets its DREAMS.md
        summary. Call with the dream lock held. Returns what was repaired."""
        notes = []
        current = self.read()
        for tmp in sorted(self.path.parent.glob(self.temp_prefix + "*.tmp")):
            with contextlib.suppress(OSError):
                if self.settle_temp(tmp):
                    notes.append(f"kept {tmp.name} (left by a killed write) as a pre-image")
                else:
                    tmp.unlink()
        for tmp in self.path.parent.glob(f".{self.dreams_log.name}.*.tmp"):
            tmp.unlink(missing_ok=True)
        for folder in self._own_dirs:
            if folder.is_dir():
                for tmp in folder.glob(".*.tmp"):
                    tmp.unlink(missing_ok=True)
        try:
            intent = json.loads(self.intent_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return notes
        except ValueError:  # torn before its own atomic rename cannot happen; be safe
            intent = {}
        summary = str(intent.get("summary", ""))
        log = self.dreams_log
        dreams = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        now = sha(current)
        written = now == intent.get("new") or (
            now != intent.get("old")
            and any(_sha_bytes(p.read_bytes()) == intent.get("old") for p in self.preimages())
        )
        if summary and written and summary not in dreams:
            note = "- note: recorded by the next run; the dream that wrote it was interrupted"
            if now != intent.get("new"):
                note += " (MEMORY.md has been edited since)"
            self.append_dreams(summary + note + "\n")
            notes.append("completed the DREAMS.md summary of an interrupted dream")
        self.intent_path.unlink(missing_ok=True)
        return notes

    def settle_temp(self, tmp: Path) -> bool:
        """A temp file a killed write of this file left (``.MEMORY.md.*.tmp``): True when
        it held a version found nowhere else and is now a pre-image; False when its
        bytes are the file's, a pre-image's or empty (the caller may delete it)."""
        data = tmp.read_bytes()
        known = {sha(""), *(_sha_bytes(p.read_bytes()) for p in self.preimages())}
        if self.path.exists():
            known.add(_sha_bytes(self.path.read_bytes()))
        if _sha_bytes(data) in known:
            return False
        self.keep_preimage(tmp)  # may be the only copy of a replaced version
        return True

    def read(self) -> str:
        """The file's text; invalid UTF-8 reads replaced (a writer checks
        :meth:`check_writable` first, so a replaced byte is never written back)."""
        self._refuse_escape()
        try:
            return reader.read(self.path, self._ws.root).data.decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        except reader.Refused as exc:  # a FIFO would hang every reader forever
            raise WorkspaceError(f"{self.name}: {exc}") from None

    def problem(self) -> str | None:
        """Why the file cannot be rewritten byte-exactly (invalid UTF-8: file, line,
        byte), or None."""
        try:
            return undecodable(reader.read(self.path, self._ws.root).data, self.name)
        except FileNotFoundError:
            return None
        except reader.Refused as exc:
            return f"{self.name}: {exc}"

    def check_writable(self) -> None:
        """:class:`ParseError` when rewriting the file would change bytes it holds."""
        problem = self.problem()
        if problem is not None:
            raise ParseError(f"{problem}; not rewritten (fix or remove that byte)")

    def replace_if_unchanged(self, expected_sha: str, new: str) -> bool:
        """Replace the file with ``new`` if it still hashes to ``expected_sha``, keeping
        exactly the bytes it replaced as a pre-image. False when it changed: then the
        file is the person's version, and any version that was briefly set aside is a
        pre-image, so nothing a person saved is ever lost. A file that is not clean
        UTF-8 is never rewritten (:class:`ParseError` naming file, line and byte)."""
        self.check_writable()
        if sha(self.read()) != expected_sha:
            return False
        tmp = self._stage(new.encode("utf-8"))
        try:
            if not self.path.exists():
                return self._link_new(tmp)
            swapped = exchange(tmp, self.path)
            if swapped is None:
                return self._replace_by_rename(tmp, expected_sha)
            fsync_dir(self.path.parent)
            if _sha_bytes(tmp.read_bytes()) == expected_sha:
                self.keep_preimage(tmp)
                return True
            exchange(tmp, self.path)  # a person saved in between: theirs goes back
            if tmp.read_bytes() != new.encode("utf-8"):
                # they saved again meanwhile: the latest goes back, the other is kept
                exchange(tmp, self.path)
                self.keep_preimage(tmp)
            fsync_dir(self.path.parent)
            return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def _stage(self, data: bytes) -> Path:
        fd, name = tempfile.mkstemp(prefix=self.temp_prefix, suffix=".tmp", dir=self.path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        return Path(name)

    def _link_new(self, tmp: Path) -> bool:
        try:
            os.link(tmp, self.path)  # never replaces a file created meanwhile
        except FileExistsError:
            return False
        fsync_dir(self.path.parent)
        return True

    def _replace_by_rename(self, tmp: Path, expected_sha: str) -> bool:
        aside = tmp.with_name(tmp.name.removesuffix(".tmp") + ".aside.tmp")
        os.rename(self.path, aside)  # exactly the bytes being replaced
        if _sha_bytes(aside.read_bytes()) != expected_sha:
            with contextlib.suppress(FileExistsError):
                os.link(aside, self.path)
            self.keep_preimage(aside)
            return False
        ok = self._link_new(tmp)
        self.keep_preimage(aside)
        return ok

    def keep_preimage(self, src: Path) -> Path:
        """Move ``src`` (a set-aside MEMORY.md) into the pre-images, pruning old ones."""
        self.preimage_dir.mkdir(parents=True, exist_ok=True)
        path = self._preimage_name()
        try:
            os.rename(src, path)  # the same inode: an editor still writing lands there too
        except OSError:  # another file system
            atomic_write_bytes(path, src.read_bytes())
            src.unlink(missing_ok=True)
        fsync_dir(self.preimage_dir)
        self._prune()
        return path

    def _preimage_name(self) -> Path:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        path = self.preimage_dir / f"{self._stem}.{stamp}.md"
        n = 0
        while path.exists():
            n += 1
            path = self.preimage_dir / f"{self._stem}.{stamp}-{n}.md"
        return path

    def _prune(self) -> None:
        for old in self.preimages()[: -self.preimages_kept]:
            old.unlink(missing_ok=True)

    def save_preimage(self, text: str) -> Path:
        path = self._preimage_name()
        atomic_write(path, text)
        self._prune()
        return path

    def preimages(self) -> list[Path]:
        if not self.preimage_dir.exists():
            return []
        return sorted(self.preimage_dir.glob(f"{self._stem}.*.md"))

    def restore(self, name: str | None = None) -> Path:
        """Put a pre-image back (the newest by default); the current file becomes one."""
        self._refuse_escape()
        images = self.preimages()
        if not images:
            raise ReverieError(f"no pre-image of {self.name} to restore")
        chosen = images[-1] if name is None else next((p for p in images if p.name == name), None)
        if chosen is None:
            raise ReverieError(f"no pre-image named {name!r}; see `reverie dream restore --list`")
        forgotten = Tombstones(self._ws.tombstones_path)  # a restore never undoes a forget
        kept = chosen.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        text = "\n".join(ln for ln in kept if not forgotten.blocks(ln))
        self.save_preimage(self.read())
        atomic_write_bytes(self.path, text.encode("utf-8", errors="surrogateescape"))  # its bytes
        return chosen

    def append_dreams(self, summary: str) -> None:
        """Append one change summary to DREAMS.md (an audit log for people)."""
        path = self.dreams_log
        current = path.read_bytes() if path.exists() else b"# Dreams\n\n"  # a person's bytes kept
        if not current.endswith(b"\n"):
            current += b"\n"
        atomic_write_bytes(path, current + b"\n" + summary.encode("utf-8"))


def keep_only_copies(ws: Workspace, preimages_kept: int) -> Callable[[Path], bool]:
    """For :func:`reverie.storage.files.sweep_temp`: a temp file of MEMORY.md or USER.md
    holding the only copy of a version becomes a pre-image instead of being swept
    (True: handled, do not delete)."""
    files = [MemoryFile(ws, preimages_kept=preimages_kept, name=n) for n in CURATED_FILES]

    def keep(tmp: Path) -> bool:
        for mf in files:
            if tmp.parent == mf.path.parent and tmp.name.startswith(mf.temp_prefix):
                return mf.settle_temp(tmp)
        return False

    return keep


__all__ = ["PREIMAGE_GLOB", "TEMP_PREFIX", "MemoryFile", "exchange", "keep_only_copies", "sha"]
