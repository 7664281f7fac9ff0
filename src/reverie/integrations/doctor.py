"""``reverie doctor``: one look at everything Reverie needs, each finding with the
command that fixes it.

The checks take small ports (the resolved settings, a builder for the embedder and for
the model provider, and where Claude Code's files are) and never change anything: the
index is opened read-only, the daemon is judged by its state file and its pid, the
embedder is asked to embed one word, and the model provider is built from its settings
but never called (a call costs money and can take long; ``reverie dream preview``
makes one). A check that raises becomes an ``error`` finding naming the exception:
the doctor itself never fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..dreaming.schedule import DaemonState
from ..errors import ReverieError
from ..settings import Settings
from ..storage.workspace import Workspace, hooks_log_path
from .claude_install import HOOKS, SERVER, claude_dir, is_ours, user_mcp_path

OK, INFO, WARN, ERROR = "ok", "info", "warn", "error"


@dataclass(frozen=True)
class Finding:
    """One check's verdict: what was found and, when something is wrong, the fix."""

    check: str
    status: str  # ok | info | warn | error
    message: str
    fix: str | None = None


@dataclass
class DoctorPorts:
    """What the doctor may look at."""

    settings: Settings
    make_embedder: Callable[[Workspace], Any]  # the configured embedder, or None
    make_llm: Callable[[], Any]  # the configured model provider, or None
    claude_home: Path = field(default_factory=claude_dir)
    user_mcp: Path = field(default_factory=user_mcp_path)  # ~/.claude.json
    project: Path | None = None  # a project whose .claude/ and .mcp.json to read


@dataclass
class DoctorReport:
    """Every finding, in check order; healthy when none is an error."""

    findings: list[Finding]

    @property
    def healthy(self) -> bool:
        return not any(f.status == ERROR for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {"healthy": self.healthy, "findings": [asdict(f) for f in self.findings]}


def _workspace(ports: DoctorPorts) -> Iterator[Finding]:
    s = ports.settings
    try:
        ws = Workspace(Path(s.workspace), Path(s.state_dir))
    except ReverieError as exc:
        yield Finding("workspace", ERROR, str(exc), "move --state-dir outside the workspace")
        return
    if not ws.exists():
        yield Finding("workspace", ERROR, f"no workspace at {ws.root}", "reverie init")
        return
    missing = [n for n in ("MEMORY.md", "memory") if not (ws.root / n).exists()]
    if missing:
        yield Finding("workspace", WARN, f"{ws.root}: {', '.join(missing)} missing", "reverie init")
    else:
        yield Finding("workspace", OK, str(ws.root))


def _state(ws: Workspace) -> Iterator[Finding]:
    if not ws.state_dir.is_dir():
        yield Finding("state dir", ERROR, f"no state dir at {ws.state_dir}", "reverie index")
        return
    if not os.access(ws.state_dir, os.W_OK):
        yield Finding(
            "state dir", ERROR, f"{ws.state_dir} is not writable", f"chmod u+w {ws.state_dir}"
        )
        return
    yield Finding("state dir", OK, str(ws.state_dir))
    key = ws.origin_key_path
    try:
        valid = len(bytes.fromhex(key.read_text().strip())) >= 16
    except FileNotFoundError:
        yield Finding(
            "origin key",
            WARN,
            f"{key} is missing: lines signed with it read at their default trust",
            f"restore {key} from a backup; else `reverie index` creates a new one",
        )
        return
    except (OSError, ValueError):
        valid = False
    if not valid:
        yield Finding("origin key", ERROR, f"{key} is not a signing key", f"restore {key}")
    elif (note := ws.key_warning()) is not None:
        yield Finding("origin key", WARN, note, f"restore the old {key} from a backup")
    else:
        yield Finding("origin key", OK, str(key))


def _index(ws: Workspace, settings: Settings) -> Iterator[Finding]:
    from .doctor_index import findings

    for status, message, fix in findings(ws, settings):
        yield Finding("index", status, message, fix)


def _embedder(ws: Workspace, ports: DoctorPorts) -> Iterator[Finding]:
    name = ports.settings.embedder
    try:
        embedder = ports.make_embedder(ws)
        if embedder is None:
            yield Finding("embedder", INFO, "none: search is keyword-only")
            return
        embedder.embed_query("doctor")
        label = embedder.identity.label()
    except ReverieError as exc:
        fix = "check the embedder settings (`reverie settings`), or `--embedder none`"
        yield Finding("embedder", ERROR, f"{name}: {exc}", fix)
        return
    from .doctor_index import indexed_embedder

    indexed = indexed_embedder(ws, ports.settings)
    if indexed is not None and indexed != label:
        yield Finding(
            "embedder",
            WARN,
            f"{name}: {label}, but the index's vectors are {indexed}'s: the vector lane "
            "is left out until they are remade",
            "reverie index",
        )
        return
    yield Finding("embedder", OK, f"{name}: {label}")


def _llm(ports: DoctorPorts) -> Iterator[Finding]:
    kind = ports.settings.llm
    try:
        llm = ports.make_llm()
    except ReverieError as exc:
        yield Finding("model provider", ERROR, f"{kind}: {exc}", "reverie settings")
        return
    if llm is None:
        yield Finding(
            "model provider",
            INFO,
            "none: dreaming runs its deterministic phases only; the escalation lane is off",
        )
        return
    yield Finding("model provider", OK, f"{kind}: configured (not called)")


def _daemon(ws: Workspace) -> Iterator[Finding]:
    state = DaemonState.load(ws.daemon_state)
    if state.pid is None or state.stopped:
        yield Finding(
            "daemon",
            INFO,
            "not running: no file watcher, no nightly dream",
            "reverie serve (or a service manager running it)",
        )
        return
    try:
        os.kill(state.pid, 0)
    except ProcessLookupError:
        yield Finding(
            "daemon", WARN, f"pid {state.pid} recorded but gone (killed?)", "reverie serve"
        )
        return
    except PermissionError:
        pass  # alive, another user's
    yield Finding("daemon", OK, f"running (pid {state.pid}, since {state.started})")


def _hook_log(ws: Workspace) -> Iterator[Finding]:
    """Hooks fail open (the prompt never waits on a broken memory): what went wrong is
    only in their log."""
    path = hooks_log_path(ws.state_dir)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return
    if lines:
        yield Finding(
            "hooks log",
            WARN,
            f"{len(lines)} hook problem(s) logged; the last: {lines[-1][:300]}",
            f"read {path} (delete it once fixed)",
        )


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _entries(hooks: dict[str, Any], event: str) -> list[Any]:
    """Every hook entry of ``event`` in a settings file's ``hooks`` object."""
    groups = hooks.get(event)
    out: list[Any] = []
    for group in groups if isinstance(groups, list) else []:
        inner = group.get("hooks") if isinstance(group, dict) else None
        out += inner if isinstance(inner, list) else []
    return out


def _claude(ports: DoctorPorts) -> Iterator[Finding]:
    places = [("user", ports.claude_home / "settings.json", ports.user_mcp, "")]
    if ports.project is not None:
        fix = f" --project {ports.project}"
        p = ports.project
        places.append(("project", p / ".claude" / "settings.json", p / ".mcp.json", fix))
    for scope, settings_path, mcp_path, flag in places:
        fix = f"reverie install claude-code{flag}"
        settings = _json(settings_path) or {}
        found = settings.get("hooks")
        hooks: dict[str, Any] = found if isinstance(found, dict) else {}
        have = {event for event, _, _ in HOOKS if any(map(is_ours, _entries(hooks, event)))}
        missing = [e for e, _, _ in HOOKS if e not in have]
        servers = (_json(mcp_path) or {}).get("mcpServers")
        server = isinstance(servers, dict) and SERVER in servers
        if not have and not server:
            yield Finding(f"claude code ({scope})", INFO, "not installed", fix)
        elif missing or not server:
            what = [f"hooks {', '.join(missing)}"] if missing else []
            what += ["the MCP server"] if not server else []
            yield Finding(
                f"claude code ({scope})", WARN, f"half installed: no {' and no '.join(what)}", fix
            )
        else:
            yield Finding(f"claude code ({scope})", OK, f"4 hooks and the MCP server ({scope})")


def diagnose(ports: DoctorPorts) -> DoctorReport:
    """Every check, in order; later checks are skipped where an earlier one makes them
    meaningless (no workspace: no index to compare)."""
    findings = list(_workspace(ports))
    s = ports.settings
    if findings[0].status != ERROR:
        ws = Workspace(Path(s.workspace), Path(s.state_dir))
        for check in (
            lambda: _state(ws),
            lambda: _index(ws, ports.settings),
            lambda: _embedder(ws, ports),
            lambda: _daemon(ws),
            lambda: _hook_log(ws),
        ):
            findings += _guarded(check)
    findings += _guarded(lambda: _llm(ports))
    findings += _guarded(lambda: _claude(ports))
    return DoctorReport(findings)


def _guarded(check: Callable[[], Iterator[Finding]]) -> list[Finding]:
    try:
        return list(check())
    except Exception as exc:  # the doctor reports; it never fails itself
        return [Finding("doctor", ERROR, f"a check failed: {type(exc).__name__}: {exc}")]


__all__ = ["DoctorPorts", "DoctorReport", "Finding", "diagnose"]
