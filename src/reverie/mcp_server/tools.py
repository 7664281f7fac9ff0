"""The tool bodies as plain synchronous methods returning a ``CallToolResult``; the MCP
layer only registers them (:mod:`.registry`). The SDK runs them on worker threads, so
every engine call goes through one lock: the engine shares one SQLite connection (and
one recall-log connection) between threads, and a search in flight must not see a
half-synced index. Before each call a cheap stat check syncs files changed by hand
(:class:`.freshness.FreshnessGuard`), so an edit is found within
about a second or two without a restart."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from mcp_types import CallToolResult, TextContent

from ..engine import Reverie
from ..errors import ReverieError
from ..provenance.agent_tools import SOURCES
from ..provenance.origin import CONNECTED_AGENT, Source
from ..scope import project_key
from .freshness import FreshnessGuard

log = logging.getLogger("reverie.mcp")


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


class MemoryTools:
    """The tools as plain methods: the MCP layer only registers them."""

    def __init__(
        self,
        engine: Reverie,
        *,
        sleep: Callable[[float], None] = time.sleep,
        fresh_interval: float | None = None,
        hosted: bool = False,
        lock: threading.Lock | None = None,
        current: Callable[[], bool] | None = None,
    ) -> None:
        """``lock``: shared with the engine's other users (the daemon's CLI route);
        ``current``: the daemon's watcher says the index matches the files."""
        self.engine = engine
        self.hosted = hosted  # one tenant of many: a client's cwd is not resolved here
        self._lock = lock or threading.Lock()
        self._sleep = sleep
        self.started = threading.Event()
        self._starting = False
        if fresh_interval is None:
            fresh_interval = float(engine.settings.mcp_fresh_seconds)
        self.freshness = FreshnessGuard(engine, interval=fresh_interval, current=current)

    @property
    def lock(self) -> threading.Lock:
        """The engine lock: hold it around any engine call from a tool or resource."""
        return self._lock

    def _project(self, cwd: str | None) -> str | None:
        """The project key of the client's folder; never looked up for a hosted tenant
        (it would read a folder of the server's disk outside the tenant's own)."""
        return project_key(cwd) if cwd and not self.hosted else None

    def refresh(self) -> None:
        """Sync files changed since the last look (never fails the call: P5)."""
        if not self.started.is_set():
            return  # start-up syncs anyway
        try:
            stats = self.freshness.check()
            if stats is not None:
                log.info("index synced: %s file(s) changed", stats.files_changed)
        except Exception as exc:
            log.warning("sync before the call failed: %s: %s", type(exc).__name__, exc)

    def guarded(self, tool: str, body: Callable[[], CallToolResult]) -> CallToolResult:
        """Run one tool call under the engine lock, on a fresh index; every failure
        becomes a tool error. Tool modules added later wrap their bodies in this too."""
        try:
            with self._lock:
                self.refresh()
                return body()
        except ReverieError as exc:
            log.info("%s refused: %s", tool, exc)
            return _error(f"{tool} failed: {exc}")
        except Exception as exc:  # the server must outlive any bug in one call
            log.exception("%s raised an unexpected error", tool)
            return _error(f"{tool} failed with an internal error ({type(exc).__name__}: {exc})")

    def search(
        self,
        query: str,
        max_results: int,
        projects: tuple[str, ...],
        budget_tokens: int | None = None,
        explain: bool = False,
        cwd: str | None = None,
    ) -> CallToolResult:
        def body() -> CallToolResult:
            here = self._project(cwd)
            response = self.engine.search(
                query,
                max_results=max_results,
                active_projects=frozenset(projects) | ({here} if here else set()),
                record=True,
                budget_tokens=budget_tokens,
            )
            text = response.render(explain)
            if response.notes:
                text += "\n\n" + "\n".join(f"note: {n}" for n in response.notes)
            structured = response.as_dict()  # snippets framed by origin, as in the text
            if not explain:
                for hit in structured["hits"]:
                    hit.pop("explain", None)
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=structured,
            )

        return self.guarded("memory_search", body)

    def get(self, path: str, from_line: int, lines: int) -> CallToolResult:
        def body() -> CallToolResult:
            result = self.engine.get(path, from_line=from_line, lines=lines)
            text = result.render()  # framed per run of lines by origin
            structured = result.as_dict()  # its text framed too
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=structured,
            )

        return self.guarded("memory_get", body)

    def write(self, text: str, source: str, cwd: str | None = None) -> CallToolResult:
        """Daily append for the connected agent: ``agent``, or ``untrusted`` when it
        declares the text came from the web or a tool. It can never raise trust."""

        def body() -> CallToolResult:
            appended = self.engine.write(
                text,
                source=SOURCES.get(source, Source.TOOL),  # unknown: fails closed
                author=CONNECTED_AGENT,
                sync=True,
                project=self._project(cwd),
            )
            data = {"warnings": [], **appended.as_dict()}
            said = f"written to {data['source']} ({data['origin']})"
            said += "".join(f"\nwarning: {w}" for w in appended.warnings)
            return CallToolResult(
                content=[TextContent(type="text", text=said)],
                structured_content=data,
            )

        return self.guarded("memory_write", body)

    def startup(self) -> None:
        """Sync the index if it is dirty or empty, then warm the vectors. Failures are
        logged, never raised: the tools still work (cold, or with a clear error)."""
        with self._lock:
            if self._starting:  # over HTTP every session enters the lifespan: once is enough
                return
            self._starting = True
        try:
            with self._lock:
                try:
                    status = self.engine.status()
                    if status["dirty"] or not status["files"]:
                        stats = self.engine.index()
                        log.info("index synced at start: %s file(s) changed", stats.files_changed)
                except Exception as exc:
                    log.warning("index sync at start failed: %s: %s", type(exc).__name__, exc)
                try:
                    self.engine.warm()
                except Exception as exc:
                    log.warning("warming the index failed: %s: %s", type(exc).__name__, exc)
                self._open_recall_log()
        finally:
            self.started.set()

    def _open_recall_log(self, attempts: int = 5) -> None:
        """Open the recall log before the first search. Several servers often start
        together on one state dir, and creating the log (switching it to WAL) can fail
        with "database is locked" in all but one of them; retrying here keeps that race
        away from the searches, which would otherwise lose their recall events."""
        if not self.engine.dreaming_enabled:
            return
        for attempt in range(1, attempts + 1):
            try:
                self.engine.open_recall_log()
                return
            except Exception as exc:
                if attempt == attempts:
                    log.warning("opening the recall log failed: %s: %s", type(exc).__name__, exc)
                    return
                self._sleep(0.05 * attempt)

    def start_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.startup, name="reverie-mcp-startup", daemon=True)
        thread.start()
        return thread


__all__ = ["MemoryTools"]
