"""The dreaming lease: one device dreams at a time (a file of the synced repository,
``.reverie/lease.json``, with an expiry), so two devices never rewrite ``MEMORY.md``
from the same evidence. Taking it is a sync (so this device dreams on the other's
latest ``MEMORY.md``); of two devices racing, the one whose lease reached the remote
first holds it (the merge keeps the remote's lease).

The file travels through a repository anyone with push access can write, so a lease is
honoured only when its HMAC verifies with the owner's key and its device is on the
paired list (:meth:`reverie.sync.run.Syncer.lease`), and never past its stated span
from when it was taken, nor past ``MAX_LEASE_MINUTES``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from ..errors import SyncError
from .apply import lease_blob
from .run import LEASE, Syncer

LEASE_MINUTES = 30.0
MAX_LEASE_MINUTES = 120.0  # no lease, even a paired device's, stops dreaming longer


def configured(syncer: Syncer) -> bool:
    """Sync is set up here (a private repository with a remote)."""
    return (syncer.ws.sync_git_dir / "HEAD").exists() and syncer.git.remote() is not None


def holder(lease: dict[str, object] | None, now: datetime) -> str | None:
    """The device holding an unexpired ``lease`` (None: free)."""
    if not lease:
        return None
    try:
        until = datetime.fromisoformat(str(lease["until"]))
        at = datetime.fromisoformat(str(lease["at"]))
    except (KeyError, ValueError):
        return None
    if until.tzinfo is None or now.tzinfo is None or at.tzinfo is None:
        until, now, at = (
            until.replace(tzinfo=None),
            now.replace(tzinfo=None),
            at.replace(tzinfo=None),
        )
    until = min(until, at + timedelta(minutes=MAX_LEASE_MINUTES))
    return str(lease.get("device")) if at <= now < until else None


def take(syncer: Syncer, minutes: float = LEASE_MINUTES) -> str | None:
    """Take the lease; None when this device holds it, else why dreaming must wait."""
    now = syncer.now()
    me = syncer.device.id
    try:
        syncer.sync()  # the other devices' latest first
        held = holder(syncer.lease(), now)
        if held is not None and held != me:
            return f"dreaming waits: device {held} holds the dreaming lease"
        until = (now + timedelta(minutes=minutes)).isoformat(timespec="seconds")
        at = now.isoformat(timespec="seconds")
        syncer.extra[LEASE] = lease_blob(syncer.ws.origin_key(), me, until, at)
        try:
            syncer.sync()
        finally:
            syncer.extra.pop(LEASE, None)
        held = holder(syncer.lease(), now)
    except SyncError as exc:
        return f"dreaming skipped: the dreaming lease could not be taken ({exc})"
    return None if held == me else f"dreaming waits: device {held} holds the dreaming lease"


def release(syncer: Syncer) -> None:
    """Hand the lease back and push what the dream wrote (best effort: it expires)."""
    lease = syncer.lease()
    syncer.extra[LEASE] = None if lease and lease.get("device") == syncer.device.id else b""
    if syncer.extra[LEASE] == b"":
        syncer.extra.pop(LEASE)
    try:
        syncer.sync()
    except SyncError:
        pass
    finally:
        syncer.extra.pop(LEASE, None)


def parse(raw: bytes | None) -> dict[str, object] | None:
    try:
        return dict(json.loads(raw)) if raw else None
    except ValueError:
        return None


__all__ = ["LEASE_MINUTES", "MAX_LEASE_MINUTES", "configured", "holder", "release", "take"]
