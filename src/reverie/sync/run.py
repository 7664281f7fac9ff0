"""``reverie sync``: commit, fetch, gate and merge, push, re-index (the I/O edge).

The merge is done here, after ``git fetch``, not by a git merge driver: each merged
file is computed in memory from the three blobs, written to the workspace atomically,
and only then is the merge commit made. A kill -9 at any point leaves every file
either as it was or merged (never half of one, never a ``<<<<<<<``), and no commit
claims a merge the files do not hold; the next run commits what is on disk and merges
again, which converges because every merge here is idempotent (the union keeps a line
both sides hold once; an entry region this side already holds is taken as is). A
merge driver would run inside ``git merge``, whose own state (``MERGE_HEAD``, a
half-checked-out index) is what a kill leaves broken.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import SyncError
from ..storage import reader
from ..storage.files import atomic_write_bytes
from ..storage.tombstones import Tombstones
from ..storage.workspace import SYNC_DEVICES, SYNC_LEASE, SYNC_META, SYNC_STONES, Workspace
from . import forgotten
from .devices import Device, device_list, load_device, paired, read_list
from .entry_merge import conflicts
from .git import BRANCH, Git
from .policy import ABSENT, malformed_path
from .seal import seal_line, sealed, verify_lease

META, DEVICES, LEASE = SYNC_META, SYNC_DEVICES, SYNC_LEASE
REMOTE = f"refs/remotes/origin/{BRANCH}"
LAST = "refs/reverie/last-remote"  # the remote tip this device last merged or pushed
HEAD = f"refs/heads/{BRANCH}"
Step = Callable[[str, int, int], None]  # (step, done, total)


@dataclass
class SyncReport:
    """What one sync did (``reverie sync --json``)."""

    remote: str
    committed: bool = False
    merged_files: int = 0
    conflicts: list[str] = field(default_factory=list)
    set_aside: int = 0  # lines of unsealed commits kept lowered in memory/imports/sync/
    # remote commits no paired device sealed (a hand commit, a replayed seal): their
    # additions were kept untrusted and their deletions ignored
    unsealed: list[str] = field(default_factory=list)
    forgotten_removed: int = 0
    pushed: bool = False
    head: str = ""
    reindexed: object = None
    # the lines a merge removed (another device forgot them): never printed, only handed
    # to this device's own forget, which clears its transcripts, logs and caches too
    removed: list[str] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, object]:
        d = dict(self.__dict__)
        del d["removed"]
        d["reindexed"] = None if self.reindexed is None else str(self.reindexed)
        return d


def open_conflicts(root: Path) -> list[str]:
    """``FILE: id`` of every sync conflict still open in the root files."""
    out = []
    for path in sorted(root.glob("*.md")):
        try:  # the one reader policy: a FIFO or a link out is never opened
            text = reader.read_text(path, root)
        except OSError:
            continue
        out += [f"{path.name}: {c.id}" for c in conflicts(text)]
    return out


class Syncer:
    """One workspace's side of the sync (see the module doc)."""

    def __init__(
        self,
        ws: Workspace,
        *,
        now: Callable[[], datetime],
        reindex: Callable[[], object] = lambda: None,
        progress: Step | None = None,
        wait: float = 60.0,
    ) -> None:
        self.ws = ws
        self.git = Git(ws.sync_git_dir, ws.root)
        self.now = now
        self.reindex = reindex
        self.step = progress or (lambda *_: None)
        self.wait = wait
        self.extra: dict[str, bytes | None] = {}  # repository files the next commit sets

    def lock(self) -> FileLock:
        return FileLock(str(self.ws.sync_git_lock), timeout=self.wait)

    @property
    def device(self) -> Device:
        return load_device(self.ws.device_path)

    # -- the whole sync --------------------------------------------------------------
    def sync(self, remote: str | None = None, *, pushes: int = 3) -> SyncReport:
        self.ws.require()
        try:
            with self.lock():
                return self._sync(remote, pushes)
        except Timeout:
            raise SyncError("another reverie sync is running on this workspace") from None

    def _sync(self, remote: str | None, pushes: int) -> SyncReport:
        git = self.git
        git.ensure()
        if remote:
            git.set_remote(remote)
        url = git.remote()
        if url is None:
            raise SyncError("no remote configured: run `reverie sync --remote URL` once")
        report = SyncReport(url)
        key, dev = self.ws.origin_key(), self.device
        self.step("fetch", 0, 5)
        git.fetch()  # an unreachable remote stops here: nothing local is touched
        theirs = self.check_remote(key)
        self.step("commit", 1, 5)
        head, report.committed = self.commit_local(key, dev, found=theirs is None)
        for attempt in range(pushes):
            if attempt:
                self.step("fetch", 1, 5)
                git.fetch()
                theirs = self.check_remote(key)
            if theirs is not None and not git.is_ancestor(theirs, head):
                self.step("merge", 2, 5)
                head = self.merge(key, dev, head, theirs, report)
            self.step("push", 3, 5)
            if theirs == head or git.push(head):
                git.set_ref(LAST, head)
                report.pushed = True
                break
        else:
            raise SyncError("the remote kept moving while this sync ran; run it again")
        report.head = head
        self.step("index", 4, 5)
        report.reindexed = self.reindex()
        self.step("done", 5, 5)
        report.conflicts = self.open_conflicts()
        return report

    def check_remote(self, key: bytes) -> str | None:
        """The remote tip, after refusing a rewritten remote and an unpaired device."""
        git = self.git
        theirs, last = git.rev(REMOTE), git.rev(LAST)
        if last is not None and (theirs is None or not git.is_ancestor(last, theirs)):
            raise SyncError(
                f"the remote {git.remote()} was rewritten (force-pushed or reset): its "
                f"history no longer holds {last[:12]}, which this device synced. Nothing "
                "was merged; check the remote, then push this device's history back"
            )
        if theirs is not None and theirs != last:  # a tip merged before was checked then
            bad = [p for p in git.paths(theirs) if malformed_path(p)]
            if bad:
                raise SyncError(
                    f"the remote's commit {theirs[:12]} holds a malformed path ({bad[0]!r}): "
                    "nothing was merged; remove that commit from the remote (a paired "
                    "device's history before it is intact), then sync again"
                )
        if theirs is not None:
            raw = git.read([(theirs, DEVICES)])[(theirs, DEVICES)]
            if raw is not None and not paired(key, raw):
                raise SyncError(
                    f"this device is not paired with the memory at {git.remote()}: run "
                    "`reverie device pair` here, then approve it on a paired device"
                )
        return theirs

    # -- steps -----------------------------------------------------------------------
    def commit_local(self, key: bytes, dev: Device, *, found: bool) -> tuple[str, bool]:
        """Commit the workspace as it is (plus this device's metadata); sealed."""
        git = self.git
        head = git.rev(HEAD)
        if head is not None:
            git.run("reset", "-q", head)  # the index is HEAD's (a kill may have left it)
        git.stage_workspace()
        raw = git.read([(head, DEVICES)])[(head, DEVICES)] if head else None
        if raw is None and found:  # the first device, on an empty remote, founds the list
            git.stage_blob(DEVICES, device_list(key, [{"id": dev.id, "name": dev.name}]))
        for path, data in self.extra.items():  # a pairing's device list, the lease
            git.stage_blob(path, data)
        self.stage_forgotten(key, dev)
        tree = git.write_tree()
        if head is not None and tree == git.tree_of(head):
            return head, False
        parents = [head] if head else []
        sha = git.commit(tree, parents, self.message(key, dev, tree, parents, "commit"))
        git.set_ref(HEAD, sha)
        return sha, True

    def message(self, key: bytes, dev: Device, tree: str, parents: list[str], what: str) -> str:
        seal = seal_line(key, tree, parents, dev.id)
        return f"reverie sync: {what} on {dev.name}\n\n{seal}\n"

    def stage_forgotten(self, key: bytes, dev: Device) -> None:
        stones = Tombstones(self.ws.tombstones_path)
        if len(stones):
            rows = [s.__dict__ for s in stones.stones]
            data = forgotten.export(key, dev.id, stones.salt, rows)
            self.git.stage_blob(SYNC_STONES.format(dev.id), data)

    def is_sealed(self, key: bytes, sha: str) -> bool:
        return sealed(key, *self.git.sealed_parts(sha))

    def gate_commit(self, key: bytes, theirs: str, base: str | None) -> str | object | None:
        """ABSENT when ``theirs`` is sealed; else the state its unsealed changes are
        gated against: the newest sealed commit on its first-parent line that is not
        older than this device's own history (the merge base), or the merge base
        itself (None: no common history, so nothing of it is vouched for). A sealed
        commit the pusher put under an unsealed one, from history this device already
        holds, vouches for nothing: taking its files would roll back every change made
        since."""
        git = self.git
        for sha in git.first_parents(theirs):
            if base is not None and git.is_ancestor(sha, base):
                return base  # this device's own history: what it already trusts
            if self.is_sealed(key, sha):
                return ABSENT if sha == theirs else sha
        return base

    def merge(self, key: bytes, dev: Device, head: str, theirs: str, report: SyncReport) -> str:
        from .apply import merge_trees

        git = self.git
        base = git.merge_base(head, theirs)
        gate = self.gate_commit(key, theirs, base)
        if gate is not ABSENT:
            report.unsealed.append(theirs)
        merged = merge_trees(self, key, base, head, theirs, gate, report)
        git.run("reset", "-q", head)
        git.stage(merged)
        tree = git.write_tree()
        if base == head and tree == git.tree_of(theirs):
            git.set_ref(HEAD, theirs)  # a fast-forward: nothing of ours to add
            return theirs
        parents = [head, theirs]
        sha = git.commit(tree, parents, self.message(key, dev, tree, parents, "merge"))
        git.set_ref(HEAD, sha)
        return sha

    def stone_sets(self, key: bytes, commit: str) -> list[forgotten.StoneSet]:
        git = self.git
        names = [
            p
            for p in git.out("ls-tree", "-r", "--name-only", commit, f"{META}forgotten/").split(
                "\n"
            )
            if p
        ]
        blobs = git.read([(commit, p) for p in names])
        sets = [forgotten.load(key, raw) for raw in blobs.values() if raw is not None]
        local = Tombstones(self.ws.tombstones_path)
        if len(local):
            sets.append(
                forgotten.StoneSet(
                    local.salt,
                    frozenset(s.hash for s in local.stones if s.kind == "line"),
                    tuple(
                        (
                            n,
                            frozenset(
                                s.hash for s in local.stones if s.kind != "line" and s.length == n
                            ),
                        )
                        for n in sorted({s.length for s in local.stones if s.kind != "line"})
                    ),
                )
            )
        return [s for s in sets if s is not None]

    def open_conflicts(self) -> list[str]:
        return open_conflicts(self.ws.root)

    def devices(self) -> list[dict[str, object]]:
        head = self.git.rev(HEAD) if (self.ws.sync_git_dir / "HEAD").exists() else None
        raw = self.git.read([(head, DEVICES)])[(head, DEVICES)] if head else None
        return read_list(raw)[0]

    def write_file(self, path: str, data: bytes | None) -> None:
        target = self.ws.root / path
        if data is None:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)

    def lease(self) -> dict[str, object] | None:
        """The dreaming lease, when a paired device took it (its HMAC verifies with the
        key and its device is on the paired list); a forged or stale-format lease is
        no lease."""
        head = self.git.rev(HEAD)
        if head is None:
            return None
        blobs = self.git.read([(head, LEASE), (head, DEVICES)])
        raw = blobs[(head, LEASE)]
        try:
            lease = dict(json.loads(raw)) if raw else None
        except (ValueError, TypeError):
            return None
        if lease is None or not verify_lease(self.ws.origin_key(), lease):
            return None
        ids = {str(d.get("id")) for d in read_list(blobs[(head, DEVICES)])[0]}
        return lease if str(lease.get("device")) in ids else None


__all__ = ["DEVICES", "LEASE", "META", "SyncReport", "Syncer"]
