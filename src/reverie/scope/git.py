"""Finding a directory's repository and project key by reading ``.git`` (R-SCOPE-1).

Never spawns git (the spec: never one git call per message). From a directory it walks
up to the first ``.git``:

- a directory: the repository's git dir (a clone's main worktree);
- a file ``gitdir: <path>``: a linked worktree (or a submodule); its git dir holds a
  ``commondir`` file naming the shared git dir, whose ``config`` has the remotes.

The key comes from the preferred remote's URL (:mod:`.remote`). A remote that is a
local path (``git clone /some/repo``) names the project of the repository there, so a
local clone shares its original's key; a path that is no repository gives a local key
from that path. No remote at all: a local key from the main worktree's root, which its
linked worktrees share.

Cached per process: a directory's git dir once found, and each config file's key while
its size and modification time stay the same (one ``stat`` per look-up). A directory
outside any repository is looked at again each time (a few ``stat`` calls), so a
repository created there later is seen.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..records import Record

MAX_LINK_DEPTH = 3  # a local remote naming a local remote naming ...


class Repo(Record):
    """Where a repository's files are: its worktree root (the worktree this directory is
    in), git dir (``.git``, or ``.git/worktrees/<name>`` for a linked worktree) and
    common git dir (shared by the main worktree and every linked one)."""

    __slots__ = ("common_dir", "git_dir", "root")

    def __init__(self, root: Path, git_dir: Path, common_dir: Path) -> None:
        self.root, self.git_dir, self.common_dir = root, git_dir, common_dir

    @property
    def main_root(self) -> Path:
        """The main worktree's root (the common dir's parent), or the bare repo itself."""
        c = self.common_dir
        return c.parent if c.name == ".git" else c


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _git_dir_of(dot_git: Path) -> Path | None:
    """The git dir a ``.git`` entry stands for (a directory, or a ``gitdir:`` file)."""
    if dot_git.is_dir():
        return dot_git if (dot_git / "HEAD").exists() or (dot_git / "config").exists() else None
    text = _read(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.split(":", 1)[1].strip())
    if not target.is_absolute():
        target = dot_git.parent / target
    return Path(os.path.realpath(target)) if target.is_dir() else None


def _common_dir(git_dir: Path) -> Path:
    text = _read(git_dir / "commondir")
    if not text or not text.strip():
        return git_dir
    common = Path(text.strip())
    if not common.is_absolute():
        common = git_dir / common
    common = Path(os.path.realpath(common))
    return common if common.is_dir() else git_dir


def _bare(path: Path) -> Repo | None:
    """``path`` itself as a bare repository (HEAD, config and objects in it)."""
    if (path / "HEAD").is_file() and (path / "config").is_file() and (path / "objects").is_dir():
        return Repo(path, path, _common_dir(path))
    return None


def find_repo(directory: str | Path) -> Repo | None:
    """The repository ``directory`` lies in (walking up), or None. No process spawned."""
    here = Path(os.path.realpath(directory))
    if here.is_file():
        here = here.parent
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if os.path.lexists(dot_git):
            git_dir = _git_dir_of(dot_git)
            if git_dir is not None:
                return Repo(candidate, git_dir, _common_dir(git_dir))
        if candidate.name.endswith(".git") or candidate == here:
            bare = _bare(candidate)
            if bare is not None:
                return bare
    return None


class ProjectKeys:
    """Project keys by directory, cached per process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._repos: dict[str, Repo | None] = {}
        self._keys: dict[str, tuple[tuple[int, int], str]] = {}

    def clear(self) -> None:
        with self._lock:
            self._repos.clear()
            self._keys.clear()

    def repo(self, directory: str | Path) -> Repo | None:
        d = os.path.abspath(directory)
        with self._lock:
            if d in self._repos:
                return self._repos[d]
        found = find_repo(d)
        if found is not None:  # "no repository" is not cached: a later `git init` counts
            with self._lock:
                self._repos[d] = found
        return found

    def key(self, directory: str | Path) -> str | None:
        """The project key of the repository ``directory`` lies in; None outside one, and
        None for a directory that cannot be read or named (scope fails closed: no
        project, never a reply blocked by a bad ``cwd``)."""
        try:
            return self._key(directory, depth=0)
        except (OSError, ValueError):
            return None

    def _key(self, directory: str | Path, depth: int) -> str | None:
        repo = self.repo(directory)
        if repo is None:
            return None
        config = repo.common_dir / "config"
        try:
            st = config.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = (0, -1)
        cache_id = str(config)
        with self._lock:
            hit = self._keys.get(cache_id)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        key = self._derive(repo, _read(config) or "", depth)
        with self._lock:
            self._keys[cache_id] = (stamp, key)
        return key

    def _derive(self, repo: Repo, config: str, depth: int) -> str:
        from .remote import local_key, parse_remote, preferred_remote, remote_key, remote_urls

        url = preferred_remote(remote_urls(config))
        remote = parse_remote(url) if url else None
        if remote is None:
            return local_key(str(repo.main_root))
        if remote.host is not None:
            return remote_key(remote) or local_key(str(repo.main_root))
        target = Path(remote.path)
        if not target.is_absolute():
            target = repo.main_root / target
        target = Path(os.path.realpath(target))
        if depth < MAX_LINK_DEPTH and target.is_dir() and target != repo.main_root:
            linked = self._key(target, depth + 1)
            if linked is not None:
                return linked
        return local_key(str(target))


KEYS = ProjectKeys()
"""The process-wide cache."""


def project_key(directory: str | Path) -> str | None:
    """The project key of ``directory`` (None outside a repository), cached per process."""
    return KEYS.key(directory)


__all__ = ["KEYS", "ProjectKeys", "Repo", "find_repo", "project_key"]
