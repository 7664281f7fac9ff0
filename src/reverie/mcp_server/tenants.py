"""The tenants file of the hosted server (``reverie mcp --http ADDR --tenants FILE``):
which bearer token opens which tenant, and where its folders are.

One TOML table per tenant; the table's name is the tenant id (its ``tenant_id`` in a
shared PostgreSQL index). The token is stored as its SHA-256 (hex), never in clear::

    [alice]
    token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    workspace = "/srv/reverie/alice/workspace"   # relative paths: from this file's folder
    state_dir = "/srv/reverie/alice/state"

Refused, naming the file and the tenant's line: a bad id, a missing or malformed field,
an unknown key, two tenants with one token, and two tenants whose folders are the same
or nested (a tenant would then read another's files).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

TENANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
HEX64 = re.compile(r"[0-9a-f]{64}")
FIELDS = frozenset({"token_sha256", "workspace", "state_dir"})


@dataclass(frozen=True, slots=True)
class Tenant:
    """One tenant: its id (``tenant_id`` of its index rows) and its own two folders."""

    id: str
    workspace: Path
    state_dir: Path


def token_digest(token: str | bytes) -> str:
    """The SHA-256 (hex) a tenants file stores for ``token``."""
    raw = token.encode() if isinstance(token, str) else token
    return hashlib.sha256(raw).hexdigest()


class Tenants:
    """The tenants of one file, looked up by the digest of a presented token."""

    def __init__(self, tenants: dict[str, Tenant], by_digest: dict[str, str]) -> None:
        self._tenants = tenants
        self._by_digest = by_digest

    def __len__(self) -> int:
        return len(self._tenants)

    def ids(self) -> list[str]:
        return sorted(self._tenants)

    def get(self, tenant_id: str) -> Tenant:
        return self._tenants[tenant_id]

    def for_token(self, token: bytes) -> Tenant | None:
        """The tenant ``token`` opens, or None (empty or unknown token)."""
        if not token:
            return None
        tenant_id = self._by_digest.get(token_digest(token))
        return None if tenant_id is None else self._tenants[tenant_id]


def _line_of(text: str, tenant_id: str) -> int:
    header = re.compile(rf"^\s*\[\s*[\"']?{re.escape(tenant_id)}[\"']?\s*\]", re.M)
    match = header.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _nested(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def load_tenants(path: str | Path) -> Tenants:
    """Read and check a tenants file (nothing is opened or created)."""
    import tomllib

    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the tenants file ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: {exc}") from None
    base = file.resolve().parent
    tenants: dict[str, Tenant] = {}
    by_digest: dict[str, str] = {}
    folders: list[tuple[Path, str]] = []
    for tenant_id, table in data.items():
        where = f"{file}:{_line_of(text, tenant_id)}: tenant {tenant_id!r}"
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: expected a table [{tenant_id}] with token_sha256, ...")
        if not TENANT_ID.fullmatch(tenant_id):
            raise ConfigError(f"{where}: a tenant id is 1-64 letters, digits, '_', '.', '-'")
        unknown = sorted(set(table) - FIELDS)
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {sorted(FIELDS)})")
        for key in sorted(FIELDS):
            if not isinstance(table.get(key), str) or not table[key].strip():
                raise ConfigError(f"{where}: {key} is missing (a string)")
        digest = table["token_sha256"].strip().lower()
        if not HEX64.fullmatch(digest):
            raise ConfigError(f"{where}: token_sha256 must be 64 hex digits (sha256sum)")
        if digest in by_digest:
            raise ConfigError(f"{where}: the same token as tenant {by_digest[digest]!r}")
        ws = (base / Path(table["workspace"]).expanduser()).resolve()
        state = (base / Path(table["state_dir"]).expanduser()).resolve()
        for folder in (ws, state):
            for other, owner in folders:
                if _nested(folder, other):
                    raise ConfigError(
                        f"{where}: {folder} overlaps {other} (of tenant {owner!r}); every "
                        "tenant needs folders of its own"
                    )
        if _nested(ws, state):
            raise ConfigError(f"{where}: the workspace and state_dir must not overlap")
        folders += [(ws, tenant_id), (state, tenant_id)]
        by_digest[digest] = tenant_id
        tenants[tenant_id] = Tenant(tenant_id, ws, state)
    if not tenants:
        raise ConfigError(f"{file}: no tenants (one [tenant] table each)")
    return Tenants(tenants, by_digest)


__all__ = ["Tenant", "Tenants", "load_tenants", "token_digest"]
