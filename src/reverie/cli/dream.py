"""Dreaming commands (R-DREAM-10): run, preview, explain, rem, status, on, off, restore,
and the owner's promote and reject."""

from __future__ import annotations

from typing import Any

import click

from .common import Ctx, emit, handles_errors, json_option


@click.group()
def dream() -> None:
    """Gated background consolidation of journals into MEMORY.md."""


def _render_report(d: dict[str, Any]) -> str:
    if not d["enabled"] and not d["dry_run"]:
        return "dreaming is off; nothing was read or written"
    out = [
        f"{'preview' if d['dry_run'] else 'dream'} at {d['at']}: staged {d['staged']}, "
        f"promoted {len(d['promoted'])}, mode {d['mode']}"
    ]
    if d["fallback_reason"]:
        out.append(f"  {d['fallback_reason']}")
    for c in d["candidates"]:
        out.append(
            f"  {c['decision']:7} {c['score']:.3f} {c['source']} [{c['origin']}] {c['reason']}"
        )
        out.append(f"          {c['snippet'][:120]}")
    links = d.get("links") or {}
    out += [f"  linked: {x['new']} replaces {x['old']} ({x['subject']})"
            for x in links.get("linked", [])]  # fmt: skip
    out += [f"  link refused: {x['new']} -> {x['old']}: {x['why']}"
            for x in links.get("refused", [])]  # fmt: skip
    if links.get("note"):
        out.append(f"  links: {links['note']}")
    out += [f"  warning: {w}" for w in d["warnings"]]
    return "\n".join(out)


@dream.command("run")
@json_option
@click.pass_obj
@handles_errors
def run(obj: Ctx, as_json: bool) -> None:
    """Dream now: light, REM, deep sleep, and promote what passes every gate."""
    report = obj.engine.dream()
    emit(report.as_dict(), as_json, _render_report)


@dream.command()
@json_option
@click.pass_obj
@handles_errors
def preview(obj: Ctx, as_json: bool) -> None:
    """What would be promoted now, with scores (writes nothing)."""
    report = obj.engine.dream(dry_run=True)
    emit(report.as_dict(), as_json, _render_report)


@dream.command()
@click.argument("key")
@json_option
@click.pass_obj
@handles_errors
def explain(obj: Ctx, key: str, as_json: bool) -> None:
    """Every signal and every gate for KEY (path:start:end or path#La-Lb)."""
    data = obj.engine.dream_explain(key)

    def render(d: dict[str, Any]) -> str:
        lines = [f"{d['key']}: {d['decision']} ({d['reason']})"]
        lines += [f"  signal {k}: {v}" for k, v in d.get("signals", {}).items()]
        lines += [
            f"  gate {g['name']}: {'pass' if g['passed'] else 'FAIL'} {g['reason']}"
            for g in d.get("gates", [])
        ]
        for s in d.get("judgement", []):  # the durable-line classifier, sentence by sentence
            lines.append(f"  sentence [{s['label']} {s['keep']:.2f}] {s['sentence']}")
            lines += [
                f"    near [{n['label']} {n['similarity']:.2f}] {n['text']}" for n in s["nearest"]
            ]
        return "\n".join(lines)

    emit(data, as_json, render)


@dream.command()
@json_option
@click.pass_obj
@handles_errors
def rem(obj: Ctx, as_json: bool) -> None:
    """Read-only view of REM themes, reflections and the candidate pool."""
    report = obj.engine.dream(dry_run=True).as_dict()
    data = {
        "themes": report["themes"],
        "reflections": report["reflections"],
        "candidates": [
            {k: c[k] for k in ("key", "source", "snippet", "origin", "score", "decision")}
            for c in report["candidates"]
        ],
    }
    emit(
        data,
        as_json,
        lambda d: "\n".join(
            ["themes:"]
            + [
                f"  {t['tag']} ({len(t['keys'])} notes, strength {t['strength']})"
                for t in d["themes"]
            ]
            + ["reflections:"]
            + [f"  {r}" for r in d["reflections"]]
            + ["candidate pool:"]
            + [f"  {c['score']:.3f} {c['source']} {c['snippet'][:100]}" for c in d["candidates"]]
        ),
    )


@dream.command()
@json_option
@click.pass_obj
@handles_errors
def status(obj: Ctx, as_json: bool) -> None:
    """Dreaming on/off, schedule, last run, promoted so far, pre-images."""
    data = obj.engine.dream_status().as_dict()
    emit(data, as_json, lambda d: "\n".join(f"{k}: {v}" for k, v in d.items()))


@dream.command()
@json_option
@click.pass_obj
@handles_errors
def on(obj: Ctx, as_json: bool) -> None:
    """Switch dreaming on."""
    obj.engine.set_dreaming(True)
    emit(
        {"enabled": obj.engine.dreaming_enabled},
        as_json,
        lambda d: f"dreaming enabled: {d['enabled']}",
    )


@dream.command()
@json_option
@click.pass_obj
@handles_errors
def off(obj: Ctx, as_json: bool) -> None:
    """Switch dreaming off: no dreaming state (recall log included) is written."""
    obj.engine.set_dreaming(False)
    emit(
        {"enabled": obj.engine.dreaming_enabled},
        as_json,
        lambda d: f"dreaming enabled: {d['enabled']}",
    )


@dream.command()
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the pre-images.")
@json_option
@click.pass_obj
@handles_errors
def restore(obj: Ctx, name: str | None, list_: bool, as_json: bool) -> None:
    """Restore MEMORY.md from a pre-image (the newest unless NAME is given)."""
    if list_:
        emit(
            [p.name for p in obj.engine.preimages()],
            as_json,
            lambda d: "\n".join(d) or "no pre-images",
        )
        return
    restored = obj.engine.dream_restore(name)
    emit({"restored": restored.name}, as_json, lambda d: f"MEMORY.md restored from {d['restored']}")


@dream.command()
@click.argument("key")
@json_option
@click.pass_obj
@handles_errors
def promote(obj: Ctx, key: str, as_json: bool) -> None:
    """Promote candidate KEY now, past the numeric gates (provenance, junk and the
    write's acceptance checks still apply; an untrusted candidate is refused)."""
    data = obj.engine.dream_promote(key).as_dict()
    emit(data, as_json, lambda d: f"promoted {d['source']} ({d['mode']})\n  {d['entry']}")


@dream.command()
@click.argument("key")
@json_option
@click.pass_obj
@handles_errors
def reject(obj: Ctx, key: str, as_json: bool) -> None:
    """Never promote candidate KEY (remembered across nights)."""
    data = obj.engine.dream_reject(key).as_dict()
    emit(data, as_json, lambda d: f"rejected {d['source']}: never promoted")
