"""The review page's confirm step: an action that changes things for good (forget,
restore, confirming an agent's request, a link between two lines) first shows what it
will change and asks once.

Rendered server-side (no script): the first POST returns this page, whose "yes" button
posts the same fields again with ``confirmed=yes``. Each preview is computed without
writing anything (a forget's dry run, the pre-image's diff, the request itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine import Reverie
from . import views

CONFIRMED = "yes"
Change = dict[str, str]  # {"sign": "-" | "+" | " ", "text": ..., "where": ...}


def _forget_lines(
    engine: Reverie, *, text: str | None = None, key: str | None = None
) -> list[Change]:
    report = engine.curation.forget(text, key=key, dry_run=True)
    return [
        {"sign": "-", "text": str(hit["text"]), "where": f"{path}:{hit['line']}"}
        for path, hits in sorted(report.files.items())
        for hit in hits
    ]


def _forget(engine: Reverie, form: dict[str, str]) -> dict[str, Any]:
    key = form.get("key", "")
    return {
        "verb": "forget",
        "question": f"Forget {key}? These lines are deleted from every file, for good:",
        "changes": _forget_lines(engine, key=key),
    }


def _restore(engine: Reverie, form: dict[str, str]) -> dict[str, Any]:
    asked = form.get("name") or ""
    found = views.preimages(engine)  # the one asked for (the newest by default) is read
    picked = [p for p in found if p.name == asked] if asked else found[:1]
    if not picked:
        raise ValueError(f"no pre-image {asked!r}")
    [image] = views.history(engine, picked)
    name = image["name"]
    flip = {"+": "-", "-": "+"}  # the diff runs old -> current; a restore goes back
    changes = [
        {"sign": flip.get(d["sign"], " "), "text": d["text"], "where": "MEMORY.md"}
        for d in image["diff"]
    ]
    return {
        "verb": "restore",
        "question": f"Replace MEMORY.md with {name}? (the current file is kept as a pre-image)",
        "changes": changes,
    }


def _pending(engine: Reverie, form: dict[str, str]) -> dict[str, Any]:
    rid = form.get("id", "")
    req = next((r for r in engine.curation.pending.requests() if r.id == rid), None)
    if req is None:
        raise ValueError(f"no pending request {rid!r}")
    if req.kind == "link":  # no line is removed: the newer line's marker names the older
        changes = [{"sign": "+", "text": f"{req.text} replaces {req.new_text}",
                    "where": f"a version link ({req.reason})"}]  # fmt: skip
        return {"verb": "confirm", "question": f"Confirm {req.by}'s link {rid}?",
                "changes": changes}  # fmt: skip
    changes = _forget_lines(engine, text=req.text)
    if req.kind != "forget":
        changes.append({"sign": "+", "text": str(req.new_text or ""), "where": "the correction"})
    return {
        "verb": "confirm",
        "question": f"Confirm {req.by}'s request {rid} ({req.kind} {req.text!r})?",
        "changes": changes,
    }


def _link(engine: Reverie, form: dict[str, str]) -> dict[str, Any]:
    newer, older = form.get("newer", ""), form.get("older", "")
    if not newer or not older:
        raise ValueError("pick the newer line and the older line it replaces")
    return {
        "verb": "link",
        "question": f"Does {newer} replace {older}? Both lines stay; search shows the newer "
        "one first and marks the older one replaced, with the day.",
        "changes": [
            {"sign": "+", "text": views.line_text(engine, newer), "where": f"{newer} (newer)"},
            {"sign": " ", "text": views.line_text(engine, older), "where": f"{older} (replaced)"},
        ],
    }


STEPS: dict[str, Callable[[Reverie, dict[str, str]], dict[str, Any]]] = {
    "/forget": _forget,
    "/link": _link,
    "/history/restore": _restore,
    "/pending/confirm": _pending,
}


def needs_confirm(path: str, form: dict[str, str]) -> bool:
    return path in STEPS and form.get("confirmed") != CONFIRMED


def preview(engine: Reverie, path: str, form: dict[str, str]) -> dict[str, Any]:
    """What the confirm page shows for the action at ``path`` with ``form``."""
    data = STEPS[path](engine, form)
    fields = {k: v for k, v in form.items() if k not in ("csrf", "do", "confirmed")}
    fields.setdefault("back", "/")  # never back to the action itself (a GET there is 405)
    return {**data, "action": path, "fields": {**fields, "confirmed": CONFIRMED}}


__all__ = ["CONFIRMED", "STEPS", "needs_confirm", "preview"]
