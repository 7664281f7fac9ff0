"""``reverie sync`` and ``reverie device``: one memory on every machine (reverie.sync)."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import SyncError
from .common import Ctx, emit, handles_errors, json_option


def _render(d: dict[str, Any]) -> str:
    lines = [
        f"synced with {d['remote']}: {d['merged_files']} files merged"
        + (", local changes committed" if d["committed"] else "")
        + (", pushed" if d["pushed"] else "")
    ]
    if d["forgotten_removed"]:
        lines.append(f"{d['forgotten_removed']} forgotten lines removed")
    if d["set_aside"]:
        lines.append(f"{d['set_aside']} lines from unsealed commits kept as untrusted")
    for sha in d.get("unsealed", []):
        lines.append(
            f"the remote's commit {sha[:12]} is not sealed by a paired device: what it "
            "added is kept as untrusted, what it removed is kept"
        )
    for c in d["conflicts"]:
        lines.append(f"conflict open: {c} (pick with `reverie sync --pick ID=1` or `=2`)")
    return "\n".join(lines)


def _once(obj: Ctx, remote: str | None, as_json: bool) -> dict[str, Any]:
    engine = obj.engine
    if sys.stderr.isatty() and not as_json:
        with Progress(
            TextColumn("sync"),
            BarColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("", total=5)

            def progress(step: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, description=step)

            return engine.sync.run(remote, progress=progress).as_dict()
    return engine.sync.run(remote).as_dict()


@click.command("sync")
@click.option("--remote", help="The git remote (a bare repository path or any git URL); kept.")
@click.option("--pick", "pick", help="Resolve a sync conflict: ID=1 or ID=2.")
@click.option(
    "--every", type=float, help="Keep running: sync every MINUTES (a daemon; Ctrl-C stops)."
)
@json_option
@click.pass_obj
@handles_errors
def sync(
    obj: Ctx, remote: str | None, pick: str | None, every: float | None, as_json: bool
) -> None:
    """Commit the workspace's Markdown, pull, merge, push and re-index."""
    if pick:
        cid, _, version = pick.partition("=")
        if version not in ("1", "2"):
            raise click.BadParameter("use ID=1 or ID=2", param_hint="--pick")
        try:
            name = obj.engine.sync.pick(cid, int(version))
        except ValueError as exc:
            raise SyncError(str(exc)) from None
        emit(
            {"picked": cid, "version": int(version), "file": name},
            as_json,
            lambda d: f"{d['file']}: kept version {d['version']} of {d['picked']}",
        )
        return
    if every is None:
        emit(_once(obj, remote, as_json), as_json, _render)
        return
    if not (math.isfinite(every) and every > 0):
        raise click.BadParameter(
            f"{every} is not a number of minutes above 0", param_hint="--every"
        )
    while True:  # the daemon: an unreachable remote is reported and retried next time
        try:
            emit(_once(obj, remote, as_json), as_json, _render)
        except SyncError as exc:
            click.echo(f"sync failed: {exc}", err=True)
        remote = None
        time.sleep(max(every, 0.05) * 60)


@click.group("device")
def device() -> None:
    """Pair this device with the others of the same owner (see docs/sync.md)."""


@device.command("pair")
@click.option("--remote", help="The git remote the other devices sync with.")
@click.option("--approve", "code", help="On a paired device: approve the new device's CODE.")
@json_option
@click.pass_obj
@handles_errors
def pair(obj: Ctx, remote: str | None, code: str | None, as_json: bool) -> None:
    """On the new device: show its code (run again once approved). On a paired device:
    `--approve CODE`."""
    if code:
        data = obj.engine.sync.approve(code, remote)
        emit(
            data,
            as_json,
            lambda d: (
                f"approved {d['name']} ({d['approved']}); it can now run `reverie device pair` to join"
            ),
        )
        return
    data = obj.engine.sync.pair(remote)

    def render(d: dict[str, Any]) -> str:
        if d["paired"]:
            return f"this device ({d['device']}) is paired" + (" and synced" if d["joined"] else "")
        return (
            f"pairing code: {d['code']}\non a paired device run "
            f"`reverie device pair --approve {d['code']}`, then run `reverie device pair` here again"
        )

    emit(data, as_json, render)


@device.command("list")
@json_option
@click.pass_obj
@handles_errors
def list_devices(obj: Ctx, as_json: bool) -> None:
    """The paired devices recorded in the synced repository."""
    data = obj.engine.sync.devices()
    emit(
        data,
        as_json,
        lambda ds: "\n".join(f"{d.get('id')}  {d.get('name')}" for d in ds) or "no devices yet",
    )
