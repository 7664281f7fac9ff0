"""``reverie device pair``: enrol a new device, approved on a paired one (see
:mod:`reverie.sync.devices` for the protocol and docs/sync.md for the threat model).

The request travels on a side ref of the remote (``refs/reverie/pair/<device>``), so
the new device pushes nothing into the shared history before it is paired; the
approval travels in the history itself (``.reverie/devices.json``, HMAC'd).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from filelock import Timeout

from ..errors import SyncError
from ..storage.files import atomic_write
from ..storage.workspace import SYNC_REQUEST
from .devices import code_of, device_list, open_key, paired, read_list, request, seal_key
from .run import DEVICES, HEAD, REMOTE, Syncer

PAIR_REFS = "refs/reverie/pair/"


def _locked(syncer: Syncer) -> Any:
    try:
        return syncer.lock().acquire()
    except Timeout:
        raise SyncError("another reverie sync is running on this workspace") from None


def offer(syncer: Syncer, remote: str | None = None) -> dict[str, Any]:
    """On the new device: pair now if a paired device approved this one, else offer
    the request and return the code to approve."""
    git = syncer.git
    with _locked(syncer):
        git.ensure()
        if remote:
            git.set_remote(remote)
        if git.remote() is None:
            raise SyncError("no remote configured: run `reverie device pair --remote URL`")
        dev = syncer.device
        git.fetch()
        theirs = git.rev(REMOTE)
        raw = git.read([(theirs, DEVICES)])[(theirs, DEVICES)] if theirs else None
        if raw is not None and paired(syncer.ws.origin_key(), raw):
            return {"paired": True, "device": dev.id, "code": dev.code, "joined": False}
        mine = next((d for d in read_list(raw)[0] if d.get("id") == dev.id and "sealed" in d), None)
        if mine is not None:
            _install(syncer, open_key(dev, mine["sealed"]), raw)
            git.run("push", "-q", "origin", f":{PAIR_REFS}{dev.id}", check=False)
            return {"paired": True, "device": dev.id, "code": dev.code, "joined": True}
        blob = git.out("hash-object", "-w", "--stdin", input=request(dev))
        tree = git.out("mktree", input=f"100644 blob {blob}\t{SYNC_REQUEST}\n".encode())
        sha = git.commit(tree, [], f"reverie: pairing request from {dev.name}\n")
        done = git.run("push", "-q", "-f", "origin", f"{sha}:{PAIR_REFS}{dev.id}", check=False)
        if done.returncode != 0:
            raise SyncError(f"could not offer the pairing request to {git.remote()}")
    return {"paired": False, "device": dev.id, "code": dev.code, "joined": False}


def _install(syncer: Syncer, key: bytes, raw: bytes | None) -> None:
    """Adopt the owner's key (checked against the device list's HMAC first)."""
    if not paired(key, raw):
        raise SyncError("the key sealed for this device does not verify the device list")
    ws = syncer.ws
    if ws.origin_key_path.exists():
        old = ws.origin_key_path.read_text()
        if bytes.fromhex(old.strip()) != key:
            atomic_write(ws.replaced_key_path, old)
    atomic_write(ws.origin_key_path, key.hex() + "\n")
    ws.origin_key_path.chmod(0o600)


def requests(syncer: Syncer) -> list[dict[str, Any]]:
    """The pairing requests waiting on the remote (fetched now)."""
    import json

    git = syncer.git
    git.fetch(f"+{PAIR_REFS}*:{PAIR_REFS}*")
    refs = git.out("for-each-ref", "--format=%(refname)", PAIR_REFS).split()
    found = []
    blobs = git.read([(ref, SYNC_REQUEST) for ref in refs])
    for raw in blobs.values():
        try:
            req = json.loads(raw or b"")
            req["code"] = code_of(bytes.fromhex(req["public"]))
            found.append(req)
        except (ValueError, KeyError, TypeError):
            continue
    return found


def approve(syncer: Syncer, code: str, remote: str | None = None) -> dict[str, Any]:
    """On a paired device: approve the request whose code the owner read off the new
    device, then sync so the approval reaches the remote."""
    want = code.strip().upper().replace(" ", "")
    with _locked(syncer):
        syncer.git.ensure()
        if remote:
            syncer.git.set_remote(remote)
        match = [r for r in requests(syncer) if r["code"].replace("-", "") == want.replace("-", "")]
        if not match:
            raise SyncError(f"no pairing request with code {code!r} is waiting on the remote")
        req = match[0]
        key, dev = syncer.ws.origin_key(), syncer.device
        git = syncer.git
        theirs = git.rev(REMOTE)
        head = git.rev(HEAD)
        src = head or theirs
        raw = git.read([(src, DEVICES)])[(src, DEVICES)] if src else None
        if raw is not None and not paired(key, raw):
            raise SyncError("this device is not paired itself, so it cannot approve another")
        devices = [d for d in read_list(raw)[0] if d.get("id") != req["id"]]
        if not devices:
            devices = [{"id": dev.id, "name": dev.name}]
        record = {
            "id": str(req["id"]),
            "name": str(req.get("name", "device")),
            "public": str(req["public"]),
            "approved_by": dev.id,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "sealed": seal_key(key, bytes.fromhex(req["public"]), str(req["id"])),
        }
        syncer.extra[DEVICES] = device_list(key, [*devices, record])
    try:
        report = syncer.sync()
    finally:
        syncer.extra.pop(DEVICES, None)
    return {"approved": record["id"], "name": record["name"], "head": report.head}


__all__ = ["approve", "offer", "requests"]
