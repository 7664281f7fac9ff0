"""The trigger-carrying curated rows of the index (what trigger injection reads), parsed
alike on every backend (:meth:`TriggerRow.of`): plain data, no SQL (pure), apart from
the search's candidate rows (:mod:`.rows`) so that the per-prompt hook reads them
without importing those. SQLite's query: :mod:`reverie.backends.sqlite.trigger_rows`."""

from __future__ import annotations

import json
from typing import Any

from ...provenance.origin import Origin
from ...provenance.paths import SourceKind
from ...records import Record


class TriggerRow(Record):
    """A curated chunk that carries trigger phrases (trailers already parsed)."""

    __slots__ = (
        "chunk_id",
        "end_line",
        "kind",
        "origin",
        "path",
        "phrases",
        "projects",
        "start_line",
        "text",
    )

    def __init__(
        self,
        chunk_id: int,
        path: str,
        start_line: int,
        end_line: int,
        text: str,
        kind: SourceKind,
        origin: Origin,
        phrases: tuple[str, ...],
        projects: tuple[str, ...] = (),
    ) -> None:
        self.chunk_id, self.path, self.text = chunk_id, path, text
        self.start_line, self.end_line = start_line, end_line
        self.kind, self.origin, self.phrases, self.projects = kind, origin, phrases, projects

    @classmethod
    def of(cls, r: tuple[Any, ...]) -> TriggerRow:
        """One raw trigger row (id, path, start, end, text, kind, origin, triggers JSON,
        projects JSON), parsed (both backends)."""
        origin = Origin.parse(r[6]) or Origin.UNTRUSTED
        phrases, projects = tuple(json.loads(r[7])), tuple(json.loads(r[8]))
        return cls(r[0], r[1], r[2], r[3], r[4], SourceKind.parse(r[5]), origin, phrases, projects)


__all__ = ["TriggerRow"]
