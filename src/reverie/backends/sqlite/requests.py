"""The requests waiting for the owner in the state dir
(``<state>/<agent>/curation/pending.json``): the SQLite backend's
:class:`reverie.curation.requests.RequestStore`, a JSON file written atomically, every
change under one file lock beside it. Never in the workspace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime

from filelock import FileLock

from ...curation.requests import MAX_PENDING, Request, RequestStore, forgotten
from ...errors import ReverieError
from ...storage.files import atomic_write
from ...storage.workspace import Workspace, lock_beside


class Requests(RequestStore):
    """The requests in ``pending.json``; every change under one file lock."""

    def __init__(
        self, ws: Workspace, *, now: Callable[[], datetime], max_pending: int = MAX_PENDING
    ) -> None:
        self.now, self.max_pending = now, max_pending
        self.path = ws.pending_path

    def load(self) -> list[Request]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise ReverieError(f"{self.path}: corrupt pending requests ({exc})") from None
        return [Request.of(r) for r in raw]

    def save(self, items: list[Request]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(
            self.path, json.dumps([asdict(r) for r in items], ensure_ascii=False, indent=1)
        )

    def adopt(self, items: list[Request]) -> int:
        with self.lock():
            have = self.load()
            known = {r.id for r in have}
            new = [r for r in items if r.id not in known]
            if new:
                self.save(have + new)
        return len(new)

    def lock(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock_beside(self.path)), timeout=60)

    def _append(self, req: Request) -> None:
        with self.lock():
            items = self.load()
            self.room(sum(r.status == "pending" for r in items))
            self.save([*items, req])

    def take(self, rid: str) -> Request | None:
        for r in self.load():
            if r.id == rid:
                if r.status != "pending":
                    raise ReverieError(f"request {rid} is already {r.status}")
                return r
        return None

    def decide(self, rid: str, status: str) -> None:
        items = self.load()
        for r in items:
            if r.id == rid:
                r.status, r.decided = status, self.now().isoformat(timespec="seconds")
        self.save(items)

    def forget(self, blocked: Callable[[str], bool], at: str, *, dry_run: bool) -> int:
        """``pending confirm`` holds the request lock while it forgets, so the lock is
        not taken again here (the write is atomic); a record that is not a request
        stays as it is."""
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return 0
        n = 0
        for raw in items if isinstance(items, list) else []:
            if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
                continue
            blank: dict[str, object] = {"id": "", "kind": "", "new_text": None, "at": ""}
            blank |= {"by": "", "status": None}
            r = Request.of(blank | raw)
            if forgotten(r, blocked, at):
                n += 1
                raw["text"] = r.text
                if raw.get("status") == "pending":
                    raw["status"], raw["decided"] = r.status, r.decided
        if n and not dry_run:
            atomic_write(self.path, json.dumps(items, ensure_ascii=False, indent=1))
        return n


__all__ = ["Requests"]
