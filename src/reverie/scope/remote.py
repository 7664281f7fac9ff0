"""Project keys from git remotes (R-SCOPE-1): pure parsing and normalisation, no I/O.

A project key is what ``<!-- project: KEY -->`` trailers and signed line markers hold.
It is derived deterministically from the repository's remote, so every copy of a
repository converges on one key and a fork (another remote) gets its own:

- ``git@github.com:Me/Repo.git``, ``ssh://git@github.com:22/me/repo``,
  ``https://user:token@GitHub.com/me/repo.git/`` and ``git+ssh://github.com/me/repo``
  all give ``github.com/me/repo``: the scheme, the user (and any password or token),
  the port, a trailing ``/`` and the ``.git`` suffix go; host and path are lower-cased
  (the forges people use treat them case-insensitively);
- a repository without a remote gets ``local/<name>-<hash>``, from its root directory
  (the main worktree's, which its linked worktrees share).

Every key this module makes is a fixed point of
:func:`reverie.storage.projects.normalise_project` (a sibling layer, so its rule is
restated here as :data:`KEY_RE`; the tests hold the two together), so a key written
into a trailer reads back as itself.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..records import Record

_SCP_RE = re.compile(
    r"^(?:(?P<user>[^@/]+)@)?(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?P<path>(?!//).*)$"
)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SAFE = re.compile(r"[^a-z0-9._-]+")
_SECTION_RE = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_VAR_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._\-/@~+]{0,127}$")
"""What a trailer accepts as a key unchanged (no scheme, no ``user@``, no ``:``)."""


class Remote(Record):
    """What a remote URL names: a host and path on a server, or a local path (``host``
    None: ``file://`` or a plain path)."""

    __slots__ = ("host", "path")

    def __init__(self, host: str | None, path: str) -> None:
        self.host, self.path = host, path


def parse_remote(url: str) -> Remote | None:
    """The host and path a remote URL names; None when it names nothing usable."""
    url = url.strip()
    if not url:
        return None
    if _SCHEME_RE.match(url):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "file":
            return Remote(None, unquote(parts.path)) if parts.path else None
        try:
            host = parts.hostname  # lower-cased, without user, password and port
        except ValueError:
            return None
        if not host:
            return None
        return Remote(host, unquote(parts.path))
    scp = _SCP_RE.match(url)
    if scp and not (len(scp.group("host")) == 1 and url[2:3] in ("\\", "/")):  # not C:\ or C:/
        return Remote(scp.group("host").strip("[]").lower(), scp.group("path"))
    return Remote(None, url)  # a local path, absolute or relative


def remote_key(remote: Remote) -> str | None:
    """The project key of a server remote (None for a local path or a malformed URL)."""
    if remote.host is None:
        return None
    path = remote.path.strip().strip("/")
    path = re.sub(r"/+", "/", path)
    if path.startswith("~"):
        path = path[1:]
    path = path.lower().removesuffix("/").removesuffix(".git").strip("/")
    host = remote.host.lower().strip(".")
    if not host or not path or any(seg in ("", ".", "..") for seg in path.split("/")):
        return None
    key = f"{host}/{path}"
    if not is_valid_key(key):
        # legal for git, not for a trailer: a stable key from the whole name instead
        digest = _sha256(key.encode("utf-8"))
        key = f"{_SAFE.sub('-', host).strip('-.') or 'remote'}/{digest}"
    return key if is_valid_key(key) else None


def _sha256(data: bytes) -> str:
    import hashlib  # (OpenSSL: loaded only for a key that needs a digest)

    return hashlib.sha256(data).hexdigest()[:12]


def local_key(root: str) -> str:
    """A stable key for a repository without a (usable) remote, from its root path."""
    name = root.rstrip("/").rsplit("/", 1)[-1].lower().removesuffix(".git")
    name = _SAFE.sub("-", name).strip("-.")[:40] or "repo"
    digest = _sha256(root.encode("utf-8", "surrogateescape"))
    key = f"local/{name}-{digest}"
    return key if is_valid_key(key) else f"local/{digest}"


def _unquote_value(raw: str) -> str:
    """A git config value: comments (outside quotes) cut, quotes and escapes resolved."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out).strip()


def remote_urls(config: str) -> list[tuple[str, str]]:
    """(remote name, url) pairs of a git config file's text, in file order (the last
    ``url`` of a remote wins, as git's own lookup does)."""
    urls: dict[str, str] = {}
    section: str | None = None
    sub: str | None = None
    for raw in config.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION_RE.match(line)
        if m:
            section, sub = m.group(1).lower(), m.group(2)
            if sub is None and "." in section:  # the old [remote.origin] form
                section, sub = section.split(".", 1)
            line = m.group(3).strip()
            if not line:
                continue
        if section != "remote" or sub is None:
            continue
        v = _VAR_RE.match(line)
        if v and v.group(1).lower() == "url" and v.group(2) is not None:
            name = sub.replace('\\"', '"').replace("\\\\", "\\")
            urls.pop(name, None)
            urls[name] = _unquote_value(v.group(2))
    return list(urls.items())


def preferred_remote(urls: list[tuple[str, str]]) -> str | None:
    """The URL whose key names the project: ``origin`` (a fork's own remote, so a fork
    gets its own key), else ``upstream``, else the first remote in the file."""
    by_name = dict(urls)
    for name in ("origin", "upstream"):
        if by_name.get(name):
            return by_name[name]
    return next((u for _, u in urls if u), None)


def key_from_text(raw: str) -> str | None:
    """A project key given by hand (``--project``): a key as it is, or a remote URL
    normalised as the repository's own would be; None when it is neither."""
    text = raw.strip()
    if is_valid_key(text.lower()):
        return text.lower()
    remote = parse_remote(text)
    return remote_key(remote) if remote is not None else None


def is_valid_key(key: str) -> bool:
    """A key that can be written into a trailer and read back as itself."""
    return (
        bool(KEY_RE.match(key))
        and ".." not in key
        and "@" not in key.split("/", 1)[0]
        and not key.endswith((".git", "/"))
    )


__all__ = [
    "KEY_RE",
    "Remote",
    "is_valid_key",
    "key_from_text",
    "local_key",
    "parse_remote",
    "preferred_remote",
    "remote_key",
    "remote_urls",
]
