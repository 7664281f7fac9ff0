"""Fakes for the tests of your own agent: no model download, no network, no real time.

- :class:`FakeEmbedder`: a deterministic hashing embedder (same text, same vector), with
  switchable failures (``down=True``, ``fail_after=N``) to test your degraded paths.
- :class:`ScriptedLLM`: each model call pops the next scripted reply (text, a dict sent
  as JSON, an exception to raise, :class:`SimulatedTimeout`, or a callable); ``calls``
  records what each call received.
- :class:`Clock`: ``Clock(fixed=datetime(...))`` stops time; move it by assigning a new
  one to ``memory.clock``.
- :class:`Message`: one message of a conversation, as a model call takes them.
- :func:`scripted_judge`: dreaming's durable-line judge with the classifier replaced by
  a script (the sentences named are kept; ``keep_all=True`` keeps every sentence), for
  tests of the gates and the file rather than of the judgement.
- :func:`memory_for_tests`: a fresh workspace and state dir under a folder (pytest's
  ``tmp_path``), opened on these fakes and initialised, ready for ``open_session``.

Example (a test of your agent loop)::

    from reverie.testing import ScriptedLLM, memory_for_tests

    def test_my_agent_remembers(tmp_path):
        memory = memory_for_tests(tmp_path, llm=ScriptedLLM(["ok"]))
        session = memory.open_session(sender="me", owner="me")
        session.write("The deploy key lives in the team vault.", source="owner")
        assert memory.search("where is the deploy key").hits
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .clock import Clock
from .dreaming.content import Judge, Verdict, judge
from .durable.model import Score
from .engine import Reverie
from .llm.base import LLM, Message
from .llm.fake import Call, ScriptedLLM, SimulatedTimeout
from .storage.embedders.fake import FakeEmbedder

DEFAULT_NOW = datetime.fromisoformat("2026-06-01T09:00:00+00:00")


def memory_for_tests(
    folder: str | Path,
    *,
    llm: LLM | None = None,
    now: datetime | None = DEFAULT_NOW,
    embedder: FakeEmbedder | None = None,
    **settings: Any,
) -> Reverie:
    """A :class:`Reverie` over ``folder/workspace`` and ``folder/state``, initialised,
    on a :class:`FakeEmbedder` (or ``embedder``), ``llm`` (None: no model) and a clock
    fixed at ``now`` (None: the real time). ``settings``: any setting by name, as
    ``reverie settings`` lists them (``dreaming=False``, ``escalation=True``...). No
    environment variable or config file of the machine is read."""
    root = Path(folder)
    memory = Reverie.open(
        root / "workspace",
        root / "state",
        environ={},
        clock=Clock(fixed=now) if now is not None else Clock(),
        use_embedder=embedder if embedder is not None else FakeEmbedder(),
        llm=llm,
        **{k: str(v) for k, v in settings.items()},  # type: ignore[arg-type]
    )
    memory.init()
    return memory


class ScriptedJudge:
    """Dreaming's judge with the classifier replaced by a script: the sentences in
    ``kept`` (or every one, ``keep_all``) are kept, the others are chatter."""

    def __init__(self, *kept: str, keep_all: bool = False) -> None:
        self.kept = frozenset(kept)
        self.keep_all = keep_all

    def _score(self, parts: Sequence[str]) -> list[Score]:
        fact, chat = Score("fact", 1.0, (1.0, 0.0, 0.0)), Score("chatter", 0.0, (0.0, 0.0, 1.0))
        return [fact if self.keep_all or p in self.kept else chat for p in parts]

    def __call__(self, text: str) -> Verdict:
        return judge(text, self._score)

    def prime(self, lines: Sequence[str]) -> None:
        """(nothing to batch)"""

    def keep(self, text: str) -> float:
        """Scripted: 1.0 when a sentence of ``text`` is kept, else 0.0."""
        return 1.0 if self(text).durable else 0.0

    def explain(self, text: str) -> list[dict[str, Any]]:
        """Each sentence's scripted label (no labelled lines behind a script)."""
        said = self(text).sentences
        return [{"sentence": s.text, "label": s.kind, "keep": s.keep, "nearest": []} for s in said]


def scripted_judge(*kept: str, keep_all: bool = False) -> Judge:
    """A :class:`ScriptedJudge` (pass it as ``Reverie(..., judge=...)``)."""
    return ScriptedJudge(*kept, keep_all=keep_all)


__all__ = [
    "DEFAULT_NOW",
    "Call",
    "Clock",
    "FakeEmbedder",
    "Message",
    "ScriptedJudge",
    "ScriptedLLM",
    "SimulatedTimeout",
    "memory_for_tests",
    "scripted_judge",
]
