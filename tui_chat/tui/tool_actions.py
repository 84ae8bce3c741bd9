"""The actions of MCP tools, of deleting a message and of pasting the clipboard in the table
of actions (:mod:`tui_chat.tui.actions`)."""

from __future__ import annotations

from tui_chat.tui.action_types import Action, part

TOOLS = Action(
    "app.tools",
    "Tools",
    "MCP tools: servers on/off in this conversation, approvals",
    show=False,
    palette="Tools",
    palette_help="MCP servers on or off in this conversation; revoke an 'always allow'",
)
"""``f9``: the tools screen (:mod:`tui_chat.tui.screens.tools`)."""

DELETE_MESSAGE = Action(
    "message.delete",
    "Delete",
    "Delete the selected message (asks first)",
    show=False,
    palette="Delete message",
    palette_help="Delete the selected message (and its tool call or result), asking first",
)
"""The palette's entry (the keys are ``d`` in navigation mode and ``delete`` in the messages)."""
DELETE_SELECTED = Action(
    "message.delete",
    "Delete",
    "Delete this message (asks first)",
)
"""``d`` at the selected message (navigation mode)."""
DELETE_KEY = Action(
    "part('message.delete')",
    "Delete",
    "Delete the selected message (asks first)",
)
"""``delete`` at the selected message, in either mode."""

PASTE = Action(
    part("drafting.paste_clipboard"),
    "Paste image",
    show=False,
    priority=True,
    palette="Paste image",
    palette_help="Attach a copied image",
)
"""``ctrl+v``: the clipboard's image attached to the draft, else its text pasted."""
