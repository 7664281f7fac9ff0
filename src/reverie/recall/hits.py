"""Search results as a model reads them: one hit (exact lines, snippet, score, origin,
day) and a response. The text rendering groups hits by file: the first hit of a file
names the file, day (unless the file's name says it) and origin and its score; the
next hits of that file with the same origin say only their lines (every token of a
head is a token of the budget not spent on evidence)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..provenance.frames import frame_for
from ..provenance.origin import Origin, SessionKind
from ..provenance.paths import SourceKind
from .snippets import grouped


@dataclass(frozen=True)
class Hit:
    """One search result: exact lines of a file, the snippet, score, origin and day."""

    path: str
    start_line: int
    end_line: int
    snippet: str
    score: float
    origin: Origin
    kind: SourceKind
    explain: dict[str, Any]
    session_kind: SessionKind | None = None
    day: date | None = None
    text: str = ""  # the whole chunk (the snippet shows its best lines)
    chunk_start: int = 0  # the chunk's first line (``text`` starts there)
    superseded_by: str | None = None  # "path#Ln" of a newer line stating the same fact
    changed_on: date | None = None  # that line's day

    @property
    def key(self) -> str:
        return f"{self.path}:{self.start_line}:{self.end_line}"

    @property
    def relevance(self) -> float:
        """The score before journal decay (what the min score judges)."""
        return float(self.explain.get("relevance", self.score))

    @property
    def untrusted(self) -> bool:
        return self.origin is Origin.UNTRUSTED

    @property
    def lines(self) -> range:
        """The line numbers shown."""
        return range(self.start_line, self.end_line + 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "source": f"{self.path}#L{self.start_line}-L{self.end_line}",
            "snippet": self.framed,
            "score": round(self.score, 4),
            "origin": self.origin.value,
            "untrusted": self.untrusted,
            "kind": self.kind.value,
            "day": self.day.isoformat() if self.day else None,
            "superseded_by": self.superseded_by,
            "changed_on": self.changed_on.isoformat() if self.changed_on else None,
            "explain": self.explain,
        }

    @property
    def framed(self) -> str:
        """The snippet as a model may read it: defused, and framed when its origin is
        untrusted or system (R-RECALL-6), in text and JSON alike."""
        return frame_for(
            self.origin, self.snippet, f"{self.path}#L{self.start_line}-L{self.end_line}"
        )

    @property
    def group(self) -> tuple[str, Origin, date | None]:
        """Hits of one group share a head when rendered together."""
        return (self.path, self.origin, self.day)

    def render(self, explain: bool = False, *, under_head: bool = False) -> str:
        """Head and framed snippet. ``under_head``: rendered after a hit of the same
        group, the head says only the lines (the group's head has the score). The
        head names the day unless the file's name does (``memory/2026-03-14.md``):
        every token of a head is one a budget does not spend on evidence."""
        if under_head:
            end = f"-L{self.end_line}" if self.end_line != self.start_line else ""
            head = f"#L{self.start_line}{end}"
        else:  # the day once: a journal's or transcript's file name already says it
            shown = self.day.isoformat() if self.day else ""
            day = f" {shown}" if shown and shown not in self.path.rsplit("/", 1)[-1] else ""
            where = f"{self.path}#L{self.start_line}-L{self.end_line}"
            head = f"{where}{day} {self.origin} {self.score:.2f}"
        if self.superseded_by:
            on = f" on {self.changed_on.isoformat()}" if self.changed_on else ""
            head += f" (earlier; changed{on}, see {self.superseded_by})"
        out = f"{head}\n{self.framed}"
        if explain:
            chain = {k: v for k, v in self.explain.items() if k != "versions"}
            out += "\n  " + ", ".join(f"{k}={v}" for k, v in chain.items())
            group = self.explain.get("versions")
            if group:  # the versions this hit is one of, how they were ordered, and why
                out += f"\n  versions: {group['order']}; {group['why']}"
        return out

    def piece(self, *, under_head: bool) -> str:
        """What this hit adds to a response's text (its separator included)."""
        return ("\n" if under_head else "\n\n") + self.render(under_head=under_head)


@dataclass
class SearchResponse:
    """The hits of one search, its mode (hybrid, keyword-only...) and notes."""

    query: str
    hits: list[Hit]
    mode: str  # hybrid | keyword-only | vector-only
    degraded: str | None = None  # why the vector lane was not used
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "degraded": self.degraded,
            "notes": self.notes,
            "hits": [h.as_dict() for h in self.hits],
        }

    def render(self, explain: bool = False) -> str:
        """The hits grouped by file (:attr:`Hit.group`): a file's first hit names it,
        its next hits sit right under it with their lines and score only."""
        out = f"{len(self.hits)} result(s), {self.mode}" + (
            f" ({self.degraded})" if self.degraded else ""
        )
        order = grouped([h.group for h in self.hits])
        return out + "".join(
            ("\n" if under else "\n\n") + self.hits[i].render(explain, under_head=under)
            for i, under in order
        )


__all__ = ["Hit", "SearchResponse"]
