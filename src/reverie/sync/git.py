"""The user's git, run as a subprocess: a private git dir in the state dir whose work
tree is the workspace (so the workspace stays pure Markdown: no ``.git`` in it).

One subprocess per sync step (add, write-tree, fetch, push, a batch read of blobs),
never one per file or per message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import SyncError

BRANCH = "main"
TIMEOUT = 120.0  # a fetch or push over a slow link; an unreachable host fails sooner


class Git:
    """git with ``--git-dir`` in the state dir and ``--work-tree`` the workspace."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        exe = shutil.which("git")
        if exe is None:
            raise SyncError("git is not installed (reverie sync uses the git on PATH)")
        self.exe = exe
        self.git_dir = git_dir
        self.work_tree = work_tree

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        full = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",  # an unreachable remote fails, never asks
            "GIT_AUTHOR_NAME": "reverie",
            "GIT_AUTHOR_EMAIL": "reverie@localhost",
            "GIT_COMMITTER_NAME": "reverie",
            "GIT_COMMITTER_EMAIL": "reverie@localhost",
            **(env or {}),
        }
        cmd = [self.exe, f"--git-dir={self.git_dir}", f"--work-tree={self.work_tree}", *args]
        try:
            done = subprocess.run(
                cmd, input=input, env=full, capture_output=True, timeout=TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            raise SyncError(
                f"git {args[0]} took over {TIMEOUT:.0f} s; nothing was changed"
            ) from None
        if check and done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SyncError(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return done

    def out(self, *args: str, **kw: object) -> str:
        return self.run(*args, **kw).stdout.decode("utf-8").strip()  # type: ignore[arg-type]

    # -- the repository --------------------------------------------------------------
    def ensure(self) -> None:
        """The private repository (created once; excludes what never travels)."""
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [self.exe, "init", "-q", "--bare", "-b", BRANCH, str(self.git_dir)],
            check=True,
            capture_output=True,
        )
        self.run("config", "core.bare", "false")
        self.run("config", "core.autocrlf", "false")
        self.run("config", "core.quotepath", "false")
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text("*.lock\n*.tmp\n.*.tmp\nINTENTS.md\n.reverie/\n")

    def remote(self) -> str | None:
        done = self.run("config", "--get", "remote.origin.url", check=False)
        return done.stdout.decode().strip() or None

    def set_remote(self, url: str) -> None:
        if self.remote() is None:
            self.run("remote", "add", "origin", url)
        else:
            self.run("remote", "set-url", "origin", url)

    def rev(self, ref: str) -> str | None:
        done = self.run("rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return done.stdout.decode().strip() or None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        done = self.run("merge-base", a, b, check=False)
        return done.stdout.decode().strip() or None

    def tree_of(self, commit: str) -> str:
        return self.out("rev-parse", commit + "^{tree}")

    def message(self, commit: str) -> str:
        return self.out("log", "-1", "--format=%B", commit)

    def sealed_parts(self, commit: str) -> tuple[str, list[str], str]:
        """What a seal covers: the commit's tree, its parents in order, its message
        (one ``git log`` call)."""
        out = self.out("log", "-1", "--format=%T%n%P%n%B", commit)
        tree, _, rest = out.partition("\n")
        parents, _, message = rest.partition("\n")
        return tree, parents.split(), message

    def first_parents(self, commit: str, limit: int = 200) -> list[str]:
        return self.out("rev-list", "--first-parent", f"--max-count={limit}", commit).split()

    def paths(self, commit: str) -> list[str]:
        """Every file path in ``commit``'s tree (git's own bytes, never unquoted)."""
        raw = self.run("ls-tree", "-r", "--name-only", "-z", commit).stdout
        return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]

    def changed(self, a: str | None, b: str) -> set[str]:
        """Paths that differ between commits ``a`` (None: empty) and ``b``."""
        if a is None:
            return set(self.out("ls-tree", "-r", "--name-only", "-z", b).split("\0")) - {""}
        return set(self.out("diff", "--name-only", "--no-renames", "-z", a, b).split("\0")) - {""}

    def read(
        self, pairs: Iterable[tuple[str | None, str]]
    ) -> dict[tuple[str | None, str], bytes | None]:
        """The blobs ``commit:path`` in one ``cat-file --batch`` (None: absent)."""
        keys = list(pairs)
        if not keys:
            return {}
        query = "".join(f"{c}:{p}\n" for c, p in keys if c is not None).encode()
        raw = self.run("cat-file", "--batch", input=query).stdout if query else b""
        found: dict[tuple[str | None, str], bytes | None] = {}
        pos = 0
        for key in keys:
            if key[0] is None:
                found[key] = None
                continue
            nl = raw.index(b"\n", pos)
            head = raw[pos:nl].split()
            if head[-1] == b"missing":
                found[key], pos = None, nl + 1
                continue
            size = int(head[2])
            found[key] = raw[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        return found

    # -- commits ---------------------------------------------------------------------
    def stage_workspace(self) -> None:
        """The index holds the workspace as it is (the ``.reverie/`` metadata kept)."""
        self.run("add", "-A", "--", ".", ":(exclude).reverie")

    def stage_blob(self, path: str, data: bytes | None) -> None:
        self.stage({path: data})

    def stage(self, files: Mapping[str, bytes | None]) -> None:
        """Set ``files`` in the index (None: removed): two subprocesses for any number."""
        if not files:
            return
        import tempfile

        rows: list[str] = []
        with tempfile.TemporaryDirectory(dir=self.git_dir) as tmp:
            written = []
            for n, (path, data) in enumerate(files.items()):
                if data is None:
                    rows.append(f"0 {'0' * 40}\t{path}")
                    continue
                blob = Path(tmp) / str(n)
                blob.write_bytes(data)
                written.append((path, str(blob)))
            if written:
                paths = "".join(b + "\n" for _, b in written).encode()
                shas = self.out("hash-object", "-w", "--no-filters", "--stdin-paths", input=paths)
                rows += [
                    f"100644 {sha}\t{p}" for (p, _), sha in zip(written, shas.split(), strict=True)
                ]
        self.run("update-index", "--index-info", input="".join(r + "\n" for r in rows).encode())

    def read_tree(self, commit: str) -> None:
        self.run("read-tree", commit)

    def write_tree(self) -> str:
        return self.out("write-tree")

    def commit(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        sha = self.out(*args, input=message.encode())
        return sha

    def set_ref(self, ref: str, sha: str) -> None:
        self.run("update-ref", ref, sha)

    # -- the remote ------------------------------------------------------------------
    def fetch(self, *refspecs: str) -> None:
        specs = refspecs or (f"+refs/heads/{BRANCH}:refs/remotes/origin/{BRANCH}",)
        done = self.run("fetch", "-q", "origin", *specs, check=False)
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            if any("couldn't find remote ref" in e for e in err):
                return  # an empty remote: nothing to merge yet
            raise SyncError(
                f"the remote {self.remote()} is unreachable ({err[-1] if err else 'git fetch failed'});"
                " nothing was merged and your local memory is untouched"
            )

    def push(self, sha: str, ref: str = f"refs/heads/{BRANCH}") -> bool:
        """Push ``sha`` to ``ref``; False when the remote moved on (fetch and merge again)."""
        done = self.run("push", "-q", "--porcelain", "origin", f"{sha}:{ref}", check=False)
        if done.returncode == 0:
            return True
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        if "rejected" in text or "non-fast-forward" in text or "fetch first" in text:
            return False
        raise SyncError(
            f"could not push to {self.remote()} ({text.strip().splitlines()[-1] if text.strip() else 'git push failed'});"
            " your local memory is untouched and the next sync pushes it"
        )


__all__ = ["BRANCH", "Git"]
