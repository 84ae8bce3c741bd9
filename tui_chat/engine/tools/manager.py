"""The configured MCP servers of one engine: started in the background, their tools, calls.

:class:`ToolServers` is built with the engine and does nothing until :meth:`start` (the TUI
calls it after its first frame, the CLI before a send or ``mcp list``): each server then
starts in a task of its own, with its start timeout; one that fails is reported with its
error and the rest go on. Its tools are sent as ``server__tool`` (never colliding across
servers). :meth:`stop` ends every server (at exit; none outlives the app).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tui_chat.core.models import ContentBlock
from tui_chat.core.request.tool_defs import TOOLS_PREAMBLE, tools_tokens
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.tools import ServerSpec
from tui_chat.engine.tools.results import error_result, result_block
from tui_chat.engine.tools.server import McpServer, ServerState, ToolCallFailed, ToolInfo

__all__ = ["ServerReport", "ToolServers"]


@dataclass(frozen=True)
class ServerReport:
    """A server as ``mcp list`` and the TUI show it."""

    name: str
    transport: str
    target: str
    state: ServerState
    error: str | None
    tools: tuple[ToolInfo, ...]
    tokens: int
    """What its definitions cost in a request (the tools preamble left out)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "target": self.target,
            "state": self.state,
            "error": self.error,
            "tokens": self.tokens,
            "tools": [
                {"name": t.name, "api_name": t.api_name, "description": t.description}
                for t in self.tools
            ],
        }


class ToolServers:
    """Every configured server; their tools as request definitions; calls routed by name."""

    def __init__(self, specs: Sequence[ServerSpec], counter: TokenCounter) -> None:
        self._servers = {spec.name: McpServer(spec) for spec in specs}
        self._counter = counter
        self._started = False
        self.changed: list[Callable[[], None]] = []
        """Called when a server becomes ready or fails (the gauge counts its tools)."""

    @property
    def configured(self) -> bool:
        """Whether any server is configured."""
        return bool(self._servers)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._servers)

    def start(self) -> None:
        """Start every server in the background (once); returns at once."""
        if self._started or not self._servers:
            return
        self._started = True
        for server in self._servers.values():
            server.start()
            asyncio.get_running_loop().create_task(self._announce(server))

    async def _announce(self, server: McpServer) -> None:
        await server.wait_ready()
        for callback in list(self.changed):
            callback()

    async def wait_started(self) -> None:
        """Until every server is ready or has failed (each within its own start timeout)."""
        self.start()
        await asyncio.gather(*(s.wait_ready() for s in self._servers.values()))

    def reports(self) -> list[ServerReport]:
        """Each server, its state, its tools and their cost."""
        return [
            ServerReport(
                s.name,
                s.spec.transport,
                s.spec.target,
                s.state,
                s.error,
                s.tools,
                tools_tokens([t.definition() for t in s.tools], self._counter) - TOOLS_PREAMBLE
                if s.tools
                else 0,
            )
            for s in self._servers.values()
        ]

    def definitions(self, off: frozenset[str] = frozenset()) -> tuple[dict[str, Any], ...]:
        """The definitions of every ready server's tools, but those of the servers ``off``."""
        return tuple(
            tool.definition()
            for server in self._servers.values()
            if server.state == "ready" and server.name not in off
            for tool in server.tools
        )

    def stamp(self, off: frozenset[str] = frozenset()) -> str:
        """Changes whenever :meth:`definitions` would (a kept request is built again)."""
        return json.dumps([d["name"] for d in self.definitions(off)])

    def find(self, api_name: str) -> ToolInfo | None:
        """The tool sent under ``api_name``, if a running server has it."""
        for server in self._servers.values():
            for tool in server.tools:
                if tool.api_name == api_name:
                    return tool
        return None

    async def call(self, block: ContentBlock) -> ContentBlock:
        """Run one ``tool_use`` block; its ``tool_result`` (``is_error`` when it failed)."""
        use_id = str(block.get("id"))
        name = str(block.get("name"))
        tool = self.find(name)
        if tool is None:
            return error_result(use_id, f"no running server has the tool {name!r}")
        arguments = block.get("input")
        if not isinstance(arguments, dict):
            return error_result(use_id, "the tool's input must be a JSON object")
        try:
            result = await self._servers[tool.server].call(tool.name, arguments)
        except ToolCallFailed as exc:
            return error_result(use_id, f"{tool.server}: {exc}")
        return result_block(use_id, result)

    def server_of(self, api_name: str) -> str | None:
        tool = self.find(api_name)
        return tool.server if tool else None

    async def stop(self) -> None:
        """Stop every server (a few seconds at most each, all at once)."""
        await asyncio.gather(*(s.stop() for s in self._servers.values()))
