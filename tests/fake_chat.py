"""A scripted OpenAI-compatible chat model on loopback, for agent runtimes tested with
their own code (Hermes Agent, OpenClaw): asked where Beth lives, it calls
``memory_search``; given that tool's answer, it repeats it; told "Note this:", it calls
``memory_write``; anything else is "Noted.".
Streaming and non-streaming answers, as the runtime asks; every request is kept."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

QUESTION = "Where does Beth live"
NOTE = "Note this:"  # the model writes NOTED with memory_write, as the agent's note
NOTED = "The ferry to Mull leaves at 07:15 on Saturdays."


def reply(request: dict[str, Any]) -> dict[str, Any]:
    messages = request.get("messages") or []
    asked = [
        n for n, m in enumerate(messages)
        if m.get("role") == "user" and QUESTION in json.dumps(m.get("content"))
    ]  # fmt: skip
    tools = [n for n, m in enumerate(messages) if m.get("role") == "tool"]
    noted = [
        n for n, m in enumerate(messages)
        if m.get("role") == "user" and NOTE in json.dumps(m.get("content"))
    ]  # fmt: skip
    if noted and (not asked or noted[-1] > asked[-1]):  # the last request was a note
        if tools and tools[-1] > noted[-1]:
            return {"role": "assistant", "content": "Saved."}
        call = {"name": "memory_write", "arguments": json.dumps({"text": NOTED, "source": "agent"})}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "call_2", "type": "function", "function": call}]}  # fmt: skip
    if asked and tools and tools[-1] > asked[-1]:
        return {
            "role": "assistant",
            "content": f"FROM MEMORY: {messages[tools[-1]].get('content')}",
        }
    if asked:
        call = {"name": "memory_search", "arguments": json.dumps({"query": "Beth moved"})}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}]}  # fmt: skip
    return {"role": "assistant", "content": "Noted."}


def converse(turn: Callable[[str], str], seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The two turns each runtime's test plays through the runtime (``turn``: one
    prompt in, its output): a fact told, then asked for, which the model finds with
    ``memory_search`` as the owner's line. The chat requests the model saw."""
    assert "Noted." in turn("Remember that my sister Beth moved to Leeds in March.")
    answer = turn("Where does Beth live?")
    assert "FROM MEMORY:" in answer and "my sister Beth moved to Leeds in March." in answer
    assert "owner" in answer  # the line is the owner's, and the model is told so
    chats = [r for r in seen if r.get("messages")]  # (a runtime may make other calls too)
    tools = {t["function"]["name"] for r in chats for t in r.get("tools") or []}
    assert {"memory_search", "memory_get", "memory_write", "memory_link"} <= tools
    return chats


@contextmanager
def fake_chat_model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(the base URL, ending in /v1; the requests seen)."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, body: bytes, kind: str = "application/json") -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # the model list
            self._send(json.dumps({"object": "list", "data": [{"id": "fake-model"}]}).encode())

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(size) or b"{}")
            seen.append(request)
            message = reply(request)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            base = {"id": "c1", "created": int(time.time()), "model": "fake-model"}
            if not request.get("stream"):
                choice = {"index": 0, "message": message, "finish_reason": finish}
                usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                body = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
                self._send(json.dumps(body).encode())
                return
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
            events = [
                {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
                for d, f in ((delta, None), ({}, finish))
            ]  # fmt: skip
            stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._send(stream.encode(), "text/event-stream")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
