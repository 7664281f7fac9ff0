"""Helpers shared by the benchmarks: percentiles, `--set` parsing, a memoising query
embedder. Ranking variants are settings (`--set search_scaling=minmax`, ...)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from reverie.storage.embedders.base import EmbedderIdentity


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); exact for the sample, no interpolation."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@contextmanager
def served(base: Sequence[str], env: dict[str, str]) -> Iterator[dict[str, Any]]:
    """``reverie serve`` (no schedule; its file watcher on, as a user's daemon runs) on
    the workspace of ``base`` (the command with its ``--state-dir``) until the block
    ends; yields its endpoint (port, token) once it answers."""
    endpoint = Path(base[list(base).index("--state-dir") + 1]) / "main" / "daemon-endpoint.json"
    endpoint.unlink(missing_ok=True)
    serve = subprocess.Popen(
        [*base, "serve", "--no-schedule"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not endpoint.exists():
            if time.monotonic() > deadline or serve.poll() is not None:
                raise SystemExit("reverie serve did not come up")
            time.sleep(0.05)
        yield json.loads(endpoint.read_text())
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=120)
        except subprocess.TimeoutExpired:  # a sync that cannot stop mid-file
            serve.kill()
            serve.wait()


def daemon_pid(base: Sequence[str]) -> int:
    """The pid of the ``reverie serve`` that :func:`served` started for ``base``."""
    state = Path(base[list(base).index("--state-dir") + 1]) / "main" / "daemon-state.json"
    return int(json.loads(state.read_text())["pid"])


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, *, window: float = 2.0, busy: float = 0.1, limit: float = 900) -> None:
    """Until process ``pid`` used under ``busy`` of a core over ``window`` seconds (its
    warm-up in the background is over), at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = process_cpu_seconds(pid)
        time.sleep(window)
        if process_cpu_seconds(pid) - before < busy * window:
            return


def add_set_option(ap: Any, help: str) -> None:
    """The benches' repeatable ``--set NAME=VALUE`` (read with :func:`parse_sets`)."""
    ap.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="NAME=VALUE", help=help
    )


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``["name=value", ...]`` -> settings overrides for ``Reverie.open(**overrides)``."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"--set wants name=value, got {item!r}")
        out[name.strip()] = value.strip()
    return out


class MemoQueryEmbedder:
    """Wraps an embedder so each distinct query is embedded once per process.

    The benchmark asks the same question under several lane/decay configurations;
    without this the query embedding would be paid six times and dominate run time.
    Documents pass straight through.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity: EmbedderIdentity = inner.identity
        self._memo: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._memo.get(text)
        if vec is None:
            vec = np.asarray(self.inner.embed_query(text))
            self._memo[text] = vec
        return vec


__all__ = ["MemoQueryEmbedder", "add_set_option", "parse_sets", "percentile"]
