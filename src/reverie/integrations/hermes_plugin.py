"""Reverie as Hermes Agent's memory provider (``memory.provider: reverie``).

``reverie install hermes`` copies this file to ``$HERMES_HOME/plugins/reverie/__init__.py``
with a ``config.json`` beside it. It runs inside Hermes's own Python, which need not
have Reverie installed (Hermes pins its own versions of libraries Reverie uses), so it
imports nothing of Reverie and only the standard library: every call is the ``reverie``
command that ``config.json`` names, with this workspace's ``--workspace`` and
``--state-dir`` (a running ``reverie serve`` answers the per-turn context without
starting the engine). What Hermes calls, and what it does:

- ``system_prompt_block``: the bootstrap (AGENTS.md, MEMORY.md, USER.md within their
  budgets), as ``reverie hook session-start`` gives it to Claude Code;
- ``prefetch(query)``: the turn's context without the bootstrap (fired triggers, the
  USER.md directives that bear on it, fired intents), as ``reverie hook
  user-prompt-submit``;
- ``sync_turn`` and ``on_session_end``: the conversation's new messages recorded into a
  Reverie session (``reverie session record``), which computes every origin: the person
  at Hermes's own terminal (platform ``cli``) is the owner, anyone on another platform
  a member (untrusted) unless ``config.json`` names their id as the owner's, another
  tool's output untrusted and a reply after it tainted (our own memory tools' answers
  are recorded as recalled memory, never evidence); the session's end makes it dreaming
  evidence. Sub-agents, cron and flush runs (``agent_context`` other than ``primary``)
  record nothing;
- ``get_tool_schemas`` / ``handle_tool_call``: ``memory_search``, ``memory_get``,
  ``memory_write`` and ``memory_link``, one definition with every other door
  (``reverie tool NAME``). Hermes does not tell a provider which tools ran before a
  call, so a ``memory_write`` is written as tainted (untrusted: found by search, never
  promoted): fail closed.

Memory failures never block a turn: a command that fails or runs past its timeout
gives no context (and a log line in Hermes's log), never an exception.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

try:  # inside Hermes
    from agent.memory_provider import MemoryProvider
except ImportError:  # Reverie's own tests drive it without Hermes installed
    MemoryProvider = object  # type: ignore[assignment,misc]

log = logging.getLogger(__name__)
CONFIG = Path(__file__).with_name("config.json")
TIMEOUT = 20.0  # seconds a context or a tool call may take before the turn goes on without it
RECORD_TIMEOUT = 120.0  # recording and ingesting (after the turn: nothing waits on it)


class ReverieMemory(MemoryProvider):  # type: ignore[misc]
    """The provider Hermes loads from this folder (module doc)."""

    def __init__(self, config: Path | None = None) -> None:
        self._config_path = config or CONFIG
        self._config: dict[str, Any] | None = None
        self._session = ""
        self._sent = 0  # messages of this session recorded so far
        self._writes = True
        self._who: list[str] = []
        self._lock = threading.Lock()  # Hermes may sync a turn while the session ends

    # -- what Hermes asks ------------------------------------------------------------
    @property
    def name(self) -> str:
        return "reverie"

    def is_available(self) -> bool:
        try:
            command = self.config()["command"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return bool(command) and Path(command[0]).exists()

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._start(session_id)
        self._writes = kwargs.get("agent_context", "primary") == "primary"
        platform = str(kwargs.get("platform") or "")
        try:
            owner_ids = self.config().get("owner_ids") or {}
        except (OSError, ValueError) as exc:  # no usable config: nothing is recorded
            log.warning("reverie: %s", exc)
            self._writes, owner_ids = False, {}
        if platform == "cli":  # the person at Hermes's own terminal
            self._who = ["--sender", "owner", "--owner", "owner"]
        else:
            user = str(kwargs.get("user_id") or "unknown")
            owner = owner_ids.get(platform)
            self._who = ["--sender", f"{platform}:{user}", "--channel", "group"]
            if owner:
                self._who = ["--sender", f"{platform}:{user}", "--owner", f"{platform}:{owner}"]

    def system_prompt_block(self) -> str:
        return self._context("session-start", {})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return self._context("user-prompt-submit", {"prompt": query, "cwd": os.getcwd()})

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if messages is None:
            messages = [
                {"role": "user", "content": user_content},
                {"role": "assistant", "content": assistant_content},
            ]
            self._record(messages, end=False, fresh=True)
            return
        self._record(messages, end=False)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._record(messages, end=True)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        if new_session_id != self._session:
            self._record([], end=True)
            self._start(new_session_id)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        try:
            return list(self.config().get("tools") or [])
        except (OSError, ValueError):
            return []

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        answer = self._run(["tool", tool_name, "--tainted"], json.dumps(args or {}), TIMEOUT)
        if answer is None:
            return json.dumps({"error": f"{tool_name}: memory is unavailable right now"})
        return json.dumps({"result": answer.strip()}, ensure_ascii=False)

    def backup_paths(self) -> list[str]:
        try:
            command = self.config()["command"]
        except (OSError, ValueError, KeyError, TypeError):
            return []
        return [command[i + 1] for i, a in enumerate(command[:-1]) if a in _FOLDERS]

    def shutdown(self) -> None:
        """Nothing held open: every call is its own command."""

    # -- how ---------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        if self._config is None:
            data = json.loads(self._config_path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"{self._config_path}: not a JSON object")
            self._config = data
        return self._config

    def _start(self, session_id: str) -> None:
        safe = "".join(c if c.isalnum() or c in "_.-" else "-" for c in session_id)[:56]
        self._session, self._sent = f"hermes-{safe or 'session'}", 0

    def _context(self, event: str, payload: dict[str, Any]) -> str:
        out = self._run(["hook", event], json.dumps(payload), TIMEOUT)
        try:
            data = json.loads(out) if out and out.strip() else {}
            return str(data["hookSpecificOutput"]["additionalContext"])
        except (ValueError, KeyError, TypeError):
            return ""

    def _record(self, messages: list[dict[str, Any]], *, end: bool, fresh: bool = False) -> None:
        with self._lock:
            self._record_locked(messages, end=end, fresh=fresh)

    def _record_locked(self, messages: list[dict[str, Any]], *, end: bool, fresh: bool) -> None:
        if not self._writes or not self._session:
            return
        new = messages if fresh else messages[self._sent :]
        ours = self._ours(messages)
        turns = [{"role": _role(m, ours), "content": m.get("content")} for m in new]
        if not turns and not end:
            return
        command = ["session", "record", "--session", self._session, *self._who]
        if (
            self._run([*command, *(["--end"] if end else [])], json.dumps(turns), RECORD_TIMEOUT)
            is None
        ):
            return  # not recorded: the next call sends these messages again
        if not fresh:
            self._sent = len(messages)

    def _ours(self, messages: list[dict[str, Any]]) -> set[str]:
        """The ids of the calls to our own memory tools in ``messages``."""
        names = {t.get("name") for t in self.get_tool_schemas()}
        return {
            str(call.get("id"))
            for m in messages
            for call in m.get("tool_calls") or []
            if isinstance(call, dict) and (call.get("function") or {}).get("name") in names
        }

    def _run(self, args: list[str], stdin: str, timeout: float) -> str | None:
        """The command's stdout, or None when it failed (logged, never raised)."""
        try:
            command = [*self.config()["command"], *args]
            done = subprocess.run(
                command,
                input=stdin.encode("utf-8"),
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except Exception as exc:  # no config, no command, a timeout: the turn goes on
            log.warning("reverie %s: %s", " ".join(args[:2]), exc)
            return None
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            log.warning("reverie %s exited %s: %s", " ".join(args[:2]), done.returncode, why)
            return None
        return done.stdout.decode("utf-8", "replace")


def _role(message: dict[str, Any], ours: set[str]) -> Any:
    """A tool message answering one of our memory tools is recalled memory (never
    evidence, no taint); any other keeps its role."""
    if message.get("role") == "tool" and str(message.get("tool_call_id")) in ours:
        return "recalled"
    return message.get("role")


_FOLDERS = ("--workspace", "--state-dir")

__all__ = ["ReverieMemory"]
