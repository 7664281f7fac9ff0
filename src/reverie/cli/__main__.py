"""``python -m reverie.cli``: the same command line as the ``reverie`` script."""

from __future__ import annotations

from . import main

if __name__ == "__main__":
    main()
