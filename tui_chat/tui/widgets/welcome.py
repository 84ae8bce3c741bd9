"""The welcome of an empty chat: what to type, where help is, what the gauge says. It shows
while the conversation on screen has no message and goes with the first one; the help screen
opens on the same lines ("Getting started") before its list of keys."""

from __future__ import annotations

from typing import Final

from textual.content import Content
from textual.widgets import Static

from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.message_view import MessageView

GETTING_STARTED: Final[tuple[tuple[str, str], ...]] = (
    ("enter", "Sends what you type below (ctrl+j: a new line)"),
    ("f1", "Help: getting started, then every key"),
    ("ctrl+p", "The command palette: every command by name"),
    ("the gauge", "Under the box: the next request against its budget;"),
    ("", "older turns are summarised as it fills"),
    ("ctrl+b, ctrl+t", "Your conversations; the summary versions"),
    ("tab, f5", "To the messages; f5 there makes letters commands"),
)
"""(keys, what they do) of the first steps: the welcome and the help screen's first section."""


def getting_started(title: str = "Getting started") -> Content:
    """The first steps as the welcome and the help screen show them."""
    width = max(len(keys) for keys, _ in GETTING_STARTED)
    lines = [Content.styled(title, "bold $text-accent")]
    lines += [
        Content.assemble((f"{keys:<{width}}", "bold $text-warning"), "  ", text)
        for keys, text in GETTING_STARTED
    ]
    return Content("\n").join(lines)


class Welcome(Static):
    """Shown above the chat while the conversation on screen has no message.

    Args:
        pane: The chat pane it speaks for.
        id: The widget id.
    """

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        max-height: 60%;
        margin: 1 1 0 1;
        padding: 0 1;
        border: round $border-blurred;
        display: none;
    }
    """

    def __init__(self, pane: ChatPane, *, id: str | None = None) -> None:
        super().__init__(getting_started("Welcome to tui-chat"), id=id)
        self._pane = pane

    def on_mount(self) -> None:
        """Check again whenever the chat's window changes, when the screen's figures come
        (a conversation was shown, a message was sent) and when a reply starts or ends."""
        self.watch(self._pane, "virtual_size", self._check, init=False)
        self.watch(self.screen, "breakdown", self._check, init=False)
        # A send shows its prompt before any figure changes: the welcome goes with it.
        self.watch(self.screen, "streaming_id", self._check, init=False)

    def _check(self) -> None:
        empty = not any(self._pane.query_children(MessageView))
        self.display = empty and self._pane.conversation_id is not None
