"""The path lane: the files a query names, by their registry's paths (pure; every
backend asks it with its own paths and index version, and keeps one per warm process)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable


class PathLane:
    """Exact path matches: full path (3) > basename (2) > stem (1)."""

    def __init__(self) -> None:
        self._version: str | None = None
        self._maps: tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]] = ({}, {}, {})

    def _refresh(self, version: str, paths: Callable[[], Iterable[str]]) -> None:
        if version == self._version:
            return
        full: dict[str, str] = {}
        base: dict[str, list[str]] = {}
        stem: dict[str, list[str]] = {}
        for path in paths():
            name = posixpath.basename(path)
            full[path.lower()] = path
            base.setdefault(name.lower(), []).append(path)
            stem.setdefault(posixpath.splitext(name)[0].lower(), []).append(path)
        self._maps = (full, base, stem)
        self._version = version

    def match_in(
        self, version: str, paths: Callable[[], Iterable[str]], query: str
    ) -> dict[str, int]:
        """path -> tier of the files ``query`` names, among the registry's ``paths`` at
        index ``version`` (read only when the version moved)."""
        self._refresh(version, paths)
        full, base, stem = self._maps
        tiers: dict[str, int] = {}
        whole = query.strip().lower()
        words = {w.strip("`'\"()[]<>,;?!") for w in whole.split()} | {whole}
        for w in words:
            if not w:
                continue
            if w in full:
                tiers[full[w]] = max(tiers.get(full[w], 0), 3)
            for p in base.get(w, ()):
                tiers[p] = max(tiers.get(p, 0), 2)
            # a bare word like "user" is content, not a file name: the stem tier needs the
            # whole query to be the stem, or a token shaped like a file name (2026-05-01)
            if w == whole or not w.isalpha():
                for p in stem.get(w, ()):
                    tiers[p] = max(tiers.get(p, 0), 1)
        return tiers


__all__ = ["PathLane"]
