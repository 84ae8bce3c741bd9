"""Running the tool calls of a reply: approval first, then the call, always a result.

Every ``tool_use`` gets exactly one ``tool_result``: the tool's output, or an ``is_error``
result saying why it did not run (denied, approval needed, no such tool, the server failed or
timed out, cancelled). A call runs only when a person allowed it: a standing approval ("always
for this tool / this server", stored across sessions), or the ``approve`` callback of the send
(the TUI's prompt, the CLI's ``--allow-tools``). Without one the call is answered with
:data:`APPROVAL_NEEDED`, so the pair stays complete and the model can say so.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from tui_chat.core.models import ContentBlock
from tui_chat.engine.events import EventCallback, ToolCallStarted
from tui_chat.engine.tools.manager import ToolServers
from tui_chat.engine.tools.results import error_result
from tui_chat.store.tool_settings import ToolSettings

__all__ = ["APPROVAL_NEEDED", "Approver", "Decision", "ToolCall", "ToolCalls"]

Decision = Literal["once", "tool", "server", "deny"]
"""Allow this call once, always this tool, always this server, or deny it."""

APPROVAL_NEEDED = (
    "not run: this tool call needs a person's approval, and none was given "
    "(in the CLI, `tui-chat send --allow-tools` approves the calls of a send)"
)
DENIED = "not run: the user denied this tool call"


@dataclass(frozen=True)
class ToolCall:
    """A call waiting for approval: what the prompt shows."""

    conversation_id: str
    use_id: str
    api_name: str
    server: str
    tool: str
    arguments: Any


Approver = Callable[[ToolCall], Awaitable[Decision]]
"""Asks a person about one call (the TUI's prompt); ``--allow-tools`` always says ``once``."""


class ToolCalls:
    """Runs calls against the servers, asking for approval where none stands."""

    def __init__(self, servers: ToolServers, settings: ToolSettings) -> None:
        self.servers = servers
        self.settings = settings

    async def standing(self, server: str, tool: str) -> bool:
        """Whether a stored approval covers ``tool`` of ``server``."""
        approvals = await self.settings.approvals()
        return (server, "") in approvals or (server, tool) in approvals

    async def run(
        self,
        conversation_id: str,
        block: ContentBlock,
        approve: Approver | None,
        on_event: EventCallback | None,
    ) -> tuple[ContentBlock, float]:
        """One ``tool_use``'s ``tool_result`` and the seconds the call took."""
        use_id, name = str(block.get("id")), str(block.get("name"))
        info = self.servers.find(name)
        if info is None:
            return error_result(use_id, f"not run: no running server has the tool {name!r}"), 0.0
        if not await self.standing(info.server, info.name):
            if approve is None:
                return error_result(use_id, APPROVAL_NEEDED), 0.0
            call = ToolCall(
                conversation_id, use_id, name, info.server, info.name, block.get("input")
            )
            decision = await approve(call)
            if decision == "deny":
                return error_result(use_id, DENIED), 0.0
            if decision in ("tool", "server"):
                await self.settings.approve(info.server, info.name if decision == "tool" else "")
        if on_event:
            on_event(ToolCallStarted(conversation_id, use_id, name, block.get("input")))
        started = time.monotonic()
        result = await self.servers.call(block)
        return result, time.monotonic() - started
