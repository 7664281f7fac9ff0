"""Workspaces synced through a local bare repository (tests of reverie.sync)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reverie import Reverie
from reverie.provenance.origin import Author, Origin, Source
from reverie.storage.document import parse_lines
from reverie.testing import scripted_judge

DAY = "memory/2026-05-01.md"  # the tests' fixed clock (conftest.FIXED_NOW)

KEEP_ALL = scripted_judge(keep_all=True)  # the dream's judgement is not what sync tests


@dataclass
class Device:
    engine: Reverie
    remote: str

    @property
    def root(self) -> Path:
        return self.engine.workspace.root

    def write(self, text: str, source: Source = Source.OWNER) -> None:
        self.engine.write(text, source=source, author=Author(sender="me", owner="me"))

    def sync(self) -> dict[str, object]:
        return self.engine.sync.run(self.remote).as_dict()

    def read(self, rel: str = DAY) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def origins(self, rel: str = DAY) -> dict[str, Origin]:
        """Each line's text (marker and stamp dropped) and the origin it reads with."""
        ws = self.engine.workspace
        pclass = ws.classify(rel)
        key = ws.origin_key() if pclass.markers else None
        lines, _ = parse_lines(rel, self.read(rel), pclass, key=key)
        out = {}
        for ln in lines:
            text = ln.text.strip().lstrip("-").strip()
            if text and not text.startswith("#"):
                out[text.split(" ", 1)[1] if text[:2].isdigit() else text] = ln.origin
        return out


def make_remote(tmp: Path) -> str:
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    return str(remote)


def open_device(tmp: Path, name: str, env: dict[str, str], remote: str) -> Device:
    engine = Reverie.open(
        tmp / name / "ws", tmp / name / "state", environ=env, embedder="none", judge=KEEP_ALL
    )
    engine.init()
    return Device(engine, remote)


def pair(new: Device, old: Device) -> None:
    """The real enrolment: the new device offers, the paired one approves its code."""
    offered = new.engine.sync.pair(new.remote)
    assert offered["paired"] is False
    old.engine.sync.approve(offered["code"], old.remote)
    joined = new.engine.sync.pair()
    assert joined["paired"] and joined["joined"]


def fleet(tmp: Path, env: dict[str, str], n: int) -> Iterator[list[Device]]:
    remote = make_remote(tmp)
    devices = [open_device(tmp, f"d{i}", env, remote) for i in range(n)]
    try:
        devices[0].sync()
        for d in devices[1:]:
            pair(d, devices[0])
        yield devices
    finally:
        for d in devices:
            d.engine.close()


def hand_commit(tmp: Path, remote: str, rel: str, append: str) -> None:
    """Someone with push access (no Reverie, no key) appends to a file and pushes."""
    clone = tmp / "hand"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", remote, str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "pull", "-q"], check=True)
    path = clone / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(append)
    env = ["-c", "user.name=x", "-c", "user.email=x@x"]
    subprocess.run(["git", "-C", str(clone), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(clone), *env, "commit", "-q", "-m", "hand"], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"], check=True)
