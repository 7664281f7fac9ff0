"""Version links between lines (issue 38, point 1). Pure code.

A line that replaces an earlier one names it in its signed origin marker
(:mod:`reverie.provenance.markers`): ``replaces: memory/2026-05-02.md@3f9a0c1d``, the
earlier line's path and the first 8 hex digits of the SHA-256 of its text (markers
and trailers removed, white space folded). A key by content, not by line number: a
line written or forgotten above it does not move it, and an edit of the earlier line
breaks the link (the edited line is a statement no one linked).

Who may replace whom (checked where a link is written and again where it is read):
owner and agent lines only, never an untrusted or system one, and an agent line never
replaces the owner's; the newer line is of a later day.
"""

from __future__ import annotations

import hashlib
import re

from .origin import Origin

TARGET_RE = re.compile(r"[A-Za-z0-9._/~+-]{1,240}@[0-9a-f]{8}")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")


def line_key(path: str, text: str) -> str:
    """The key a link names a line by: ``path@hash`` of its text (no markers)."""
    body = " ".join(_ITEM.sub("", text, count=1).split())
    return f"{path}@{hashlib.sha256(body.encode('utf-8')).hexdigest()[:8]}"


def may_replace(newer: Origin, older: Origin) -> bool:
    """A line of origin ``newer`` may replace one of origin ``older``."""
    if newer not in (Origin.OWNER, Origin.AGENT) or older not in (Origin.OWNER, Origin.AGENT):
        return False
    return not (older is Origin.OWNER and newer is Origin.AGENT)


__all__ = ["TARGET_RE", "line_key", "may_replace"]
