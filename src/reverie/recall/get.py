"""memory_get: lines of a workspace file, each run framed by its origin (never a path
outside the workspace)."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ReverieError, WorkspaceError
from ..provenance.frames import frame_lines
from ..provenance.markers import resolve
from ..provenance.origin import Origin, lowest
from ..storage import reader
from ..storage.walk import indexable
from ..storage.workspace import Workspace

Lanes = Literal["hybrid", "keyword", "vector"]


@dataclass(frozen=True)
class GetResult:
    """Lines of a workspace file (``memory_get``), with where more is available.

    ``text`` is what every door shows (the CLI, the MCP tool and resource, JSON alike):
    the lines framed per run of origin (:func:`reverie.provenance.frames.frame_lines`),
    so no line below agent trust reaches a reader, or a model, unframed. ``raw`` holds
    the lines as the file does, for code below the doors (lane 2 frames them itself)."""

    path: str
    start_line: int
    end_line: int
    raw: str  # the lines as the file holds them (never shown by a door)
    more_from: int | None
    total_lines: int
    text: str = ""  # the lines as anyone (a model included) may read them: framed
    segments: tuple[tuple[int, int, Origin], ...] = ()  # (start, end, origin) runs

    @property
    def untrusted(self) -> bool:
        return any(o is Origin.UNTRUSTED for _, _, o in self.segments)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("segments", "raw")}
        out["segments"] = [
            {"start_line": a, "end_line": b, "origin": o.value} for a, b, o in self.segments
        ]
        out["untrusted"] = self.untrusted
        return out

    def render(self) -> str:
        out = self.text
        if not out and self.start_line > self.total_lines:  # said, never an empty answer
            has = f"has {self.total_lines} line(s)" if self.total_lines else "is empty"
            return f"[{self.path} {has}: line {self.start_line} is past its end]"
        if self.more_from is not None:
            out += f"\n[more available from line {self.more_from}]"
        return out


def memory_get(
    ws: Workspace,
    path: str,
    *,
    from_line: int = 1,
    lines: int | None = None,
    max_lines: int = 120,
    max_chars: int = 12000,
) -> GetResult:
    """Read lines of a workspace file; paths that leave the workspace are refused."""
    if from_line < 1 or (lines is not None and lines < 1):
        raise ReverieError(f"{path}: from_line and lines count from 1")
    target = ws.resolve(path)  # never out of the workspace, a link included
    given = os.path.normpath(path).replace(os.sep, "/")
    if not (indexable(given) and indexable(ws.relpath(target))):
        # a group conversation's corpus, a transcript, a config or any other file that
        # is not one of the memory files a person owns (what the index reads)
        raise WorkspaceError(f"{path}: not a memory file of the workspace; refused")
    try:
        fh = reader.open_checked(target, ws.root)  # the one reader policy
    except reader.Refused as exc:  # a FIFO would block the read forever
        raise WorkspaceError(f"{exc}; refused") from None
    except (FileNotFoundError, NotADirectoryError):
        raise WorkspaceError(f"{path}: no such file in the workspace") from None
    want = min(max_lines, lines or max_lines)
    out: list[str] = []
    chars = 0
    total = 0
    more: int | None = None
    with io.TextIOWrapper(fh, encoding="utf-8", errors="replace") as text:
        for number, line in enumerate(text, start=1):
            total = number
            if number < from_line:
                continue
            if more is not None:
                continue
            if not out and len(line) > max_chars:  # one huge line: cut it, move on
                out.append(line[:max_chars].rstrip("\n"))
                chars = max_chars
                more = number + 1
                continue
            if len(out) >= want or chars + len(line) > max_chars:
                more = number
                continue
            out.append(line.rstrip("\n"))
            chars += len(line)
    end = from_line + len(out) - 1 if out else from_line - 1
    rel = ws.relpath(target)
    framed, runs = frame_lines(rel, _line_origins(ws, rel, from_line, out))
    return GetResult(rel, from_line, end, "\n".join(out), more, total, framed, tuple(runs))


def _line_origins(
    ws: Workspace, rel: str, first: int, lines: list[str]
) -> list[tuple[int, str, Origin]]:
    """Each line with its origin, computed as the indexer does (path class, then the
    line's own marker where the path honours markers)."""
    pclass = ws.classify(rel)
    if not pclass.markers:
        origin = lowest(pclass.default_origin, pclass.ceiling)
        return [(first + i, line, origin) for i, line in enumerate(lines)]
    key = ws.origin_key()
    return [
        (
            first + i,
            line,
            resolve(line, default=pclass.default_origin, ceiling=pclass.ceiling, key=key).origin,
        )
        for i, line in enumerate(lines)
    ]


__all__ = ["GetResult", "memory_get"]
