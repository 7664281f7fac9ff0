"""Project scope (R-SCOPE-1): project keys derived from git, read without spawning git.

- :mod:`.remote`: remote URLs and git config text to keys (pure);
- :mod:`.git`: a directory's repository and key, by reading ``.git`` (cached per process);
- :mod:`.active`: a session's LRU of at most 4 active projects (pure);
- :mod:`.session`: that LRU as a session keeps and persists it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .active import MAX_ACTIVE, ActiveProjects, merge_active
    from .git import KEYS, ProjectKeys, Repo, find_repo, project_key
    from .remote import is_valid_key, key_from_text
    from .session import SessionScope

# loaded on first use: the per-prompt hook needs only ``project_key``
_HOME = {
    "MAX_ACTIVE": ".active",
    "ActiveProjects": ".active",
    "merge_active": ".active",
    "KEYS": ".git",
    "ProjectKeys": ".git",
    "Repo": ".git",
    "find_repo": ".git",
    "project_key": ".git",
    "is_valid_key": ".remote",
    "key_from_text": ".remote",
    "SessionScope": ".session",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KEYS",
    "MAX_ACTIVE",
    "ActiveProjects",
    "ProjectKeys",
    "Repo",
    "SessionScope",
    "find_repo",
    "is_valid_key",
    "key_from_text",
    "merge_active",
    "project_key",
]
