"""A stand-in for the Claude Code CLI behind the Claude Agent SDK's own ``Transport``
interface: it speaks the SDK's control protocol (initialize, ``hook_callback``,
``mcp_message``) so ``claude_agent_sdk.query`` runs for real without the CLI or a model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import Transport


class FakeCLI(Transport):
    """On the user's message: fires each hook of ``events`` with its payload, then calls
    the SDK MCP tool ``call`` (server, tool, arguments), then ends with a result."""

    def __init__(
        self, events: list[tuple[str, dict[str, Any]]], call: tuple[str, str, dict[str, Any]]
    ) -> None:
        self.events, self.call = events, call
        self.hook_ids: dict[str, list[str]] = {}
        self.replies: dict[str, dict[str, Any]] = {}  # request id -> the SDK's response
        self.hook_outputs: list[tuple[str, dict[str, Any]]] = []
        self.tool_result: dict[str, Any] = {}
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ready = False

    async def connect(self) -> None:
        self._ready = True

    def is_ready(self) -> bool:
        return self._ready

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request" and message["request"]["subtype"] == "initialize":
                for event, matchers in (message["request"].get("hooks") or {}).items():
                    self.hook_ids[event] = [i for m in matchers for i in m["hookCallbackIds"]]
                await self._reply(message["request_id"], {})
            elif kind == "control_request":
                await self._reply(message["request_id"], {})
            elif kind == "control_response":
                response = message["response"]
                self._waiting.pop(response["request_id"]).set_result(response)
            elif kind == "user":
                asyncio.get_running_loop().create_task(self._turn())

    async def _reply(self, request_id: str, body: dict[str, Any]) -> None:
        response = {"subtype": "success", "request_id": request_id, "response": body}
        await self._out.put({"type": "control_response", "response": response})

    async def _ask(self, request_id: str, request: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self._out.put(
            {"type": "control_request", "request_id": request_id, "request": request}
        )
        return await future

    async def _turn(self) -> None:
        for n, (event, payload) in enumerate(self.events):
            for callback_id in self.hook_ids.get(event, []):
                request = {"subtype": "hook_callback", "callback_id": callback_id, "input": payload}
                got = await self._ask(f"cli_{n}_{callback_id}", request)
                self.hook_outputs.append((event, got.get("response") or {}))
        server, name, arguments = self.call
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fake-cli", "version": "0"},
        }
        for n, rpc in enumerate(
            [
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                },
            ]
        ):
            request = {"subtype": "mcp_message", "server_name": server, "message": rpc}
            got = await self._ask(f"cli_mcp_{n}", request)
        self.tool_result = got["response"]["mcp_response"]
        result = {
            "type": "result",
            "subtype": "success",
            "duration_ms": 1,
            "duration_api_ms": 0,
            "is_error": False,
            "num_turns": 1,
            "session_id": "fake",
            "result": "done",
        }
        await self._out.put(result)
        await self._out.put(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        while (message := await self._out.get()) is not None:
            yield message

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        self._ready = False
