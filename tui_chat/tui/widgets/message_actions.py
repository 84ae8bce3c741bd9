"""What the chat pane does at the selected message (``c``, ``e``, ``f``, ``s``, ``b``, ``d`` in
navigation mode, and the palette's entries): :class:`MessageActions`, a part the pane holds.

Copying the message or a code block is done here. Editing, forking and compacting up to a
message, and deleting it, need the composer, the draft tray, the conversation or a dialog,
which the screen holds: they reach it as typed messages (:class:`EditRequested`,
:class:`ForkRequested`, :class:`CompactUptoRequested`, :class:`DeleteRequested`), handled in
``screens/branching.py``. Each is posted to the screen and the key's action waits until the
screen has handled it, as when the screen did the work in its own action: the keys typed right
after ``e`` reach the composer once the prompt is in it, so they add to it (and a ``y`` typed
right after ``d`` answers the dialog).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from textual.message import Message as TextualMessage
from textual.widget import Widget

from tui_chat.core.codeblocks import code_blocks
from tui_chat.core.models import Message
from tui_chat.core.turns import starts_turn
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.window import MessageWindow

__all__ = [
    "CompactUptoRequested",
    "DeleteRequested",
    "EditRequested",
    "ForkRequested",
    "MessageActions",
    "Request",
]

NO_SELECTION = "Select a message first (f5 or tab, then ↑/↓)."


class Request(TextualMessage, bubble=False):
    """A request of the chat pane to the screen: posted to the screen, it goes no further
    (each subclass says ``bubble=False`` again: Textual sets it per class)."""


@dataclass
class EditRequested(Request, bubble=False):
    """Edit a prompt: put it (and its files) in the composer; sending it forks before it."""

    message: Message


@dataclass
class ForkRequested(Request, bubble=False):
    """Fork the conversation at a message and open the fork."""

    message_id: int | None
    """The fork's last message (``None``: the conversation has none)."""


@dataclass
class CompactUptoRequested(Request, bubble=False):
    """Compact every whole turn up to this message's turn (in the background, after the
    compact preview's question when it warns)."""

    message_id: int


@dataclass
class DeleteRequested(Request, bubble=False):
    """Delete a message (with its tool call or result) once the person confirms."""

    message_id: int


class MessageActions:
    """Copy, edit, fork, compact up to and copy the code of the selected message.

    Args:
        host: The widget that says what happened (notifications) and posts the requests.
        window: The messages shown and the selection.
    """

    def __init__(self, host: Widget, window: MessageWindow) -> None:
        self._host = host
        self._window = window
        self._code_turns: dict[int, int] = {}
        """The next code block ``b`` copies, by message id."""

    def action_copy(self) -> None:
        """Copy the selected message's text to the clipboard."""
        view = self._window.selected_view
        if view is None:
            self._host.notify("Select a message first.", severity="warning")
            return
        self._host.app.copy_to_clipboard(view.body_text)
        self._host.notify(f"Copied message #{view.message_id} ({len(view.body_text)} characters).")

    def _selected(self) -> MessageView | None:
        view = self._window.selected_view
        if view is None:
            self._host.notify(NO_SELECTION, severity="warning")
        return view

    async def _ask(self, request: Request) -> None:
        """Post a request to the screen and wait until the screen has handled it (the
        callback queued after it runs): the keys that follow are routed after its work."""
        screen = self._host.screen
        handled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if screen.post_message(request) and screen.call_later(handled.set_result, None):
            await handled

    async def action_edit(self) -> None:
        """Put the selected prompt in the composer (sending it makes a fork). Navigation mode
        ends at once, so the keys typed right after ``e`` are text, not commands."""
        if (view := self._selected()) is None:
            return
        if not starts_turn(view.message.role, view.message.content):
            self._host.notify("Only your own prompts can be edited.", severity="warning")
            return
        self._window.navigating = False
        await self._ask(EditRequested(view.message))

    async def action_fork(self) -> None:
        """Fork at the selected message (the newest one when none is selected)."""
        views = self._window.views
        view = self._window.selected_view or (views[-1] if views else None)
        await self._ask(ForkRequested(view.message_id if view else None))

    async def action_compact_upto(self) -> None:
        """Compact every whole turn up to the selected message's turn."""
        if (view := self._selected()) is not None:
            await self._ask(CompactUptoRequested(view.message_id))

    async def action_delete(self) -> None:
        """Delete the selected message after confirmation (the dialog is open when this
        returns, so a ``y`` typed right after ``d`` answers it)."""
        if (view := self._selected()) is not None:
            await self._ask(DeleteRequested(view.message_id))

    def action_copy_code(self) -> None:
        """Copy the selected message's next fenced code block (cycling through them)."""
        if (view := self._selected()) is None:
            return
        blocks = code_blocks(view.message.text)
        if not blocks:
            self._host.notify(f"Message #{view.message_id} has no code block.", severity="warning")
            return
        index = self._code_turns.get(view.message_id, 0) % len(blocks)
        self._code_turns[view.message_id] = index + 1
        block = blocks[index]
        self._host.app.copy_to_clipboard(block.code)
        language = f"{block.language}, " if block.language else ""
        lines = block.code.count("\n") + 1
        self._host.notify(
            f"Copied code block {index + 1} of {len(blocks)} ({language}{lines} lines).",
            markup=False,
        )
