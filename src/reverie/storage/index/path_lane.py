"""The path lane: the files a query names, by their registry's paths (pure; every
backend asks it with its own paths and index version, and keeps one per warm process).

The first question at an index version maps only the paths one of its words occurs in
(a one-shot search asks one: mapping all 5,000 paths of a large memory was a tenth of
its search); the second maps them all, once for every question after it."""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

Maps = tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]]


def _maps(paths: Iterable[str]) -> Maps:
    """Full path, basename and stem (lower-cased) -> the paths, in the given order."""
    full: dict[str, str] = {}
    base: dict[str, list[str]] = {}
    stem: dict[str, list[str]] = {}
    for path in paths:
        name = posixpath.basename(path)
        full[path.lower()] = path
        base.setdefault(name.lower(), []).append(path)
        stem.setdefault(posixpath.splitext(name)[0].lower(), []).append(path)
    return full, base, stem


def naming(paths: list[str], words: Iterable[str]) -> list[str]:
    """The ``paths`` (in their order) in which one of ``words`` occurs, lower-cased:
    every path a word can name by its full path, basename or stem, each a part of it.
    One search in the paths joined by NUL, which no path holds. A final sigma counts as
    a sigma: ``str.lower`` maps a capital sigma by the letters around it, so a stem's
    last one (``ς``) is another letter in the whole path (``σ``, before ``.md``)."""
    joined = "\0".join(paths).lower().replace("ς", "σ")
    ends: list[int] | None = None
    at: set[int] = set()
    for word in words:
        w = word.replace("ς", "σ")
        i = joined.find(w) if w else -1
        while i != -1:
            if ends is None:
                ends = [m.start() for m in re.finditer("\0", joined)]
            k = bisect_left(ends, i)  # the path holding position i
            at.add(k)
            i = joined.find(w, ends[k] + 1) if k < len(ends) else -1
    return [paths[k] for k in sorted(at)]


class PathLane:
    """Exact path matches: full path (3) > basename (2) > stem (1)."""

    def __init__(self) -> None:
        self._version: str | None = None
        self._maps: Maps = ({}, {}, {})
        self._asked: str | None = None  # the version one question was answered at

    def match_in(
        self, version: str, paths: Callable[[], Iterable[str]], query: str
    ) -> dict[str, int]:
        """path -> tier of the files ``query`` names, among the registry's ``paths`` at
        index ``version`` (read only when the version moved)."""
        whole = query.strip().lower()
        words = {w.strip("`'\"()[]<>,;?!") for w in whole.split()} | {whole}
        if version == self._version:
            maps = self._maps
        elif version != self._asked:  # the first question at this version
            self._asked = version
            maps = _maps(naming(list(paths()), words))
        else:
            self._maps, self._version = _maps(paths()), version
            maps = self._maps
        full, base, stem = maps
        tiers: dict[str, int] = {}
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


__all__ = ["PathLane", "naming"]
