"""``service.tools``: the front ends' door to the MCP servers and the tools' settings."""

from __future__ import annotations

from collections.abc import Callable

from tui_chat.engine.tools.manager import ServerReport, ToolServers
from tui_chat.store.tool_settings import ToolSettings

__all__ = ["OFF_NOTE", "Tools"]

OFF_NOTE = (
    "switching tools on or off changes the request's prefix: the next send writes the "
    "prompt cache once more"
)
"""What the TUI says when a server is switched on or off in a conversation."""


class Tools:
    """Start the servers, read their reports, switch them per conversation, manage approvals."""

    def __init__(
        self, servers: ToolServers, settings: ToolSettings, problem: str | None = None
    ) -> None:
        self._servers = servers
        self._settings = settings
        self.problem = problem
        """Why ``mcp.json`` could not be used (its line named); ``None`` when it could."""

    @property
    def configured(self) -> bool:
        """Whether ``mcp.json`` names any server."""
        return self._servers.configured

    def start(self) -> None:
        """Start every server in the background (after the first frame; once)."""
        self._servers.start()

    async def wait_started(self) -> None:
        """Until every server is ready or failed (each within its start timeout)."""
        await self._servers.wait_started()

    def reports(self) -> list[ServerReport]:
        """Each server: state, error, tools, their cost in tokens."""
        return self._servers.reports()

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever a server becomes ready or fails."""
        self._servers.changed.append(callback)

    async def off(self, conversation_id: str) -> frozenset[str]:
        """The servers switched off in a conversation."""
        return await self._settings.off(conversation_id)

    async def set_on(self, conversation_id: str, server: str, on: bool) -> str:
        """Switch a server's tools on or off in a conversation; the note to show."""
        await self._settings.set_on(conversation_id, server, on)
        return OFF_NOTE

    async def approvals(self) -> list[tuple[str, str]]:
        """The standing approvals, ``(server, tool)`` (``tool`` ``''``: the whole server)."""
        return await self._settings.approvals()

    async def approve(self, server: str, tool: str = "") -> None:
        """Allow a tool (or a whole server) for good."""
        await self._settings.approve(server, tool)

    async def revoke(self, server: str, tool: str = "") -> bool:
        """Take a standing approval back."""
        return await self._settings.revoke(server, tool)

    async def stop(self) -> None:
        """Stop every server."""
        await self._servers.stop()
