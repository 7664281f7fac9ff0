"""Where one agent's derived stores live: one backend, chosen once by ``index_backend``
(issue 44).

A backend is one package of this one (:mod:`.sqlite`, :mod:`.postgres`): everything
that differs between backends, behind one class (the index port and the embedding
cache it carries, the recall log, the standing intents' table, the pending requests,
what it holds of an agent, how to delete all of it). The stores keep their protocols in
their capability packages (:class:`reverie.storage.index.port.IndexPort`,
:class:`reverie.storage.embedders.base.EmbeddingCache`,
:class:`reverie.recall.log_port.RecallLogPort`, :class:`reverie.intents.port.IntentStore`,
:class:`reverie.curation.requests.RequestStore`), which never import a backend;
``wiring/`` asks :func:`backend_for` once per engine.

Adding a backend is a package here and one line in
:data:`reverie.setting_rows.core.INDEX_BACKENDS` (:data:`BACKENDS`, which is also the
``index_backend`` setting's choices). What it must do is the contract suite
(``tests/test_backend_contract.py``, ``tests/test_recall_log_backends.py``,
``tests/test_intents_requests_postgres.py``), which runs on every backend listed, set
up by ``backend_environ`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ..errors import ConfigError
from ..setting_rows.core import INDEX_BACKENDS

if TYPE_CHECKING:
    from ..curation.requests import RequestStore
    from ..intents.port import IntentStore, IntentTable
    from ..recall.context import TriggerSource
    from ..recall.log_port import RecallLogPort
    from ..settings import Settings
    from ..storage.index.look import IndexLook
    from ..storage.index.port import IndexPort
    from ..storage.workspace import Workspace

# the backend's name (the setting index_backend) -> "package:class" in this package
BACKENDS = INDEX_BACKENDS


class Backend(Protocol):
    """One agent's derived stores on one backend."""

    name: str

    def describe(self) -> str:
        """Where, in words ("sqlite", "postgres (tenant 'main')")."""
        ...

    def index(self) -> IndexPort:
        """The index port (what it opens stays the backend's until :meth:`close`; what
        a warm process loaded stays for the next port it makes)."""
        ...

    def triggers(self, port: Callable[[], IndexPort]) -> TriggerSource:
        """Where the trigger index reads its rows (``port``: the open index port, should
        the backend read them through it)."""
        ...

    def close(self) -> None:
        """Close what :meth:`index` and :meth:`triggers` opened (opened again on use)."""
        ...

    def recall_log(self) -> RecallLogPort: ...

    def has_recall_log(self) -> bool:
        """False only while there surely is none (a dry run creates nothing)."""
        ...

    def intent_table(self) -> IntentTable:
        """The standing intents' table as the intents service opens it."""
        ...

    def intent_store(self) -> IntentStore:
        """The table itself, opened now (nothing carried over on opening)."""
        ...

    def intents_may_exist(self) -> bool: ...

    def requests(
        self, now: Callable[[], datetime], max_pending: int, *, carry: bool = True
    ) -> RequestStore:
        """The pending requests (``carry``: a store a workspace switched from holds is
        taken over on opening, where the backend does so)."""
        ...

    def held(self) -> list[str]:
        """What this backend holds of the agent besides a derived index ([]: nothing)."""
        ...

    def look(self) -> IndexLook:
        """The index as ``reverie doctor`` compares it with the files, read-only, never
        made or migrated (raises :class:`reverie.storage.index.look.NoIndex`)."""
        ...

    def rebuild_hint(self) -> str:
        """How a person gets a usable index again, in one line."""
        ...

    def drop(self) -> list[str]:
        """Delete every copy of the agent this backend holds; what went."""
        ...


def backend_for(settings: Settings, workspace: Workspace) -> Backend:
    """The backend ``settings.index_backend`` names, for this agent."""
    target = BACKENDS.get(settings.index_backend)
    if target is None:
        raise ConfigError(
            f"no index backend {settings.index_backend!r}: one of {', '.join(BACKENDS)}"
        )
    module, name = target.split(":")
    cls = getattr(importlib.import_module(f".{module}", __package__), name)
    backend: Backend = cls(settings, workspace)
    return backend


__all__ = ["BACKENDS", "Backend", "backend_for"]
