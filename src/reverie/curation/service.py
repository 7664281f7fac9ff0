"""The curation service: what the owner (and, only as requests, the agent) can do to
memory by hand. The engine builds it with small ports and exposes it as one property."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..intents import Intents
from ..intents.port import IntentStore
from ..recall.log_port import RecallLogPort
from ..storage.index.port import IndexCurator
from ..storage.workspace import Workspace
from .forget import ForgetPorts, ForgetReport, Forgetter
from .link import Linked, LinkRefused, OwnersLines, agent_link, line_keys, link
from .pending import Pending, Request
from .requests import RequestStore
from .select import Selector
from .trust import TrustedFolders


class Curation:
    """Forget, pending agent requests and trusted folders over one workspace."""

    def __init__(
        self,
        *,
        workspace: Workspace,
        preimages_kept: int,
        now: Callable[[], datetime],
        recall_log: Callable[[], RecallLogPort | None],
        index: Callable[[], IndexCurator],
        reindex: Callable[[], object],
        requests: RequestStore,
        intents: Callable[[], Intents | None] = lambda: None,
    ) -> None:
        """``requests``: where the pending requests are (the backend's,
        :meth:`reverie.backends.Backend.requests`)."""
        self.ws = workspace
        self._index, self._reindex = index, reindex

        def table() -> IntentStore | None:
            service = intents()
            return None if service is None else service.existing()

        ports = ForgetPorts(
            workspace, preimages_kept, now, recall_log, index, reindex, requests, table
        )
        self.forgetter = Forgetter(ports)
        self.pending = Pending(
            workspace,
            self.forgetter,
            requests,
            now=now,
            preimages_kept=preimages_kept,
            intents=intents,
            linker=lambda n, o, keys: self._confirmed_link(n, o, keys).as_dict(),
        )
        self.trusted = TrustedFolders(workspace)

    def forget(
        self,
        text: str | None = None,
        *,
        key: str | None = None,
        session: str | None = None,
        source: str | None = None,
        dry_run: bool = False,
        purge_history: bool = False,
    ) -> ForgetReport:
        sel = Selector.of(text, key=key, session=session, source=source)
        return self.forgetter.forget(sel, dry_run=dry_run, purge_history=purge_history)

    def link(self, newer: str, older: str) -> Linked:
        """``reverie link``: line ``newer`` (``path#Ln``) replaces line ``older``; the
        link is written into the newer line's signed marker and the index re-read
        (:mod:`.link`). Raises :class:`LinkRefused`, naming why, changing nothing."""
        done = link(self.ws, newer, older, self.trusted.folders())
        if not done.already:
            self._reindex()
        return done

    def agent_link(self, newer: str, older: str, subject: str) -> Linked | Request:
        """A connected agent's link over its own note (:func:`.link.agent_link`); over
        two of the owner's lines, a request the owner confirms (kind ``link``)."""
        try:
            done = agent_link(self.ws, newer, older, subject, self.trusted.folders())
        except OwnersLines as exc:
            by = "connected agent (memory_link)"
            return self.pending.request("link", newer, older, by=by, key=exc.keys, reason=subject)
        if not done.already:
            self._reindex()
        return done

    def _confirmed_link(self, newer: str, older: str, keys: str | None) -> Linked:
        """A link request the owner confirmed, written when its lines are still those
        the agent named (a line edited, moved or forgotten since: refused)."""
        if keys != line_keys(self.ws, newer, older, self.trusted.folders()):
            raise LinkRefused(f"{newer} or {older} changed since the request: nothing linked")
        return self.link(newer, older)

    def trust(self, folder: str) -> list[str]:
        """``reverie trust``: ``folder`` holds owner-written notes; its files are re-read
        at their new origin. Returns the trusted folders."""
        return self._retrust(self.trusted.trust, folder)

    def untrust(self, folder: str) -> list[str]:
        """``reverie untrust``: ``folder`` back to the default (untrusted)."""
        return self._retrust(self.trusted.untrust, folder)

    def _retrust(self, change: Callable[[str], list[str]], folder: str) -> list[str]:
        before = set(self.trusted.folders())
        after = change(folder)
        for changed in before ^ set(after):
            self._index().unregister_under(changed)
        self._reindex()
        return after

    def resume(self, *, locked: bool = False) -> ForgetReport | None:
        """Finish a forget that was killed halfway, if there is one (see
        :meth:`Forgetter.resume`); cheap (one stat) when there is none."""
        return self.forgetter.resume(locked=locked)


__all__ = ["Curation", "LinkRefused", "Linked"]
