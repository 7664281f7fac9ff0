"""What this package is called where it is installed from: the distribution name on the
package index (the import name and the command stay ``reverie``), and its version."""

from __future__ import annotations

# "reverie-memory" on the package index is another project's: ours is this one.
DISTRIBUTION = "reverie-md-memory"


def version() -> str:
    """The installed version (``0+unknown`` when run from a tree that is not installed)."""
    from importlib import metadata  # (its import, with email's, only when asked)

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


__all__ = ["DISTRIBUTION", "version"]
