"""Project keys from git (R-SCOPE-1): real repositories made with git in a temp dir.

What a user notices: every copy of one repository (ssh or https remote, a clone, its
worktrees) is one project; a fork is another; a repository without a remote still gets
a stable key; and looking the key up costs no git process, however often it is asked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from reverie.cli.app import cli
from reverie.scope import ActiveProjects, ProjectKeys, key_from_text, project_key
from reverie.scope.remote import is_valid_key, local_key, parse_remote, remote_key, remote_urls
from reverie.storage.trailers import INVALID_PROJECT, normalise_project

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str | Path, cwd: Path | None = None) -> None:
    subprocess.run(["git", *map(str, args)], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def repo(path: Path, remote: str | None = None) -> Path:
    git("init", "-q", "-b", "main", path)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=path)
    if remote:
        git("remote", "add", "origin", remote, cwd=path)
    return path


def key(path: Path) -> str | None:
    return ProjectKeys().key(path)  # a fresh cache: what a new process would see


def test_ssh_and_https_forms_of_one_remote_give_one_key(tmp_path: Path) -> None:
    forms = [
        "git@github.com:Me/Repo.git",
        "https://github.com/me/repo",
        "https://alice:s3cret@GitHub.com/Me/Repo.git/",
        "ssh://git@github.com:22/me/repo.git",
        "git+ssh://git@github.com/me/repo",
    ]
    keys = {key(repo(tmp_path / f"r{i}", url)) for i, url in enumerate(forms)}
    assert keys == {"github.com/me/repo"}


def test_clone_and_worktrees_share_a_key_a_fork_gets_its_own(tmp_path: Path) -> None:
    upstream = repo(tmp_path / "upstream", "https://github.com/acme/widgets.git")
    clone = tmp_path / "clone"
    git("clone", "-q", upstream, clone)
    git("remote", "set-url", "origin", "git@github.com:acme/widgets.git", cwd=clone)
    worktree = tmp_path / "feature"
    git("worktree", "add", "-q", "-b", "feature", worktree, cwd=clone)
    (worktree / "src" / "deep").mkdir(parents=True)
    fork = tmp_path / "fork"
    git("clone", "-q", upstream, fork)
    git("remote", "set-url", "origin", "git@github.com:someone/widgets.git", cwd=fork)
    git("remote", "add", "upstream", "https://github.com/acme/widgets", cwd=fork)

    assert (worktree / ".git").is_file()  # a linked worktree: .git is a gitdir: file
    assert key(upstream) == key(clone) == key(worktree) == "github.com/acme/widgets"
    assert key(worktree / "src" / "deep") == "github.com/acme/widgets"
    assert key(fork) == "github.com/someone/widgets"


def test_a_repository_without_a_remote_has_a_stable_local_key(tmp_path: Path) -> None:
    lonely = repo(tmp_path / "Lonely Repo")
    wt = tmp_path / "lonely-wt"
    git("worktree", "add", "-q", "-b", "x", wt, cwd=lonely)
    local_clone = tmp_path / "copy"
    git("clone", "-q", lonely, local_clone)  # its remote is a local path: the same project
    other = repo(tmp_path / "other")
    k = key(lonely)
    assert k is not None and k.startswith("local/lonely-repo-")
    assert key(lonely) == k == key(wt) == key(local_clone) == ProjectKeys().key(lonely / ".")
    assert key(other) != k
    assert key(tmp_path) is None  # not inside any repository


def test_a_bare_upstream_and_its_clones(tmp_path: Path) -> None:
    src = repo(tmp_path / "src")
    bare = tmp_path / "shared.git"
    git("clone", "-q", "--bare", src, bare)
    a, b = tmp_path / "a", tmp_path / "b"
    git("clone", "-q", bare, a)
    git("clone", "-q", bare, b)
    # the bare copy's own remote is src: one project all along
    assert key(a) == key(b) == key(bare) == key(src) is not None
    assert key(a) != key(repo(tmp_path / "unrelated"))


def test_a_changed_remote_is_seen_without_restarting(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", "https://github.com/me/one")
    keys = ProjectKeys()
    assert keys.key(r) == "github.com/me/one"
    git("remote", "set-url", "origin", "https://github.com/me/two", cwd=r)
    assert keys.key(r) == "github.com/me/two"


def test_no_git_process_per_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = repo(tmp_path / "r", "git@github.com:me/r.git")
    git("worktree", "add", "-q", "-b", "w", tmp_path / "w", cwd=r)
    calls: list[object] = []
    real = subprocess.Popen

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", counting)
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(os, "fork", lambda: calls.append("fork"))
    fresh = ProjectKeys()
    for i in range(1000):
        where = r if i % 2 else tmp_path / "w"
        assert fresh.key(where) == "github.com/me/r"
        assert project_key(where) == "github.com/me/r"
    assert calls == []


def test_cli_project_key(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", "git@github.com:Me/Repo.git")
    runner = CliRunner()
    out = runner.invoke(cli, ["project", "key", str(r), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["key"] == "github.com/me/repo" and data["repository"] == str(r)
    plain = runner.invoke(cli, ["project", "key", str(tmp_path)])
    assert plain.exit_code == 0 and "not inside a git repository" in plain.output


def test_git_config_parsing() -> None:
    config = """
[core]
\tbare = false
[remote "upstream"]
\turl = https://github.com/acme/x
[remote "origin"] # my fork
\turl = "git@github.com:me/x.git" ; comment
\tfetch = +refs/heads/*:refs/remotes/origin/*
[remote.old]
url = /srv/old
"""
    assert remote_urls(config) == [
        ("upstream", "https://github.com/acme/x"),
        ("origin", "git@github.com:me/x.git"),
        ("old", "/srv/old"),
    ]


def test_odd_remotes() -> None:
    assert parse_remote("/srv/repos/x.git") is not None
    assert parse_remote("/srv/repos/x.git").host is None  # type: ignore[union-attr]
    assert parse_remote("file:///srv/x").host is None  # type: ignore[union-attr]
    assert remote_key(parse_remote("https://github.com/")) is None  # type: ignore[arg-type]
    assert remote_key(parse_remote("https://h.example/../etc")) is None  # type: ignore[arg-type]
    weird = remote_key(parse_remote("https://h.example/a b/c:d"))  # type: ignore[arg-type]
    assert weird is not None and is_valid_key(weird)
    assert key_from_text("git@GitHub.com:Me/Repo.git") == "github.com/me/repo"
    assert key_from_text("github.com/me/repo") == "github.com/me/repo"
    assert key_from_text("not a key at all ::") is None


@given(
    host=st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5}){1,2}", fullmatch=True),
    owner=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,12}", fullmatch=True),
    name=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}", fullmatch=True),
)
def test_every_form_converges_and_reads_back_from_a_trailer(
    host: str, owner: str, name: str
) -> None:
    forms = [
        f"git@{host}:{owner}/{name}.git",
        f"https://{host}/{owner}/{name}",
        f"https://{host.upper()}/{owner}/{name}.git/",
        f"ssh://git@{host}:2222/{owner}/{name}",
    ]
    keys = {remote_key(parse_remote(f)) for f in forms}  # type: ignore[arg-type]
    assert len(keys) == 1
    (k,) = keys
    if k is not None:
        assert is_valid_key(k) and normalise_project(k) == k != INVALID_PROJECT


@given(st.text(min_size=1, max_size=80))
def test_any_key_made_is_a_trailer_fixed_point(url: str) -> None:
    remote = parse_remote(url)
    k = remote_key(remote) if remote else None
    for made in (k, local_key("/" + url.replace("\x00", ""))):
        if made is not None:
            assert normalise_project(made) == made


def test_lru_of_four() -> None:
    a = ActiveProjects()
    for k in ["p/1", "p/2", "p/3", "p/4", "p/2", "p/5"]:
        a = a.enter(k)
    assert a.keys == ("p/5", "p/2", "p/4", "p/3")  # p/1 fell out
    assert a.current == "p/5"
    assert a.enter(None).current is None and a.enter(None).keys == a.keys
    assert a.enter(INVALID_PROJECT).keys == a.keys
    back = ActiveProjects.restore(["p/1", 3, "BAD KEY", "p/1"], "p/1")
    assert back.keys == ("p/1",) and back.current == "p/1"


@given(
    project=st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,40}", fullmatch=True),
    other=st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,40}", fullmatch=True),
    text=st.text(alphabet=st.characters(categories=["L", "N", "Zs"]), min_size=1, max_size=60),
)
@example(project="0", other="0", text=" ")  # issue 40.14: a text that is white space
@example(project="0", other="1", text=" x")  # and one that starts with it
def test_a_signed_project_verifies_and_an_edited_one_does_not(
    project: str, other: str, text: str
) -> None:
    from reverie.provenance.markers import render_marker, resolve
    from reverie.provenance.origin import Origin, SessionKind

    key = b"k" * 32
    line = render_marker(
        f"- {text}", Origin.OWNER, SessionKind.INTERACTIVE, key=key, project=project
    )
    got = resolve(line, default=Origin.AGENT, ceiling=Origin.OWNER, key=key)
    assert got.project == project and not got.project_unverified and got.origin is Origin.OWNER
    if other != project:
        edited = line.replace(f"project: {project};", f"project: {other};", 1)
        bad = resolve(edited, default=Origin.AGENT, ceiling=Origin.OWNER, key=key)
        assert bad.project is None and bad.project_unverified and bad.origin is not Origin.OWNER
    plain = render_marker(f"- {text}", Origin.OWNER, SessionKind.INTERACTIVE, key=key)
    unscoped = resolve(plain, default=Origin.AGENT, ceiling=Origin.OWNER, key=key)
    assert unscoped.project is None and not unscoped.project_unverified


def test_a_repository_created_later_is_seen(tmp_path: Path) -> None:
    keys = ProjectKeys()
    where = tmp_path / "later"
    where.mkdir()
    assert keys.key(where) is None
    repo(where, "https://github.com/me/later")
    assert keys.key(where) == "github.com/me/later"


@pytest.mark.parametrize("bad", ["/nonexistent/deeper", "bad\x00name", "/proc/1/root/x"])
def test_an_unreadable_or_unnameable_directory_has_no_project(bad: str) -> None:
    assert ProjectKeys().key(bad) is None  # fails closed: no project, no exception
