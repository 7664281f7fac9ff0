"""What a paired device vouches for, and how content nobody vouched for is lowered (pure).

Every commit a paired device makes carries a *seal* in its message: an HMAC over the
commit's tree, its parents and the device, with the owner's origin key (which only
paired devices hold, never the repository). A sealed commit passed through a paired
device's merge, so everything in it was either written there or already gated; and
because the seal covers the parents, a seal copied onto another commit (an old tree and
message put back on top of the tip, an old sealed commit named as a parent) does not
verify: such a commit is unsealed, and gated like any other. A commit nobody sealed (a hand commit, an
unpaired device, a copy of a marker pasted onto new text) is gated when merged:

- a line it added to a marker file (journal, session corpus) is *lowered*: a leading
  ``<!-- origin: untrusted -->`` marker is added, which the marker rules always honour
  (a marker may lower a line, never raise it), so it reads ``untrusted`` on every
  device, is never promoted, and a copied signature under it raises nothing;
- an entry it changed in any other file (``MEMORY.md``, ``USER.md``, ``AGENTS.md``, a
  note) is not merged in: it is kept, lowered, as a line of the day's journal, so
  nothing is lost and nothing gains the trust of a curated file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from typing import Any

SEAL_RE = re.compile(r"^Reverie-Seal: ([0-9a-f]{8,32}) ([0-9a-f]{32})$", re.MULTILINE)
UNTRUSTED = "<!-- origin: untrusted -->"
_ITEM_RE = re.compile(r"^(\s*[-*+]\s+)(.*)$", re.DOTALL)


def _mac(key: bytes, *parts: str) -> str:
    return hmac.new(key, "\x00".join(parts).encode(), hashlib.sha256).hexdigest()[:32]


def _seal_mac(key: bytes, tree: str, parents: Sequence[str], device: str) -> str:
    # version 2 binds the parents; a version-1 seal (the tree alone) verifies as none
    return _mac(key, "reverie-seal/2", tree, " ".join(parents), device)


def seal_line(key: bytes, tree: str, parents: Sequence[str], device: str) -> str:
    """The seal trailer of a commit of ``tree`` on ``parents`` made by ``device``."""
    return f"Reverie-Seal: {device} {_seal_mac(key, tree, parents, device)}"


def sealed(key: bytes, tree: str, parents: Sequence[str], message: str) -> bool:
    """``message`` (of a commit of ``tree`` on ``parents``, in order) holds a seal that
    verifies with ``key``."""
    return any(
        hmac.compare_digest(m.group(2), _seal_mac(key, tree, parents, m.group(1)))
        for m in SEAL_RE.finditer(message)
    )


def lower(line: str) -> str:
    """``line`` read as ``untrusted`` wherever it goes (blank lines and headings, which
    hold no memory, unchanged); idempotent, so two devices gating the same line write
    the same bytes and the union keeps it once."""
    if not line.strip() or line.startswith("#") or UNTRUSTED in line:
        return line
    m = _ITEM_RE.match(line)
    if m is None:
        return f"- {UNTRUSTED} {line.strip()}"
    return f"{m.group(1)}{UNTRUSTED} {m.group(2)}"


def mac_record(key: bytes, record: Any) -> str:
    """An HMAC over the canonical JSON of ``record`` (the device list)."""
    return _mac(key, "reverie-devices", json.dumps(record, sort_keys=True, separators=(",", ":")))


def verify_record(key: bytes, record: Any, mac: str) -> bool:
    return hmac.compare_digest(mac, mac_record(key, record))


def mac_lease(key: bytes, device: str, until: str, at: str) -> str:
    """The dreaming lease's HMAC: only a device holding the key can take the lease."""
    return _mac(key, "reverie-lease", device, until, at)


def verify_lease(key: bytes, lease: Any) -> bool:
    try:
        parts = [str(lease[k]) for k in ("device", "until", "at")]
        return hmac.compare_digest(str(lease["mac"]), mac_lease(key, *parts))
    except (KeyError, TypeError):
        return False


def seal_salt(key: bytes, device: str, salt: bytes) -> str:
    """A device's tombstone salt, encrypted for paired devices (a one-time pad drawn
    from the key and the device id): the repository holds forgotten lines' hashes, and
    whoever reads it without the key can neither learn the salt nor test guesses."""
    pad = hmac.new(key, f"reverie-salt\x00{device}".encode(), hashlib.sha256).digest()
    return bytes(a ^ b for a, b in zip(salt, pad, strict=False)).hex()


def open_salt(key: bytes, device: str, sealed_hex: str) -> bytes:
    return bytes.fromhex(seal_salt(key, device, bytes.fromhex(sealed_hex)))


__all__ = [
    "SEAL_RE",
    "UNTRUSTED",
    "lower",
    "mac_lease",
    "mac_record",
    "open_salt",
    "seal_line",
    "seal_salt",
    "sealed",
    "verify_lease",
    "verify_record",
]
