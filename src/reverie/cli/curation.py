"""Curation by the owner: ``forget``, ``link``, ``pending list|confirm|reject``, ``trust``,
``untrust``."""

from __future__ import annotations

from typing import Any

import click

from .common import Ctx, emit, handles_errors, json_option


def _render_forget(d: dict[str, Any]) -> str:
    verb = "would remove" if d["dry_run"] else "removed"
    out = [f"{verb} {d['removed_lines']} line(s) ({d['selector']})"]
    for rel, hits in sorted(d["files"].items()):
        out += [f"  {rel}:{h['line']}: {h['text'][:160]}" for h in hits]
    if d["recall_signals"]:
        out.append(
            f"  recall signals {'to drop' if d['dry_run'] else 'dropped'}: "
            + ", ".join(d["recall_signals"])
        )
    out.append(f"  tombstones {'to lay' if d['dry_run'] else 'laid'}: {d['tombstones']}")
    for name, n in sorted(d["history"].items()):
        out.append(f"  history {'to purge' if d['dry_run'] else 'purged'}: {name}: {n} line(s)")
    for name, n in sorted(d.get("reports", {}).items()):
        out.append(
            f"  dream report {'to clean' if d['dry_run'] else 'cleaned'}: {name}: {n} line(s)"
        )
    for store, n in sorted(d.get("stores", {}).items()):
        if n:
            out.append(
                f"  {store.replace('_', ' ')} {'to redact' if d['dry_run'] else 'redacted'}: {n}"
            )
    if d["history_kept"]:
        out.append(
            f"  STILL HELD by {len(d['history_kept'])} pre-image(s) in the state dir (kept for "
            "`dream restore`, which never brings it back): "
            + ", ".join(d["history_kept"])
            + "; forget again with --purge-history to remove it there too"
        )
    out += [f"  STILL HELD outside Reverie's reach: {r}" for r in d.get("remains", [])]
    out += [f"  warning: {w}" for w in d["warnings"]]
    return "\n".join(out)


@click.command()
@click.argument("text", required=False)
@click.option("--key", help="One line: PATH:LINE (or PATH#La-Lb, a dream candidate key).")
@click.option("--session", "session", help="Every line ingested from session ID.")
@click.option(
    "--source", help="Every line of an origin (untrusted, ...) or file kind (import, ...)."
)
@click.option("--dry-run", is_flag=True, help="Show exactly what would change; write nothing.")
@click.option("--purge-history", is_flag=True, help="Also remove it from pre-images and DREAMS.md.")
@json_option
@click.pass_obj
@handles_errors
def forget(
    obj: Ctx,
    text: str | None,
    key: str | None,
    session: str | None,
    source: str | None,
    dry_run: bool,
    purge_history: bool,
    as_json: bool,
) -> None:
    """Remove matching lines from every file, signal and index row, for good."""
    report = obj.engine.curation.forget(
        text,
        key=key,
        session=session,
        source=source,
        dry_run=dry_run,
        purge_history=purge_history,
    )
    emit(report.as_dict(), as_json, _render_forget)


@click.group()
def pending() -> None:
    """Agent requests (memory_forget, memory_correct) waiting for the owner."""


@pending.command("list")
@click.option("--all", "all_", is_flag=True, help="Decided requests too.")
@json_option
@click.pass_obj
@handles_errors
def pending_list(obj: Ctx, all_: bool, as_json: bool) -> None:
    """The requests waiting for you."""
    store = obj.engine.curation.pending
    items = [
        r.__dict__ | ({"changes": store.diff(r)} if r.status == "pending" else {})
        for r in store.requests(all_=all_)
    ]

    def render(d: list[dict[str, Any]]) -> str:
        rows = []
        for r in d:
            what = f"{r['text']!r}" + (f" -> {r['new_text']!r}" if r["new_text"] else "")
            what += f" ({r['reason']})" if r.get("reason") else ""
            rows.append(f"{r['id']} {r['status']:9} {r['kind']:7} {r['at']} {what}")
            for c in r.get("changes", []):
                rows.append(f"    {c['path']}:{c['line']}\n    - {c['old']}")
                rows.append(f"    + {c['new']}" if c["new"] is not None else "    (removed)")
        return "\n".join(rows) or "no pending requests"

    emit(items, as_json, render)


@pending.command("confirm")
@click.argument("rid", metavar="ID")
@json_option
@click.pass_obj
@handles_errors
def pending_confirm(obj: Ctx, rid: str, as_json: bool) -> None:
    """Carry out request ID as your own forget, correction or directive (or arm the
    proposed intent ID)."""
    data = obj.engine.curation.pending.confirm(rid)
    emit(data, as_json, lambda d: f"confirmed {rid}\n" + _render_confirmed(d))


def _render_confirmed(d: dict[str, Any]) -> str:
    if "intent" in d:
        return f"armed: {d['intent']['text']} ({d['intent']['when']})"
    if "directive" in d:
        return f"USER.md: {d['directive']['summary']}"
    return _render_forget(d["forget"])


@pending.command("reject")
@click.argument("rid", metavar="ID")
@json_option
@click.pass_obj
@handles_errors
def pending_reject(obj: Ctx, rid: str, as_json: bool) -> None:
    """Drop request ID: nothing changes."""
    req = obj.engine.curation.pending.reject(rid)
    emit(req.__dict__, as_json, lambda d: f"rejected {d['id']}")


@click.command()
@click.argument("newer")
@click.argument("older")
@json_option
@click.pass_obj
@handles_errors
def link(obj: Ctx, newer: str, older: str, as_json: bool) -> None:
    """Line NEWER replaces line OLDER (each PATH#Ln of a journal): the link is written
    into NEWER's signed marker; search then puts NEWER first and marks OLDER changed."""
    done = obj.engine.curation.link(newer, older)
    emit(
        done.as_dict(),
        as_json,
        lambda d: (f"{d['newer']} already replaces {d['older']}" if d["already"]
                   else f"linked: {d['newer']} replaces {d['older']} ({d['target']})"),
    )  # fmt: skip


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
@handles_errors
def trust(obj: Ctx, path: str, as_json: bool) -> None:
    """Declare folder PATH (inside the workspace) owner-written notes."""
    after = obj.engine.curation.trust(path)
    emit({"trusted": after}, as_json, lambda d: "trusted folders: " + ", ".join(d["trusted"]))


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
@handles_errors
def untrust(obj: Ctx, path: str, as_json: bool) -> None:
    """Take folder PATH back to the default: unrecognised notes read as untrusted."""
    after = obj.engine.curation.untrust(path)
    emit(
        {"trusted": after},
        as_json,
        lambda d: "trusted folders: " + (", ".join(d["trusted"]) or "none"),
    )


__all__ = ["forget", "link", "pending", "trust", "untrust"]
