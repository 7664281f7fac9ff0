"""Provenance: where a piece of content came from, computed by code, never read from text.

- :mod:`.origin`: the closed set of origin classes, session kinds, channels and sources,
  and the one rule that turns a source in a session into an origin (R-PROV-1..3).
- :mod:`.paths`: path classification (pipeline step 2): content lies, paths do not.
- :mod:`.markers`: per-line origin markers (HMAC-signed; may only lower trust unless signed).
- :mod:`.frames`: the tags that frame injected and untrusted blocks, defined once.

Pure code: no I/O, no SQLite, no HTTP.
"""

from .origin import (
    CONNECTED_AGENT,
    OWNER_AT_CLI,
    Author,
    Channel,
    Origin,
    SessionKind,
    Source,
    lowest,
    origin_for,
)
from .paths import SourceKind

__all__ = [
    "CONNECTED_AGENT",
    "OWNER_AT_CLI",
    "Author",
    "Channel",
    "Origin",
    "SessionKind",
    "Source",
    "SourceKind",
    "lowest",
    "origin_for",
]
