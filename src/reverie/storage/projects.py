"""Project tags of curated lines (``<!-- project: ... -->``, R-SCOPE-1): a tag's key
normalised, and the sentinel stored for a malformed one. Pure code, apart from the
trailer parser (:mod:`.trailers`), so that trigger injection, which reads the sentinel
on every prompt, does not import the parser."""

from __future__ import annotations

import re

INVALID_PROJECT = "!invalid"
"""Sentinel stored for a malformed project tag: never NULL, which would make it global."""

_PROJECT_OK = re.compile(r"^[a-z0-9][a-z0-9._\-/:@~+]{0,127}$")


def normalise_project(raw: str) -> str:
    """A project key, normalised; :data:`INVALID_PROJECT` when malformed."""
    key = raw.strip().lower()
    key = re.sub(r"^[a-z][a-z0-9+.-]*://", "", key)  # scheme
    key = re.sub(r"^[^@/]+@", "", key)  # user@ of ssh remotes
    key = key.replace(":", "/") if re.match(r"^[^/]+:[^/]", key) else key
    key = key.removesuffix(".git").strip("/")
    if not key or not _PROJECT_OK.match(key) or ".." in key:
        return INVALID_PROJECT
    return key


__all__ = ["INVALID_PROJECT", "normalise_project"]
