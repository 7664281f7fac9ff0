"""A session's project scope (R-SCOPE-1): the directories it enters, as active projects.

The session owns one :class:`SessionScope`. Entering a directory looks its project key
up (:func:`reverie.scope.git.project_key`, cached: no git process) and makes it the most
recent of at most ``limit`` active projects; each change is persisted through the
``persist`` callable the session gives (a ``scope`` record in its transcript), and a
reopened session starts from the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .active import MAX_ACTIVE, ActiveProjects
from .git import project_key
from .remote import key_from_text


class SessionScope:
    """The active projects of one session, persisted on every change."""

    def __init__(
        self,
        record: Mapping[str, Any] | None,
        *,
        persist: Callable[[dict[str, object]], None],
        limit: int = MAX_ACTIVE,
    ) -> None:
        rec = record or {}
        projects = rec.get("projects")
        self._state = ActiveProjects.restore(
            projects if isinstance(projects, list) else [], rec.get("current"), limit
        )
        self._persist = persist

    @property
    def keys(self) -> tuple[str, ...]:
        """The active project keys, most recent first."""
        return self._state.keys

    @property
    def current(self) -> str | None:
        """The project of the directory entered last (None: not inside a repository)."""
        return self._state.current

    def enter(self, cwd: str | Path | None) -> str | None:
        """The agent now works in ``cwd`` (None: unchanged); returns the current project."""
        if cwd is not None:
            self._set(self._state.enter(project_key(cwd)))
        return self._state.current

    def enter_key(self, key: str) -> str | None:
        """As :meth:`enter`, for a project key (or remote URL) given by hand."""
        self._set(self._state.enter(key_from_text(key)))
        return self._state.current

    def active(self, extra: Iterable[str] = ()) -> tuple[str, ...]:
        """The active set for one call: the LRU plus ``extra`` keys given by hand."""
        given = [k for k in (key_from_text(e) for e in extra) if k is not None]
        return tuple(dict.fromkeys([*self._state.keys, *given]))

    def _set(self, new: ActiveProjects) -> None:
        if new != self._state:
            self._persist(new.as_record())
            self._state = new


__all__ = ["SessionScope"]
