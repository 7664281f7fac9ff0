"""Bad input gets a clean error, never a traceback or a hang (issue 22, point 13):
deeply nested JSON in imports, transcripts and hook payloads, an unexpected field type
in an export, an impossible cron schedule or date for a standing intent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import RunCli
from reverie.errors import ParseError
from reverie.integrations.import_formats import PARSERS
from test_importers import chatgpt_export, claude_ai_export

DEEP = "[" * 100_000 + "]" * 100_000


def _clean(proc: Any, *names: str) -> None:
    assert proc.returncode not in (0, None), proc.stdout
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: "), proc.stderr
    for name in names:
        assert name in proc.stderr, proc.stderr


def test_deeply_nested_json_is_a_clean_error_everywhere(run_cli: RunCli, tmp_path: Path) -> None:
    run_cli("init")
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    for fmt in ("chatgpt", "claude-ai", "mcp-memory"):
        proc = run_cli("import", fmt, str(deep), check=False, timeout=60)
        _clean(proc, str(deep), "nested too deeply")
    transcript = tmp_path / "deep.jsonl"
    transcript.write_text('{"type": "message", "x": ' + DEEP + "}\n{}\n")
    _clean(run_cli("ingest", str(transcript), check=False, timeout=60), f"{transcript}:1")
    hook = run_cli("hook", "session-end", check=False, timeout=60, stdin=DEEP)
    assert hook.returncode == 0 and "Traceback" not in hook.stderr  # a hook never breaks a turn


def test_an_unexpected_field_type_names_the_conversation(run_cli: RunCli, tmp_path: Path) -> None:
    run_cli("init")
    for fmt, export, where in (
        ("claude-ai", claude_ai_export(), "conversation 1, message 1"),
        ("chatgpt", chatgpt_export(), "conversation 1"),
    ):
        if fmt == "claude-ai":
            export[0]["chat_messages"][0]["attachments"] = 5
        else:
            export[0]["mapping"]["a2"]["parent"] = ["t1"]
        path = tmp_path / f"{fmt}.json"
        path.write_text(json.dumps(export))
        _clean(run_cli("import", fmt, str(path), check=False, timeout=60), str(path), where)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from(["chatgpt", "claude-ai"]), pick=st.integers(0, 10_000), new=JSON)
def test_any_field_of_any_type_fails_only_with_a_parse_error(fmt: str, pick: int, new: Any) -> None:
    export: Any = chatgpt_export() if fmt == "chatgpt" else claude_ai_export()
    spots = _paths(export)[1:]
    spot = spots[pick % len(spots)]
    target = export
    for step in spot[:-1]:
        target = target[step]
    target[spot[-1]] = new
    try:
        PARSERS[fmt](json.dumps(export).encode(), "sample.json")
    except ParseError as exc:
        assert "sample.json" in str(exc)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--every", "0 0 30 2 *"), "never"),
        (("--every", "0 0 31 4 *"), "never"),
        (("--at", "February 31 at 9"), "February has"),
        (("--at", "明年2月30日"), "February has"),
    ],
)
def test_impossible_schedules_and_dates_are_refused(
    run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    run_cli("init")
    proc = run_cli("intent", "add", "pay the rent", *args, check=False, timeout=60)
    _clean(proc, said)
    assert "pay the rent" not in run_cli("intent", "list", "--all").stdout


@pytest.mark.parametrize(
    "text", ["remind me on February 31 at 9 to pay the rent", "明年2月30日提醒我交房租"]
)
def test_an_impossible_date_in_the_text_is_refused(run_cli: RunCli, text: str) -> None:
    run_cli("init")
    proc = run_cli("intent", "add", text, check=False, timeout=60)
    _clean(proc, "February has")
    assert run_cli("intent", "list", "--all", "--json").stdout.strip() in ("[]", "")
