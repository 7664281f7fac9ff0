"""``reverie demo --hosted``: the hosted server on an embedded PostgreSQL, in one
command. Two tenants (``alice`` and ``bob``) hold the same line and one of their own;
the tokens are printed, and the server answers until interrupted."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..backends.postgres.embedded import start
from ..mcp_server import run_hosted
from ..mcp_server.tenants import token_digest
from .mcp import tenant_jobs

SHARED = "- The demo gate code is kept in the blue binder.\n"
OWN = {"alice": "- Alice owns the falcon.\n", "bob": "- Bob owns the heron.\n"}


def hosted_demo(
    target: Path, address: str, flags: dict[str, Any], say: Callable[[str], None]
) -> None:
    """Start the embedded PostgreSQL under ``target``, write two tenants and serve."""
    target.mkdir(parents=True, exist_ok=True)
    dsn, server = start(target / "pgdata", cleanup="stop")
    tables, tokens = [], {}
    for name, line in OWN.items():
        ws = target / name / "workspace"
        ws.mkdir(parents=True, exist_ok=True)
        memory = ws / "MEMORY.md"
        if not memory.exists():
            memory.write_text(SHARED + line, encoding="utf-8")
        tokens[name] = secrets.token_urlsafe(24)
        tables.append(
            f'[{name}]\ntoken_sha256 = "{token_digest(tokens[name])}"\n'
            f'workspace = "{name}/workspace"\nstate_dir = "{name}/state"\n'
        )
    tenants = target / "tenants.toml"
    tenants.write_text("\n".join(tables), encoding="utf-8")
    os.environ.update(REVERIE_INDEX_BACKEND="postgres", REVERIE_INDEX_DSN=dsn)
    say(f"PostgreSQL {dsn}\ntenants file {tenants}")
    for name, token in tokens.items():
        say(f"{name}: Authorization: Bearer {token}")
    say(f"serving http://{address}/mcp (Ctrl-C stops it and the database)")
    try:
        run_hosted(str(tenants), address, flags=flags, background=tenant_jobs(flags))
    finally:
        server.cleanup()


__all__ = ["hosted_demo"]
