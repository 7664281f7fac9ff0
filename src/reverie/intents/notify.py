"""The daemon's intent step: fire due time intents on time, and run the notify command.

``intent_notify_command`` is an argv list written as JSON (``["notify-send", "Reverie"]``),
run without a shell, with the intent as JSON on stdin, a 30 s deadline and its output
logged. A slot is recorded as notified in the same transaction that takes it, before
the command runs: a notification is sent at most once, never twice (a crash between
the two loses that one notification, it never repeats it). Never raises (P5).
"""

from __future__ import annotations

import ast
import json
import logging
import subprocess
from typing import Any

from ..errors import ConfigError
from .model import Intent
from .service import Intents

log = logging.getLogger("reverie.daemon")
NOTIFY_TIMEOUT = 30.0
EXPIRY_SWEEP = 60.0  # seconds between the daemon's expiry sweeps


def notify_argv(raw: str) -> list[str]:
    """The configured argv list ([] when unset); :class:`ConfigError` for anything but
    a JSON list of strings (a shell string is refused, never split)."""
    raw = raw.strip()
    if not raw:
        return []
    try:
        argv: Any = json.loads(raw)
    except ValueError:  # a TOML array arrives as its Python repr: read it as a literal
        try:
            argv = ast.literal_eval(raw) if raw.startswith("[") else None
        except (ValueError, SyntaxError):
            argv = None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise ConfigError(
            "intent_notify_command: give a JSON list of strings, e.g. "
            f'["notify-send", "Reverie"] (never a shell string), got {raw[:80]!r}'
        )
    return argv


def payload(intent: Intent) -> str:
    return json.dumps({"event": "intent_due", **intent.as_dict()}, ensure_ascii=False)


def run_notify(argv: list[str], intent: Intent) -> bool:
    try:
        done = subprocess.run(
            argv,
            input=payload(intent),
            text=True,
            encoding="utf-8",
            capture_output=True,
            timeout=NOTIFY_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.error("intent %s: notify command %s failed: %s", intent.id, argv[0], exc)
        return False
    if done.returncode != 0:
        log.error(
            "intent %s: notify command exited %d: %s",
            intent.id,
            done.returncode,
            done.stderr.strip()[:300],
        )
        return False
    return True


def notify_due(intents: Intents) -> int:
    """Take the due time intents and notify each; returns how many were due."""
    try:
        intents.sweep(EXPIRY_SWEEP)  # INTENTS.md shows what expired without a `list`
        due = intents.take_due_notifications()
    except Exception as exc:  # P5: the daemon keeps serving
        log.error("standing intents: %s: %s", type(exc).__name__, exc)
        return 0
    if not due:
        return 0
    try:
        argv = notify_argv(str(intents.settings.intent_notify_command))
    except ConfigError as exc:
        log.error("%s", exc)
        argv = []
    for intent in due:
        log.info("intent %s due: %s", intent.id, intent.text)
        if argv:
            run_notify(argv, intent)
    return len(due)


__all__ = ["notify_argv", "notify_due", "payload", "run_notify"]
