"""The actions of MCP tools in the table of actions (:mod:`tui_chat.tui.actions`)."""

from __future__ import annotations

from tui_chat.tui.action_types import Action

TOOLS = Action(
    "app.tools",
    "Tools",
    "MCP tools: servers on/off in this conversation, approvals",
    show=False,
    palette="Tools",
    palette_help="MCP servers on or off in this conversation; revoke an 'always allow'",
)
"""``f9``: the tools screen (:mod:`tui_chat.tui.screens.tools`)."""
