"""numpy, imported on first use.

Most of the storage layer handles vectors, so it names numpy everywhere; but a one-shot
command that never touches a vector (``reverie hook user-prompt-submit``, run on every
prompt of a Claude Code session) should not pay numpy's import. Modules write::

    if TYPE_CHECKING:
        import numpy as np
    else:
        from ..lazy import numpy as np

and numpy loads at the first attribute looked up on it (``importlib.util.LazyLoader``).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """``name`` as a module that executes on first attribute access (the real module
    when it is imported already)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


numpy = lazy_import("numpy")

__all__ = ["lazy_import", "numpy"]
