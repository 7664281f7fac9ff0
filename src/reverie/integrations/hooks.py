"""``reverie hook EVENT``: Claude Code's hooks mapped onto the session flows.

Claude Code runs a command hook with one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``permission_mode`` and the event's
own fields: ``source`` for SessionStart, ``prompt`` for UserPromptSubmit, ``trigger``
and ``custom_instructions`` for PreCompact, ``reason`` for SessionEnd) and reads JSON on
stdout. Of these four events only SessionStart and UserPromptSubmit take
``hookSpecificOutput.additionalContext``; Claude Code caps injected context at 10,000
characters, so we cut at that size ourselves, visibly.

- ``session-start``: the bootstrap (AGENTS.md, MEMORY.md, USER.md within their budgets).
- ``user-prompt-submit``: every injected block of the turn context but the bootstrap
  (the trigger block, and the directive, intent and escalation blocks when the engine
  fills them). Zero model calls, no embedder: this runs on every prompt.
- ``pre-compact``: the Claude Code transcript so far recorded and ingested (checkpoint).
- ``session-end``: the rest of it, then the session ends.

Fail-open: whatever goes wrong (bad stdin, no workspace, a broken index, a bug) the
hook exits 0 with no output, and the error is appended to ``<state dir>/hooks.log``.
A hook never blocks or breaks the user's prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..provenance.frames import WORKSPACE_FILE_TAG
from ..storage.workspace import hooks_log_path

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})  # take additionalContext
MAX_CONTEXT_CHARS = 10_000  # what Claude Code injects of a hook's context at most
LOG_MAX_BYTES = 1_000_000

_FILE_OPEN = re.compile(rf'<{WORKSPACE_FILE_TAG} path="([^"]+)">')
_FILE_CLOSE = f"</{WORKSPACE_FILE_TAG}>"
BOOTSTRAP_PREFACE = (
    "Long-term memory (Reverie): the user's curated notes follow. Search for more with the "
    "memory_search tool before answering questions about earlier work."
)


# What the hook adds around the files' text: the preface, and per file the block's tags
# and a truncation note's margin (the bootstrap budget counts only the bodies).
_FRAMING = len(BOOTSTRAP_PREFACE) + 2 + 3 * (2 * len(WORKSPACE_FILE_TAG) + 60)


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object Claude Code sends."""


class HookRun:
    """What one hook invocation did: the protocol output (None: print nothing)."""

    def __init__(
        self,
        event: str,
        output: dict[str, Any] | None = None,
        error: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.event, self.output, self.error, self.detail = event, output, error, detail

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def read_payload(raw: bytes | str, event: str) -> dict[str, Any]:
    """The hook input, checked: a JSON object whose ``hook_event_name`` (when present)
    is the event this command was installed for."""
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HookInputError(f"stdin is not JSON ({exc})") from None
    except RecursionError:
        raise HookInputError("stdin is not usable JSON: nested too deeply") from None
    if not isinstance(payload, dict):
        raise HookInputError("stdin is not a JSON object")
    named = payload.get("hook_event_name")
    if named is not None and named != EVENTS[event]:
        raise HookInputError(f"hook_event_name is {named!r}, this is the {EVENTS[event]} hook")
    return payload


def cap_context(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """``text`` within ``limit`` characters; a cut ends on a whole line and says so,
    naming the bootstrap files it cut (when it cut any)."""
    if len(text) <= limit:
        return text
    notice = (
        f"\n[… memory context truncated: {{shown:,}} of {len(text):,} characters shown. "
        "The memory files are complete{where}; read more with memory_search or memory_get.]"
    )

    def where(names: list[str]) -> str:
        return f" ({', '.join(names)} cut here)" if names else ""

    worst = notice.format(shown=limit, where=where(_FILE_OPEN.findall(text)))
    keep = limit - len(worst) - 1
    cut = text[: max(0, keep)]
    if "\n" in cut[keep // 2 :]:
        cut = cut[: cut.rfind("\n")]
    cut_files = [
        m.group(1)
        for m in _FILE_OPEN.finditer(text)
        if text.find(_FILE_CLOSE, m.end()) + len(_FILE_CLOSE) > len(cut)
    ]
    return cut + notice.format(shown=len(cut), where=where(cut_files))


def _context_output(event: str, text: str, limit: int) -> dict[str, Any] | None:
    if not text.strip():
        return None
    capped = cap_context(text, min(limit, MAX_CONTEXT_CHARS))
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": capped}}


def _str_field(payload: Mapping[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value:
        raise HookInputError(f"{name} is missing or not a string")
    return value


def handle(event: str, payload: Mapping[str, Any], open_engine: Callable[[], Any]) -> HookRun:
    """Run ``event`` for ``payload`` (errors propagate; :func:`run` makes them fail open)."""
    name = EVENTS[event]
    run = HookRun(name)
    if name == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise HookInputError("prompt is missing or not a string")
        engine = open_engine()
        # lane 2 runs only within the hook's own deadline: the prompt waits for it
        engine.limit_lane(engine.settings.hook_escalation_timeout)
        from ..scope import project_key  # light: reads .git, never spawns git

        cwd = payload.get("cwd")
        here = project_key(cwd) if isinstance(cwd, str) and cwd else None
        projects = (here,) if here else ()  # lane 2 off: nothing of it is injected
        # the bootstrap went in at session start (SessionStart): not read again per prompt
        ctx = engine.context(prompt, active_projects=projects, explain_lane=False, bootstrap=False)
        blocks = "\n\n".join(b for b in ctx.blocks[1:] if b)
        run.output = _context_output(name, blocks, engine.settings.hook_context_chars)
        lane = ctx.escalation or {}
        failed = (
            [f"escalation {lane['status']}: {lane.get('reason')}"]
            if lane.get("status") in ("timeout", "error")
            else []
        )
        run.detail = {"degraded": list(ctx.degraded) + failed}
        return run
    engine = open_engine()
    if name == "SessionStart":
        engine.workspace.require()
        # fit the bootstrap to what Claude Code injects: the bootstrap's own cuts keep
        # USER.md whole
        fit = min(engine.settings.hook_context_chars, MAX_CONTEXT_CHARS) - _FRAMING
        boot = engine.bootstrap(total_chars=max(0, fit))
        text = f"{BOOTSTRAP_PREFACE}\n\n{boot.text}" if boot.text.strip() else ""
        run.output = _context_output(name, text, engine.settings.hook_context_chars)
        run.detail = {"bootstrap": boot.as_dict(), "source": payload.get("source")}
        return run
    from .claude_mirror import Mirror  # the session machinery: not on the prompt path

    sid = _str_field(payload, "session_id")
    transcript = Path(_str_field(payload, "transcript_path")).expanduser()
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    engine.workspace.require()
    result = Mirror(engine, sid).sync(transcript, end=name == "SessionEnd", cwd=cwd)
    run.detail = result.as_dict()
    return run


def state_dir_of(flags: Mapping[str, Any]) -> Path:
    """Where the log goes: the configured state dir, or the default when settings fail."""
    try:
        from ..settings import load_settings

        given = {k: v for k, v in flags.items() if v is not None}
        return Path(load_settings(given).state_dir).expanduser()
    except Exception:
        return Path(os.path.expanduser("~/.reverie/state"))


def log_line(state_dir: Path, event: str, message: str) -> None:
    """Append one line to ``<state dir>/hooks.log`` (never raises; rotated at 1 MB)."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        path = hooks_log_path(state_dir)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            path.replace(path.with_suffix(".log.1"))
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {event}: {message}\n")
    except Exception:  # the log is best effort; the hook must still exit 0
        return


def log_failure(state_dir: Path, event: str, exc: BaseException) -> None:
    """Log one failure with where it was raised."""
    import traceback  # only when something failed

    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
    log_line(state_dir, event, f"{type(exc).__name__}: {exc}{at}")


def run(event: str, raw: bytes | str, flags: Mapping[str, Any], *, warm: Any = None) -> HookRun:
    """One hook invocation, fail-open: any error gives no output and a log line.
    ``warm``: an open engine to answer with and leave open (the daemon's), instead of
    one opened (and closed) for this call."""
    engine: Any = None

    def open_engine() -> Any:
        nonlocal engine
        if warm is not None:
            return warm
        from ..engine import Reverie

        engine = Reverie.open(**{k: v for k, v in flags.items() if v is not None})
        return engine

    try:
        payload = read_payload(raw, event)
        result = handle(event, payload, open_engine)
        degraded = (result.detail or {}).get("degraded") or []
        warnings = (result.detail or {}).get("warnings") or []
        for note in [*degraded, *warnings]:  # the hook worked, but memory degraded: say so
            log_line(state_dir_of(flags), event, f"degraded: {note}")
        return result
    except Exception as exc:  # P5: a hook never blocks the user's prompt
        log_failure(state_dir_of(flags), event, exc)
        return HookRun(EVENTS.get(event, event), None, f"{type(exc).__name__}: {exc}")
    finally:
        if engine is not None:
            with contextlib.suppress(Exception):
                engine.close()


def stdout_bytes(result: HookRun, *, as_json: bool = False) -> bytes:
    """What the hook prints (``as_json``: its whole report): the one-shot command's
    stdout and the daemon's HTTP answer are these same bytes."""
    if as_json:
        return (json.dumps(result.as_dict(), ensure_ascii=False, default=str) + "\n").encode()
    if result.output is None:
        return b""
    return (json.dumps(result.output, ensure_ascii=False) + "\n").encode()


__all__ = [
    "CONTEXT_EVENTS",
    "EVENTS",
    "MAX_CONTEXT_CHARS",
    "HookInputError",
    "HookRun",
    "cap_context",
    "handle",
    "read_payload",
    "run",
    "stdout_bytes",
]
