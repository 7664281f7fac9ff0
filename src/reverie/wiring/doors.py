"""The dreaming verbs behind the facade: the Dreamer, built once with explicit
collaborators, and the owner's USER.md verbs, each under the dream lock with the one
wait policy of :data:`reverie.wiring.adapters.WAITS`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .adapters import WAITS, Adapters

if TYPE_CHECKING:
    from ..curation.model_links import LinkPass
    from ..curation.service import Curation
    from ..dreaming.content import Judge
    from ..dreaming.curate import OwnerPromotion, OwnerRejected
    from ..dreaming.directives import UserModel
    from ..dreaming.report import DreamReport
    from ..dreaming.runner import Dreamer
    from ..dreaming.state import DreamStatus
    from ..results import Accepted, Rejected
    from ..user.directives import Change, Directive

T = TypeVar("T")
BUSY = "a dream is running; try again when it is done"


@contextlib.contextmanager
def dream_locked(a: Adapters, wait: float) -> Iterator[None]:
    """Hold the dream lock (MEMORY.md, USER.md and the dream state are being written)."""
    from ..storage.locks import held

    a.workspace.require()
    with held(a.workspace.dream_lock, wait=wait, busy=BUSY):
        yield


class DreamDoor:
    """The dreamer behind the facade, built once with explicit collaborators (never the
    facade), and the dream lock around every verb that writes: a run waits
    ``WAITS.dream``, the owner's promote, reject and restore ``WAITS.owner_dream``."""

    def __init__(
        self,
        adapters: Adapters,
        judge: Judge | None = None,
        *,
        enabled: Callable[[], bool],
        curation: Callable[[], Curation],
    ) -> None:
        self._a = adapters
        self._judge = judge
        self._enabled = enabled
        self._curation = curation
        self._dreamer: Dreamer | None = None

    def _get(self) -> Dreamer:
        a = self._a
        if self._dreamer is None or self._dreamer.clock is not a.clock:  # (tests move it)
            from ..dreaming.judge import Judge as LearnedJudge
            from ..dreaming.runner import Dreamer

            self._dreamer = Dreamer(
                workspace=a.workspace,
                settings=a.settings,
                clock=a.clock,
                evidence=lambda: a.recall_log.stats(),
                llm=lambda: a.llm("main"),
                reindex=a.reindex,
                enabled=self._enabled,
                judge=self._judge or LearnedJudge(lambda: a.embedder, a.workspace.models_dir),
            )
        return self._dreamer

    @contextlib.contextmanager
    def _locked(self, wait: float) -> Iterator[Dreamer]:
        from ..storage.locks import held

        self._a.workspace.require()
        busy = "a dream is running; try again when it is done"
        with held(self._a.workspace.dream_lock, wait=wait, busy=busy):
            yield self._get()

    def run(self, *, dry_run: bool) -> DreamReport:
        self._a.workspace.require()
        if dry_run:
            return self._get().run(dry_run=True)
        from .sync_door import after_dream, dream_lease

        waits = dream_lease(self._a)  # one device dreams at a time (reverie.sync.lease)
        if waits is not None:
            from ..dreaming.report import DreamReport

            at = self._a.clock.now().isoformat(timespec="seconds")
            return DreamReport(at=at, enabled=True, dry_run=False, fallback_reason=waits)
        with self._locked(WAITS.dream) as dreamer:
            self._curation().resume(locked=True)  # a forget killed halfway goes first
            links = self._link_versions() if self._enabled() else None
            report = dreamer.run()
        if links is not None:
            report.links = links.as_dict()
        after_dream(self._a)
        return report

    def _link_versions(self) -> LinkPass | None:
        """A configured model's version links, checked and written before the dream
        reads them (:mod:`reverie.curation.model_links`); None without a model."""
        from ..curation.model_links import LinkPass, propose
        from ..errors import ReverieError

        a = self._a
        llm = a.llm("main")
        if llm is None:
            return None
        trusted = self._curation().trusted.folders()
        try:  # a memory failure never blocks the dream
            done = propose(a.workspace, a.port, a.embedder, llm, a.clock.now(),
                           timeout=a.settings.llm_timeout, trusted=trusted)  # fmt: skip
            if done.linked:
                a.reindex()
        except (ReverieError, OSError) as exc:
            return LinkPass(note=f"linking failed ({exc}): the dream went on")
        return done

    def explain(self, key: str) -> dict[str, Any]:
        """The candidate's signals and gates, and how each of its sentences was judged
        (``judgement``: label, score, the nearest labelled lines, when the judge can)."""
        from ..dreaming.grounding import with_judgement

        self._a.workspace.require()
        dreamer = self._get()
        return with_judgement(self._a.workspace, dreamer.explain(key), dreamer.judge)

    def promote(self, key: str) -> OwnerPromotion:
        with self._locked(WAITS.owner_dream) as dreamer:
            return dreamer.promote(key)

    def reject(self, key: str) -> OwnerRejected:
        with self._locked(WAITS.owner_dream) as dreamer:
            return dreamer.reject(key)

    def restore(self, name: str | None) -> Path:
        with self._locked(WAITS.owner_dream) as dreamer:
            return dreamer.restore(name)

    def preimages(self) -> list[Path]:
        return self._get().preimages()

    def status(self) -> DreamStatus:
        from ..dreaming.state import DreamStatus

        self._a.workspace.require()
        dreamer = self._get()
        state = dreamer.load_state()
        return DreamStatus(
            enabled=self._enabled(),
            schedule=str(self._a.settings.dream_schedule),
            last_run=state.last_run,
            promoted=len(state.promoted),
            preimages=tuple(p.name for p in dreamer.preimages()),
        )


class UserDoor:
    """``reverie user add|retire|list``: the owner's directives in USER.md, written
    through the dreaming safe write under the dream lock (``WAITS.owner_dream``)."""

    def __init__(self, adapters: Adapters) -> None:
        self._a = adapters

    def _model(self) -> UserModel:
        from ..dreaming.directives import UserModel

        a = self._a
        a.workspace.require()
        return UserModel(
            a.workspace,
            preimages_kept=a.settings.preimages_kept,
            llm=lambda: a.llm("main"),
            timeout=a.settings.llm_timeout,
            clock=a.clock,
        )

    def _locked(self, change: Callable[[UserModel], T]) -> T:
        model = self._model()
        with dream_locked(self._a, WAITS.owner_dream):
            return change(model)

    def add(
        self, text: str, *, key: str | None = None, always: bool = False, by: str
    ) -> Accepted[Change] | Rejected:
        """Add directive ``text`` (or replace the active one of its ``key`` in place)."""
        today = self._a.clock.today()
        return self._locked(lambda m: m.add(text, key=key, always=always, observed=today, by=by))

    def retire(self, key: str, *, by: str) -> Accepted[Change] | Rejected:
        """Remove the active directive of ``key`` (the old USER.md is a pre-image)."""
        return self._locked(lambda m: m.retire(key, by=by))

    def directives(self) -> list[Directive]:
        """USER.md's directives, superseded ones included (``.active`` tells)."""
        return list(self._model().directives())


__all__ = ["BUSY", "DreamDoor", "UserDoor", "dream_locked"]
