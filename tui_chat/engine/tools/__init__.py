"""MCP tools: the configured servers (:class:`ToolServers`) and the calls the model asks for.

The front door for the front ends is ``service.tools`` (:class:`ToolServers`); the ``mcp``
SDK is imported only when a server starts.
"""

from tui_chat.engine.tools.calls import APPROVAL_NEEDED, Decision, ToolCall
from tui_chat.engine.tools.front import OFF_NOTE, Tools
from tui_chat.engine.tools.manager import ServerReport, ToolServers
from tui_chat.engine.tools.server import ToolInfo

__all__ = [
    "APPROVAL_NEEDED",
    "OFF_NOTE",
    "Decision",
    "ServerReport",
    "ToolCall",
    "ToolInfo",
    "ToolServers",
    "Tools",
]
