"""Devices of one owner and how a new one is paired (the crypto; no git here).

Every paired device holds the same origin key (``<state>/origin.key``), so a line
signed on one verifies on all. The key never enters the repository in the clear:

1. the new device makes an X25519 key pair (``<state>/device.json``, never synced),
   offers its public key on a side ref of the remote and shows its *code* (a short
   hash of that public key);
2. on a paired device the owner runs ``reverie device pair --approve CODE``: only the
   request whose public key hashes to the code the owner read off the new device's
   screen is approved (a request planted by whoever can push to the remote has another
   code). The approver seals the origin key to that public key (X25519, HKDF-SHA256,
   ChaCha20-Poly1305) and adds the device to ``.reverie/devices.json``, whose HMAC
   only a holder of the key can make;
3. the new device opens the sealed key with its private key, checks the device list's
   HMAC with it, and from then on its lines keep their origin on every device.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SyncError
from ..storage.files import atomic_write
from .seal import mac_record, verify_record

_INFO = b"reverie device pairing v1"


@dataclass(frozen=True)
class Device:
    """This device: its id, its name and its X25519 pairing key."""

    id: str
    name: str
    private: bytes  # X25519, for opening the sealed key while pairing

    @property
    def public(self) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

        return _raw(X25519PrivateKey.from_private_bytes(self.private).public_key())

    @property
    def code(self) -> str:
        return code_of(self.public)


def _raw(public: Any) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return bytes(public.public_bytes(Encoding.Raw, PublicFormat.Raw))


def code_of(public: bytes) -> str:
    """What the owner compares on both screens: 80 bits of the public key's hash."""
    digest = base64.b32encode(hashlib.sha256(public).digest()[:10]).decode()
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


def load_device(path: Path) -> Device:
    """This device (created on first use, mode 0600)."""
    try:
        data = json.loads(path.read_text())
        return Device(str(data["id"]), str(data["name"]), bytes.fromhex(data["private"]))
    except FileNotFoundError:
        pass
    except (ValueError, KeyError) as exc:
        raise SyncError(f"{path}: corrupt device file ({exc})") from None
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    key = X25519PrivateKey.generate()
    private = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    name = "".join(c for c in socket.gethostname() if c.isalnum() or c in "-_.")[:40] or "device"
    dev = Device(os.urandom(4).hex(), name, private)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"id": dev.id, "name": dev.name, "private": private.hex()}))
    path.chmod(0o600)
    return dev


def _aead_key(shared: bytes, device: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(hashes.SHA256(), 32, salt=device.encode(), info=_INFO).derive(shared)


def seal_key(origin_key: bytes, public: bytes, device: str) -> dict[str, str]:
    """``origin_key`` sealed to the X25519 ``public`` key of ``device``."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import (
        X25519PrivateKey,
        X25519PublicKey,
    )
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    eph = X25519PrivateKey.generate()
    shared = eph.exchange(X25519PublicKey.from_public_bytes(public))
    box = ChaCha20Poly1305(_aead_key(shared, device)).encrypt(
        b"\0" * 12, origin_key, device.encode()
    )  # a fresh ephemeral key per seal: the all-zero nonce is never reused
    return {"ephemeral": _raw(eph.public_key()).hex(), "sealed": box.hex()}


def open_key(dev: Device, sealed: dict[str, str]) -> bytes:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.asymmetric.x25519 import (
        X25519PrivateKey,
        X25519PublicKey,
    )
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    try:
        shared = X25519PrivateKey.from_private_bytes(dev.private).exchange(
            X25519PublicKey.from_public_bytes(bytes.fromhex(sealed["ephemeral"]))
        )
        return ChaCha20Poly1305(_aead_key(shared, dev.id)).decrypt(
            b"\0" * 12, bytes.fromhex(sealed["sealed"]), dev.id.encode()
        )
    except (InvalidTag, ValueError, KeyError):
        raise SyncError("the sealed key for this device does not open: pair again") from None


# -- the device list (``.reverie/devices.json`` in the repository) ----------------------
def device_list(key: bytes, devices: list[dict[str, Any]]) -> bytes:
    return (
        json.dumps({"devices": devices, "mac": mac_record(key, devices)}, indent=1) + "\n"
    ).encode()


def read_list(raw: bytes | None) -> tuple[list[dict[str, Any]], str]:
    if raw is None:
        return [], ""
    try:
        data = json.loads(raw)
        return list(data["devices"]), str(data["mac"])
    except (ValueError, KeyError, TypeError):
        return [], ""


def paired(key: bytes, raw: bytes | None) -> bool:
    """The device list verifies with ``key``: this device holds the owner's key."""
    devices, mac = read_list(raw)
    return bool(devices) and verify_record(key, devices, mac)


def request(dev: Device) -> bytes:
    return (
        json.dumps({"id": dev.id, "name": dev.name, "public": dev.public.hex()}) + "\n"
    ).encode()


__all__ = [
    "Device",
    "code_of",
    "device_list",
    "load_device",
    "open_key",
    "paired",
    "read_list",
    "request",
    "seal_key",
]
