"""What a forget plans with (its report, its ports, the planning matcher) and the small
file helpers it shares with :mod:`.forget`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..intents.port import IntentStore
from ..recall.log_port import RecallLogPort
from ..storage.index.port import IndexCurator
from ..storage.tombstones import Tombstones, contains, tokens
from ..storage.workspace import Workspace
from .requests import RequestStore


@dataclass
class ForgetReport:
    """What a forget removed (or, dry run, would remove)."""

    selector: str
    dry_run: bool
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    recall_signals: list[str] = field(default_factory=list)
    tombstones: int = 0
    history: dict[str, int] = field(default_factory=dict)
    history_kept: list[str] = field(default_factory=list)
    reports: dict[str, int] = field(default_factory=dict)
    stores: dict[str, int] = field(default_factory=dict)
    cached_vectors: int = 0
    warnings: list[str] = field(default_factory=list)
    remains: list[str] = field(default_factory=list)  # what the index's store still holds

    @property
    def removed(self) -> int:
        return sum(len(v) for v in self.files.values())

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "removed_lines": self.removed}


@dataclass(frozen=True)
class ForgetPorts:
    """What a forget needs from the engine (never the facade itself)."""

    workspace: Workspace
    preimages_kept: int
    now: Callable[[], datetime]
    recall_log: Callable[[], RecallLogPort | None]  # None: there is none (dry run: not created)
    index: Callable[[], IndexCurator]  # the derived index, behind its port
    reindex: Callable[[], object]
    requests: RequestStore  # the pending requests (state dir, or the tenant's rows)
    intents: Callable[[], IntentStore | None] = lambda: None  # None: there is no table


def read_text(path: Path) -> str:
    """The text of ``path`` (invalid UTF-8 replaced: a rewrite checks the bytes first)."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


class PlanMatch:
    """The lines a forget removes: the selected contents, the phrase, and whatever an
    earlier forget left a tombstone for (a copy that came back by hand goes too)."""

    def __init__(
        self, contents: set[tuple[str, ...]], phrase: tuple[str, ...] | None, stones: Tombstones
    ) -> None:
        self.contents, self.phrase, self.stones = contents, phrase, stones

    def __call__(self, raw: str) -> bool:
        toks = tokens(raw)
        if not toks:
            return False
        if toks in self.contents or self.stones.blocks(raw):
            return True
        return self.phrase is not None and contains(toks, self.phrase)

    def cut(self, raw: str) -> bool:
        """A history line cut short (DREAMS.md diffs keep 200 characters)."""
        toks = tokens(raw)
        return len(toks) >= 6 and any(c[: len(toks)] == toks for c in self.contents)

    def history_line(self, line: str) -> bool:
        """A DREAMS.md diff line (``- `+` text``) reads as its text (tokens skip the signs)."""
        return self(line.replace("`", " ")) or self.cut(line)


def without(
    text: str,
    blocked: Callable[[str], bool],
    rel: str = "",
    edit: Callable[[str, str], str | None] | None = None,
) -> str:
    """``text`` without its blocked lines, or with them edited (a correction)."""
    out = []
    for ln in text.split("\n"):
        if not blocked(ln):
            out.append(ln)
        elif edit is not None and (new := edit(rel, ln)) is not None:
            out.append(new)
    return "\n".join(out)


__all__ = ["ForgetPorts", "ForgetReport", "PlanMatch", "read_text", "without"]
