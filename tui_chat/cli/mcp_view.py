"""``tui-chat mcp list``: each MCP server, its state, its tools and what their definitions cost;
and what ``send`` prints about the tool calls of a reply (on stderr, inert)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from tui_chat.cli import render
from tui_chat.cli.parser import Args
from tui_chat.core.inert import inert

if TYPE_CHECKING:
    from tui_chat.engine.events import EngineEvent
    from tui_chat.engine.service import ChatService
    from tui_chat.engine.tools import Decision, ToolCall

ARGUMENTS_SHOWN = 200
"""Characters of a call's arguments ``send`` prints."""


async def mcp(service: ChatService, args: Args) -> int:
    """``mcp list``: start every server (each within its start timeout), then report."""
    tools = service.tools
    if tools.problem:
        if args.as_json:
            render.json_out({"error": tools.problem, "servers": []})
        print(f"tui-chat: {inert(tools.problem)}", file=sys.stderr)
        return 1
    await tools.wait_started()
    reports = tools.reports()
    if args.as_json:
        render.json_out({"error": None, "servers": [r.to_dict() for r in reports]})
        return 0
    if not reports:
        render.out("no MCP servers: add them to mcp.json beside config.toml (docs/mcp.md)")
        return 0
    failed = 0
    for report in reports:
        cost = f", {len(report.tools)} tools, {report.tokens:,} tokens" if report.tools else ""
        render.out(f"{report.name}  {report.state}  ({report.transport}: {report.target}){cost}")
        if report.error:
            failed += 1
            for line in report.error.splitlines():
                render.out(f"    {line}")
        for tool in report.tools:
            summary = " ".join(tool.description.split())[:70]
            render.out(f"    {tool.api_name}  {summary}")
    return 1 if failed == len(reports) else 0


async def allow_all(call: ToolCall) -> Decision:
    """``send --allow-tools``: every call of the send runs."""
    return "once"


async def started(service: ChatService) -> None:
    """Before a send: the servers started (a failure said on stderr; the send goes on)."""
    tools = service.tools
    if tools.problem:
        print(f"tui-chat: warning: {inert(tools.problem)}", file=sys.stderr)
    if not tools.configured:
        return
    await tools.wait_started()
    for report in tools.reports():
        if report.state == "failed":
            first = (report.error or "").splitlines()[:1]
            reason = first[0] if first else "failed"
            print(f"tui-chat: MCP server {report.name}: {inert(reason)}", file=sys.stderr)


def note(event: EngineEvent) -> str | None:
    """A line for stderr about a tool call or its results (``None`` for other events)."""
    from tui_chat.engine.events import ToolCallStarted, ToolResultsSaved

    if isinstance(event, ToolCallStarted):
        shown = json.dumps(event.arguments, ensure_ascii=False)
        if len(shown) > ARGUMENTS_SHOWN:
            shown = shown[:ARGUMENTS_SHOWN] + "…"
        return inert(f"[tool {event.name} {shown}]")
    if isinstance(event, ToolResultsSaved):
        parts = []
        for block in event.message.content:
            size = len(json.dumps(block.get("content"), ensure_ascii=False))
            state = "error" if block.get("is_error") else "result"
            parts.append(f"{state} {size:,} chars")
        return inert(f"[tool {', '.join(parts)}]")
    return None
