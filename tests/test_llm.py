"""LLM providers: real wire formats against a local HTTP stub, the scripted fake, the factory."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reverie.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from reverie.llm import (
    AnthropicLLM,
    Message,
    OpenAIChatLLM,
    ScriptedLLM,
    SimulatedTimeout,
    extract_json,
    make_llm,
)
from reverie.llm.http import HttpLLM, retry_after_seconds
from reverie.settings import defaults

SECRET = "sk-test-VERY-SECRET-0123456789"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
    "additionalProperties": False,
}
HELLO = [Message("user", "hello")]


# --- a local stub server --------------------------------------------------------------------


@dataclass
class Canned:
    status: int = 200
    body: Any = None  # dict -> JSON; str/bytes -> raw
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class Stub:
    """An HTTP server on 127.0.0.1 (random port) answering from a script of Canned replies."""

    def __init__(self) -> None:
        self.script: list[Canned] = []
        self.seen: list[Seen] = []
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                headers = {k.lower(): v for k, v in self.headers.items()}
                stub.seen.append(Seen(self.path, headers, body))
                canned = stub.script.pop(0) if stub.script else Canned(500, {"error": "empty"})
                if canned.delay:
                    stub.release.wait(canned.delay)
                payload = canned.body
                if isinstance(payload, dict):
                    payload = json.dumps(payload)
                data = payload.encode() if isinstance(payload, str) else payload or b""
                try:
                    self.send_response(canned.status)
                    for key, value in canned.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[Stub]:
    s = Stub()
    yield s
    s.close()


# --- the two wire formats -------------------------------------------------------------------


@dataclass
class Wire:
    name: str
    path: str
    make: Callable[..., HttpLLM]
    ok: Callable[[str], dict[str, Any]]  # a success body carrying this reply text
    cut_off: Callable[[str], dict[str, Any]]


def _openai_ok(text: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def _anthropic_ok(text: str, stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "served-model",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


WIRES = [
    Wire(
        "openai",
        "/v1/chat/completions",
        lambda url, **kw: OpenAIChatLLM(model="m1", base_url=url + "/v1", **kw),
        _openai_ok,
        lambda text: _openai_ok(text, "length"),
    ),
    Wire(
        "anthropic",
        "/v1/messages",
        lambda url, **kw: AnthropicLLM(model="m1", base_url=url, **kw),
        _anthropic_ok,
        lambda text: _anthropic_ok(text, "max_tokens"),
    ),
]


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _llm(wire: Wire, stub: Stub, sleeps: Sleeps | None = None, **kw: Any) -> HttpLLM:
    return wire.make(
        stub.url, api_key=SECRET, sleep=sleeps if sleeps is not None else Sleeps(), **kw
    )


def _assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text


# --- providers over HTTP --------------------------------------------------------------------


def test_text_reply(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, wire.ok("Hi there.")))
    with _llm(wire, stub) as llm:
        out = llm.complete(HELLO, system="Be brief.", max_tokens=50)
    assert out.text == "Hi there."
    assert out.data is None
    assert out.model == "served-model"
    assert out.usage["input_tokens"] == 11 and out.usage["output_tokens"] == 7
    (seen,) = stub.seen
    assert seen.path == wire.path
    assert seen.body["model"] == "m1" and seen.body["max_tokens"] == 50
    if wire.name == "openai":
        assert seen.headers["authorization"] == f"Bearer {SECRET}"
        assert seen.body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert seen.body["messages"][1] == {"role": "user", "content": "hello"}
        assert "response_format" not in seen.body
    else:
        assert seen.headers["x-api-key"] == SECRET
        assert seen.headers["anthropic-version"] == "2023-06-01"
        assert seen.body["system"] == "Be brief."
        assert seen.body["messages"] == [{"role": "user", "content": "hello"}]


def test_json_schema_mode_parses_fenced_reply(wire: Wire, stub: Stub) -> None:
    reply = 'Here you go:\n```json\n{"facts": ["likes tea"]}\n```'
    stub.script.append(Canned(200, wire.ok(reply)))
    with _llm(wire, stub) as llm:
        out = llm.complete(HELLO, json_schema=SCHEMA)
    assert out.data == {"facts": ["likes tea"]}
    assert out.text == reply
    body = stub.seen[0].body
    if wire.name == "openai":
        assert body["response_format"] == {"type": "json_object"}
        assert "JSON" in body["messages"][0]["content"]
    else:
        assert "JSON" in body["system"] and '"facts"' in body["system"]


def test_schema_invalid_reply_is_a_permanent_error(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, wire.ok('{"facts": "not a list"}')))
    with _llm(wire, stub) as llm, pytest.raises(ProviderError) as info:
        llm.complete(HELLO, json_schema=SCHEMA)
    assert not info.value.transient
    assert "schema" in str(info.value) and "facts" in str(info.value)


def test_unparseable_reply_says_so_and_mentions_cut_off(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, wire.cut_off('{"facts": ["likes t')))
    with _llm(wire, stub) as llm, pytest.raises(ProviderError) as info:
        llm.complete(HELLO, json_schema=SCHEMA)
    assert not info.value.transient
    assert "not valid JSON" in str(info.value)
    assert "max_tokens" in str(info.value)


def test_401_is_unavailable_not_transient_and_not_retried(
    wire: Wire, stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    stub.script.append(Canned(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    llm = _llm(wire, stub)
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderUnavailable) as info:
        llm.complete(HELLO)
    assert not info.value.transient
    assert "401" in str(info.value)
    assert len(stub.seen) == 1
    _assert_no_secret(str(info.value), repr(info.value), repr(llm), caplog.text)


def test_429_then_success_honours_retry_after(
    wire: Wire, stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    stub.script += [
        Canned(429, {"error": "slow down"}, {"Retry-After": "3"}),
        Canned(200, wire.ok("ok")),
    ]
    sleeps = Sleeps()
    with caplog.at_level(logging.DEBUG), _llm(wire, stub, sleeps) as llm:
        assert llm.complete(HELLO).text == "ok"
    assert sleeps == [3.0]
    assert len(stub.seen) == 2
    _assert_no_secret(caplog.text)


def test_retry_after_is_capped(wire: Wire, stub: Stub) -> None:
    stub.script += [Canned(503, "busy", {"Retry-After": "120"}), Canned(200, wire.ok("ok"))]
    sleeps = Sleeps()
    with _llm(wire, stub, sleeps) as llm:
        assert llm.complete(HELLO).text == "ok"
    assert sleeps == [8.0]


def test_retries_are_bounded(wire: Wire, stub: Stub) -> None:
    stub.script += [Canned(500, "boom") for _ in range(5)]
    sleeps = Sleeps()
    with _llm(wire, stub, sleeps) as llm, pytest.raises(ProviderUnavailable) as info:
        llm.complete(HELLO)
    assert info.value.transient
    assert len(stub.seen) == 3  # one try + 2 retries
    assert len(sleeps) == 2


def test_retry_that_would_pass_the_deadline_is_not_attempted(wire: Wire, stub: Stub) -> None:
    stub.script += [Canned(429, "", {"Retry-After": "5"}), Canned(200, wire.ok("ok"))]
    sleeps = Sleeps()
    with _llm(wire, stub, sleeps) as llm, pytest.raises(ProviderUnavailable) as info:
        llm.complete(HELLO, timeout=2.0)
    assert info.value.transient
    assert sleeps == []


def test_timeout(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, wire.ok("late"), delay=5.0))
    with _llm(wire, stub, timeout=0.3) as llm, pytest.raises(ProviderTimeout) as info:
        llm.complete(HELLO)
    assert info.value.transient
    _assert_no_secret(str(info.value))


def test_malformed_json_body(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, "<html>gateway says hi</html>"))
    with _llm(wire, stub) as llm, pytest.raises(ProviderError) as info:
        llm.complete(HELLO)
    assert type(info.value) is ProviderError
    assert not info.value.transient
    assert "malformed" in str(info.value)


def test_body_without_reply_text_is_malformed(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(200, {"unexpected": True}))
    with _llm(wire, stub) as llm, pytest.raises(ProviderError, match="malformed"):
        llm.complete(HELLO)


def test_other_4xx_reports_server_message_without_the_key(wire: Wire, stub: Stub) -> None:
    stub.script.append(Canned(400, {"error": {"message": f"model m1 not found (key {SECRET})"}}))
    with _llm(wire, stub) as llm, pytest.raises(ProviderError) as info:
        llm.complete(HELLO)
    assert "model m1 not found" in str(info.value)
    assert not info.value.transient
    _assert_no_secret(str(info.value))


def test_connection_refused_is_unavailable(wire: Wire) -> None:
    closed = Stub()
    url = closed.url
    closed.close()
    llm = wire.make(url, api_key=SECRET, timeout=2.0)
    with pytest.raises(ProviderUnavailable) as info:
        llm.complete(HELLO)
    assert info.value.transient
    _assert_no_secret(str(info.value), repr(llm))


def test_credentials_in_base_url_are_not_echoed(wire: Wire) -> None:
    llm = wire.make(f"http://user:{SECRET}@127.0.0.1:9", timeout=0.5)
    with pytest.raises(ProviderError) as info:
        llm.complete(HELLO)
    _assert_no_secret(str(info.value), repr(llm))


def test_anthropic_folds_system_messages_into_the_system_field(stub: Stub) -> None:
    stub.script.append(Canned(200, _anthropic_ok("ok")))
    llm = AnthropicLLM(model="m1", base_url=stub.url)
    llm.complete([Message("system", "You are careful."), Message("user", "hi")], system="Base.")
    body = stub.seen[0].body
    assert body["system"] == "Base.\n\nYou are careful."
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "x-api-key" not in stub.seen[0].headers


def test_openai_without_key_sends_no_authorization(stub: Stub) -> None:
    stub.script.append(Canned(200, _openai_ok("ok")))
    OpenAIChatLLM(model="llama3", base_url=stub.url + "/v1").complete(HELLO)
    assert "authorization" not in stub.seen[0].headers


def test_openai_schema_json_mode_sends_the_schema(stub: Stub) -> None:
    stub.script.append(Canned(200, _openai_ok('{"facts": []}')))
    llm = OpenAIChatLLM(model="m", base_url=stub.url + "/v1", json_mode="schema")
    assert llm.complete(HELLO, json_schema=SCHEMA).data == {"facts": []}
    fmt = stub.seen[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA


def test_bad_schema_is_a_caller_bug(stub: Stub) -> None:
    llm = OpenAIChatLLM(model="m", base_url=stub.url)
    with pytest.raises(ValueError, match="invalid json_schema"):
        llm.complete(HELLO, json_schema={"type": 12})
    assert stub.seen == []


def test_retry_after_http_date() -> None:
    from datetime import datetime

    now = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Fri, 01 May 2026 09:00:04 GMT", now=now) == 4.0
    assert retry_after_seconds("garbage") is None
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("-3") == 0.0


# --- JSON extraction ------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
_prose = st.text(alphabet=st.characters(exclude_characters='{}`[]"', codec="utf-8"), max_size=40)


@given(
    st.dictionaries(st.text(max_size=8), _json_values, max_size=4), _prose, _prose, st.booleans()
)
def test_extract_json_finds_the_object_in_prose_or_fences(
    obj: dict[str, Any], before: str, after: str, fenced: bool
) -> None:
    body = json.dumps(obj, indent=1)
    text = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    assert extract_json(text) == obj


def test_extract_json_rejects_prose() -> None:
    with pytest.raises(ValueError):
        extract_json("I could not find any facts.")


# --- the scripted fake ----------------------------------------------------------------------


def test_fake_replies_in_order_and_records_calls() -> None:
    llm = ScriptedLLM(["first", {"facts": ["a"]}])
    assert llm.complete(HELLO, system="s").text == "first"
    out = llm.complete(HELLO, json_schema=SCHEMA, max_tokens=10)
    assert out.data == {"facts": ["a"]} and json.loads(out.text) == {"facts": ["a"]}
    assert [c.system for c in llm.calls] == ["s", None]
    assert llm.calls[1].json_schema == SCHEMA and llm.calls[1].max_tokens == 10
    assert llm.calls[0].messages == tuple(HELLO)
    with pytest.raises(ProviderError, match="script exhausted"):
        llm.complete(HELLO)


def test_fake_raises_scripted_exceptions_and_validates_schema() -> None:
    llm = ScriptedLLM([ProviderUnavailable("fake", "down", transient=True), {"facts": 3}, "nope"])
    with pytest.raises(ProviderUnavailable):
        llm.complete(HELLO)
    with pytest.raises(ProviderError, match="schema"):
        llm.complete(HELLO, json_schema=SCHEMA)
    with pytest.raises(ProviderError, match="not valid JSON"):
        llm.complete(HELLO, json_schema=SCHEMA)


def test_fake_callable_reply_sees_messages_and_can_act(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("before\n")

    def racing(messages: Any) -> dict[str, Any]:
        target.write_text("edited during the call\n")  # simulate a concurrent edit
        return {"facts": [m.content for m in messages]}

    out = ScriptedLLM([racing]).complete(HELLO, json_schema=SCHEMA)
    assert out.data == {"facts": ["hello"]}
    assert target.read_text() == "edited during the call\n"


def test_fake_simulates_timeouts_without_sleeping() -> None:
    sleeps = Sleeps()
    with pytest.raises(ProviderTimeout):
        ScriptedLLM([SimulatedTimeout()]).complete(HELLO)
    slow = ScriptedLLM(["late", "also late"], sleep_before=30.0, sleep=sleeps, timeout=5.0)
    with pytest.raises(ProviderTimeout) as info:
        slow.complete(HELLO)
    assert info.value.transient and sleeps == [5.0]
    assert slow.complete(HELLO, timeout=60.0).text == "also late"
    assert sleeps == [5.0, 30.0]


# --- the factory ----------------------------------------------------------------------------


def test_factory_none_and_missing_settings() -> None:
    s = defaults()
    assert make_llm(s) is None
    with pytest.raises(ConfigError, match="llm_model"):
        make_llm(s.replace(llm="openai", llm_base_url="http://x/v1"))
    with pytest.raises(ConfigError, match="llm_base_url"):
        make_llm(s.replace(llm="openai", llm_model="m"))
    with pytest.raises(ConfigError, match="llm_model"):
        make_llm(s.replace(llm="anthropic"))


def test_factory_builds_providers_with_flush_model_and_timeout() -> None:
    s = defaults().replace(
        llm="openai", llm_model="big", llm_flush_model="small", llm_base_url="http://h/v1",
        llm_api_key=SECRET, llm_timeout=12.5,
    )  # fmt: skip
    main, flush = make_llm(s), make_llm(s, purpose="flush")
    assert isinstance(main, OpenAIChatLLM) and isinstance(flush, OpenAIChatLLM)
    assert (main.model, flush.model, main.timeout) == ("big", "small", 12.5)
    _assert_no_secret(repr(main))
    assert make_llm(s.replace(llm_flush_model=""), purpose="flush").model == "big"  # type: ignore[union-attr]
    anth = make_llm(s.replace(llm="anthropic", llm_base_url=""))
    assert isinstance(anth, AnthropicLLM) and anth.base_url == "https://api.anthropic.com"


def test_factory_fake_reads_script_from_env(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hi", {"facts": []}, {"$raise": "timeout"}]))
    s = defaults().replace(llm="fake")
    llm = make_llm(s, environ={"REVERIE_FAKE_LLM_SCRIPT": str(script)})
    assert isinstance(llm, ScriptedLLM)
    assert llm.complete(HELLO).text == "hi"
    assert llm.complete(HELLO, json_schema=SCHEMA).data == {"facts": []}
    with pytest.raises(ProviderTimeout):
        llm.complete(HELLO)
    empty = make_llm(s, environ={})
    assert isinstance(empty, ScriptedLLM) and empty.remaining == 0
    script.write_text('{"not": "a list"}')
    with pytest.raises(ConfigError, match="REVERIE_FAKE_LLM_SCRIPT"):
        make_llm(s, environ={"REVERIE_FAKE_LLM_SCRIPT": str(script)})
