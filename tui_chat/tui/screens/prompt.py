"""Small modals: ask for a line of text, or confirm an action."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from tui_chat.tui.actions import bindings
from tui_chat.tui.stray_keys import OrderedInput, type_into
from tui_chat.tui.text import inert_content


class TextPrompt(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with the text, or ``None`` on escape.

    Args:
        title: What is asked (plain text, not markup).
        value: The initial value.
        placeholder: Shown while the input is empty.
    """

    CSS_PATH = "dialog.tcss"
    TYPED_INTO: ClassVar[bool] = True
    """Keys typed while it opens wait for its input (``ChatApp.on_event``)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("prompt")

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        """Title and input."""
        with Vertical(classes="dialog"):
            yield Static(inert_content(self._title), classes="title")
            yield OrderedInput(self._value, placeholder=self._placeholder, id="prompt-input")
            yield Static(inert_content("enter to confirm, escape to cancel"), classes="hint")

    def on_key(self, event: events.Key) -> None:
        """Keys typed before the input had the focus are typed into it, not lost."""
        type_into(self.query_one("#prompt-input", Input), event)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Return the text."""
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Return ``None``."""
        self.dismiss(None)


class Confirm(ModalScreen[bool]):
    """Ask a yes/no question; ``y`` confirms, ``n``/``escape`` cancels.

    Args:
        question: The question (plain text, not markup).
        confirm_label: Label of the confirming button.
    """

    CSS_PATH = "dialog.tcss"
    BINDINGS: ClassVar[list[BindingType]] = bindings("confirm")

    def __init__(self, question: str, confirm_label: str = "Yes") -> None:
        super().__init__()
        self._question = question
        self._confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        """Question and buttons."""
        with Vertical(classes="dialog"):
            yield Static(inert_content(self._question), classes="title")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self._confirm_label} (y)", id="yes", variant="error")

    def on_mount(self) -> None:
        """Focus the safe choice."""
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer from a button."""
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        """Answer from a key."""
        self.dismiss(answer)
