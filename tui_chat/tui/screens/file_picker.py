"""Choose a file to attach: type or paste its path, or pick it from the folder tree."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Static

from tui_chat.tui.actions import bindings
from tui_chat.tui.stray_keys import OrderedInput
from tui_chat.tui.text import inert_content


class FilePicker(ModalScreen[str | None]):
    """A path input over a folder tree; dismisses with the chosen path, or ``None``.

    Args:
        root: The folder the tree shows (the working directory by default).
    """

    CSS_PATH = "dialog.tcss"
    TYPED_INTO: ClassVar[bool] = True
    """Keys typed while it opens wait for its input (``ChatApp.on_event``)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("picker")

    def __init__(self, root: Path | None = None) -> None:
        super().__init__()
        self._root = root or Path.cwd()

    def compose(self) -> ComposeResult:
        """Title, path input, folder tree, hint."""
        with Vertical(classes="dialog"):
            yield Static("Attach a file (image, PDF or text)", classes="title")
            yield OrderedInput(
                placeholder="type or paste a path, e.g. ~/shot.png", id="picker-path"
            )
            yield DirectoryTree(self._root, id="picker-tree")
            yield Static(
                inert_content("enter attaches · tab: browse the folder · escape cancels"),
                classes="hint",
            )

    def on_mount(self) -> None:
        """Start in the path input."""
        self.query_one("#picker-path", Input).focus()

    @on(Input.Submitted, "#picker-path")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    @on(DirectoryTree.FileSelected)
    def _picked(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(str(event.path))

    def action_cancel(self) -> None:
        """Return ``None``."""
        self.dismiss(None)
