"""The merge of two trees, file by file, onto the workspace (I/O: git blobs in, files out).

Every file either side changed since the merge base is merged in memory
(:func:`reverie.sync.policy.merge_file`), scrubbed of every line a device forgot
(:mod:`reverie.sync.forgotten`), and written atomically. A file the owner (or an agent)
changed on disk after this sync's commit is merged with what is on disk instead of
overwritten (the edit is committed by the next sync).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import SyncError
from ..storage import reader
from ..storage.workspace import SYNC_DEVICES, SYNC_META, SYNC_STONES
from . import forgotten
from .devices import device_list, read_list
from .policy import ABSENT, merge_file
from .seal import mac_lease

# what an unsealed commit changed in curated files is kept here, as an import (always
# untrusted, searchable, never promoted), not in the owner's journal; one sync sets
# aside at most MAX_SET_ASIDE_BYTES
SET_ASIDE = "memory/imports/sync/{}.md"
MAX_SET_ASIDE_BYTES = 1024 * 1024


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")


def merge_meta(
    path: str, dev_id: str, key: bytes, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> bytes | None:
    """The repository's own files: the device list is the union of both (re-signed),
    a device's stones are its own to write, the dreaming lease the first pushed."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if path == SYNC_DEVICES:
        merged: dict[str, Any] = {}
        for d in read_list(theirs)[0] + read_list(ours)[0]:
            merged[str(d.get("id"))] = {**merged.get(str(d.get("id")), {}), **d}
        return device_list(key, [merged[k] for k in sorted(merged)])
    if path == SYNC_STONES.format(dev_id):
        return ours
    return theirs


def merge_trees(
    syncer: Any,  # a reverie.sync.run.Syncer (which imports this module)
    key: bytes,
    base: str | None,
    head: str,
    theirs: str,
    gate: str | object | None,
    report: Any,  # its SyncReport
) -> dict[str, bytes | None]:
    """The merged content of every changed path (None: deleted), already on disk."""
    git, dev = syncer.git, syncer.device
    paths = sorted(git.changed(base, head) | git.changed(base, theirs))
    gate_sha = gate if isinstance(gate, str) else None
    wanted: list[tuple[str | None, str]] = []
    for p in paths:
        wanted += [(base, p), (head, p), (theirs, p)] + ([(gate_sha, p)] if gate_sha else [])
    blobs = git.read(wanted)
    sets = syncer.stone_sets(key, theirs) + syncer.stone_sets(key, head)
    out: dict[str, bytes | None] = {}
    aside: list[str] = []
    for n, p in enumerate(paths):
        if n % 50 == 0:
            syncer.step("merge", n, len(paths))
        b, o, t = blobs[(base, p)], blobs[(head, p)], blobs[(theirs, p)]
        if p.startswith(SYNC_META):
            data = merge_meta(p, dev.id, key, b, o, t)
        else:
            g: str | object | None = ABSENT
            if gate is not ABSENT:
                g = _text(blobs[(gate_sha, p)]) if gate_sha else None
            fm = merge_file(
                p, _text(b), _text(o), _text(t), g,
                unrelated=base is None, labels=(f"this device, {dev.name}", "another device"),
            )  # fmt: skip
            text = fm.text
            if text is not None and p.endswith(".md"):
                # what this device held that a forget elsewhere blocks (the other device's
                # commit already dropped it, or the merge below does): forgotten here too
                forgotten.scrub(_text(o) or "", sets, report.removed)
                scrubbed = forgotten.scrub(text, sets, report.removed)
                report.forgotten_removed += text.count("\n") - scrubbed.count("\n")
                text = scrubbed
            aside += fm.set_aside
            data = _bytes(text)
        if data != o:
            out[p] = data
    if aside:
        size = sum(len(line.encode("utf-8", "surrogateescape")) + 1 for line in aside)
        if size > MAX_SET_ASIDE_BYTES:
            raise SyncError(
                f"the remote's commit {theirs[:12]} is not sealed by a paired device and "
                f"changes {size // 1024} KiB of curated files, over the "
                f"{MAX_SET_ASIDE_BYTES // 1024} KiB one sync sets aside: nothing was merged; "
                "remove that commit from the remote, then sync again"
            )
        day = syncer.now().date().isoformat()
        jp = SET_ASIDE.format(day)  # never the owner's journal: an import, untrusted
        current = _text(out[jp]) if jp in out else _text(git.read([(head, jp)])[(head, jp)])
        current = current or f"# Set aside by sync on {day} (unsealed changes)\n\n"
        out[jp] = _bytes(current.rstrip("\n") + "\n" + "\n".join(aside) + "\n")
        report.set_aside += len(aside)
    files = [(p, data) for p, data in out.items() if not p.startswith(SYNC_META)]
    for n, (p, data) in enumerate(files, start=1):
        _write(syncer, p, data, blobs.get((head, p)))
        syncer.step("write", n, len(files))
    report.merged_files += len(out)
    return out


def _write(syncer: Any, path: str, data: bytes | None, committed: bytes | None) -> None:
    """Write ``data`` unless the file changed on disk since the commit: then merge."""
    target = syncer.ws.root / path
    try:
        disk: bytes | None = reader.read(target, syncer.ws.root).data
    except FileNotFoundError:
        disk = None
    except OSError as exc:  # a FIFO, a link out, a huge file: never opened, never replaced
        raise SyncError(f"{path}: {exc}; not merged (move it away and sync again)") from None
    if disk != committed:
        fm = merge_file(path, _text(committed), _text(disk), _text(data))
        data = _bytes(fm.text)
    syncer.write_file(path, data)


def lease_blob(key: bytes, device: str, until: str, at: str) -> bytes:
    mac = mac_lease(key, device, until, at)
    return (json.dumps({"device": device, "until": until, "at": at, "mac": mac}) + "\n").encode()


__all__ = ["MAX_SET_ASIDE_BYTES", "SET_ASIDE", "lease_blob", "merge_meta", "merge_trees"]
