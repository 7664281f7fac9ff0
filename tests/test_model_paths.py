"""What reaches a model (issue 22.5): the escalation lane's model gets live transcript
lines redacted as the session corpus is (e-mail addresses, keys, phone numbers), and
a group conversation's lines stay out of every other conversation: the corpus records
channel and agent per line, and search (lane 1, so lane 2 and dreaming too) never
returns a group chat's lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conftest import Paths
from reverie.llm.base import Message
from reverie.llm.fake import ScriptedLLM
from test_escalation import CORPUS, memory

EMAIL, PHONE = "billing-ops@acme.example", "+1 415 555 0100"
KEY = "sk-live-4f9a0c1d2e4b5a69c3d7e8f1a2b3c4d5"


def test_the_lane_model_never_sees_an_address_a_phone_or_a_key(
    paths: Paths, env: dict[str, str]
) -> None:
    shown: list[str] = []

    def model(messages: Sequence[Message]) -> dict[str, Any]:
        shown.extend(m.content for m in messages)
        return {"action": "none", "reason": "nothing"}

    e = memory(paths, env, ScriptedLLM([model, model]))
    live = e.open_session(sender="alice", owner="alice", session_id="dm-live")
    live.record(
        f"For the billing queue mail {EMAIL} or call {PHONE}; the API key is {KEY}.",
        source="owner",
    )
    s = e.open_session(sender="alice", owner="alice")
    ctx = s.context("What did we say about the billing queue the other day?")
    e.close()
    assert ctx.escalation["model_calls"] >= 1, ctx.escalation
    prompt = "\n".join(shown)
    assert "billing queue" in prompt  # the line was shown ...
    for value in (EMAIL, PHONE, KEY):  # ... redacted
        assert value not in prompt
    assert "[REDACTED:email]" in prompt and "[REDACTED:phone]" in prompt


def test_group_lines_stay_out_of_other_conversations(paths: Paths, env: dict[str, str]) -> None:
    e = memory(paths, env)
    group = e.open_session(channel="group", sender="alice", owner="alice", session_id="team")
    group.record("The launch codename for the group is KUMQUAT.", source="owner")
    group.record("KUMQUAT launch codename confirmed by bob.", source="member", sender="bob")
    group.end()
    dm = e.open_session(sender="alice", owner="alice", session_id="dm")
    dm.record("The launch codename for our own release is PERSIMMON.", source="owner")
    dm.end()
    e.index()
    # the corpus says, per line, which channel and agent it came from
    direct = (paths.workspace / CORPUS).read_text(encoding="utf-8")
    assert "PERSIMMON" in direct and "KUMQUAT" not in direct
    assert "channel: direct" in direct and "agent: main" in direct
    # lane 1's search (and so lane 2 and the recall log dreaming reads) never shows another conversation's group lines
    found = e.search("launch codename KUMQUAT PERSIMMON")
    assert found.hits and not any("KUMQUAT" in h.text for h in found.hits)
    assert any("PERSIMMON" in h.text for h in found.hits)
    # an agent sharing the workspace does not see them either
    e.close()
    second = memory(paths, env, agent="second")
    assert not any("KUMQUAT" in h.text for h in second.search("KUMQUAT launch codename").hits)
    second.close()
