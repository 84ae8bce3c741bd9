"""The composer: a multi-line prompt editor with send/newline keys and prompt history."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import TextArea

from tui_chat.tui.actions import KEYMAP, Key, bindings
from tui_chat.tui.inert_fields import InertTextArea
from tui_chat.tui.stray_keys import InOrder
from tui_chat.tui.widgets.path_completions import PathCompletions, at_token, complete_paths


def _keys(action: str) -> frozenset[str]:
    """The composer's keys of one of its actions."""
    return frozenset(
        key.strip()
        for entry in KEYMAP["composer"]
        if isinstance(entry, Key) and entry.action == action
        for key in entry.keys.split(",")
    )


_SEND_KEYS = _keys("composer.submit")
_NEWLINE_KEYS = _keys("composer.newline")


class Composer(InOrder, InertTextArea):
    """Where the user types. ``enter`` sends, ``ctrl+j``/``shift+enter`` insert a newline.

    ``up`` on the first line and ``down`` on the last line walk through earlier prompts; the
    draft being typed is kept and comes back after the newest entry. What it holds is inert
    (:class:`InertTextArea`): a pasted, edited or stored escape sequence never reaches the
    terminal.
    """

    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $border-blurred;
        padding: 0 1;
        &:focus { border: round $border; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("composer")

    @dataclass
    class Submitted(Message):
        """The user asked to send the text."""

        composer: Composer
        text: str

        @property
        def control(self) -> Composer:
            """The composer."""
            return self.composer

    @dataclass
    class PathChosen(Message):
        """An ``@path`` completion naming a file was accepted: attach the file."""

        composer: Composer
        path: Path

        @property
        def control(self) -> Composer:
            """The composer."""
            return self.composer

    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Message Claude…  (enter to send, ctrl+j for a new line)",
        )
        self.cursor_blink = cursor_blink
        self.prompts: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._dropdown_of: tuple[object, PathCompletions | None] | None = None
        self.has_files = False
        """Files are attached to the draft, so a blank text may be sent with them."""

    def set_history(self, prompts: list[str]) -> None:
        """Replace the prompt history (oldest first)."""
        self.prompts = [p for p in prompts if p.strip()]
        self._history_index = None

    def action_submit(self) -> None:
        """Post :class:`Submitted` with the text and clear the editor at once (blank text is
        ignored unless files are attached).

        Cleared here, in the order of the keys, not when the screen handles the message:
        what is typed after ``enter`` is the next prompt, never glued to this one.
        A screen that refuses the send puts the text back with :meth:`restore`.
        """
        text = self.text
        if not text.strip() and not self.has_files:
            return
        self.post_message(self.Submitted(self, text))
        self.clear()

    def restore(self, text: str) -> None:
        """Put back a submitted text the screen did not send (before anything typed since)."""
        typed = self.text
        self.load_text(f"{text}\n\n{typed}" if typed.strip() else text)
        self.move_cursor(self.document.end)

    def action_clear_text(self) -> None:
        """Clear the editor; the text goes to the prompt history (``up`` brings it back)."""
        if self.text.strip():
            self.remember(self.text)
        self.clear()

    def action_newline(self) -> None:
        """Insert a line break at the cursor."""
        self.insert("\n")

    def remember(self, text: str) -> None:
        """Add a sent prompt to the history (the editor was cleared when it was submitted)."""
        if text.strip() and (not self.prompts or self.prompts[-1] != text):
            self.prompts.append(text)
        self._history_index = None
        self._draft = ""

    def _show(self, text: str, at_end: bool) -> None:
        self.load_text(text)
        if at_end:
            self.move_cursor(self.document.end)
        else:
            self.move_cursor((0, len(self.document.get_line(0))))

    # -- @path completion -------------------------------------------------------------------

    @property
    def _dropdown(self) -> PathCompletions | None:
        """The screen's ``@path`` dropdown, looked up once per screen: a query walks the
        whole screen, and with a long reply on it two or three walks a key took the event
        loop over a second of CPU (the pty benchmark's profile)."""
        screen = self.screen
        if self._dropdown_of is None or self._dropdown_of[0] is not screen:
            found = screen.query(PathCompletions)
            self._dropdown_of = (screen, found.first() if found else None)
        return self._dropdown_of[1]

    def _typed_path(self) -> str | None:
        row, column = self.cursor_location
        return at_token(self.document.get_line(row)[:column])

    @on(TextArea.Changed)
    def _text_changed(self) -> None:
        self._complete()

    @on(TextArea.SelectionChanged)
    def _selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._complete()
        # Nothing above the composer reads it: each key's cursor move stops here instead of
        # being dispatched through every container, the screen and the app.
        event.stop()

    def _complete(self) -> None:
        partial = self._typed_path() if not self.selected_text else None
        if partial is None:
            dropdown = self._dropdown
            if dropdown is not None and (dropdown.display or dropdown.completions.partial != "\n"):
                dropdown.hide(forget=True)
        elif self._dropdown is not None and partial != self._dropdown.completions.partial:
            self._list_paths(partial)

    @work(group="path-completion", exclusive=True, exit_on_error=False)
    async def _list_paths(self, partial: str) -> None:
        completions = await asyncio.to_thread(complete_paths, partial, Path.cwd())
        if (dropdown := self._dropdown) is not None and self._typed_path() == partial:
            dropdown.offer(completions)

    def _accept_path(self, dropdown: PathCompletions, choice: str) -> None:
        """Put the chosen path after the ``@`` (kept in the text, as Claude Code and opencode
        do, so the prompt still reads "compare @a.py with @b.py"); a file is attached too."""
        row, column = self.cursor_location
        start = column - len(dropdown.completions.partial)
        is_file = not choice.endswith("/")
        self.replace(choice + (" " if is_file else ""), (row, start), (row, column))
        if is_file:
            dropdown.hide()
            path = Path(choice).expanduser()
            self.post_message(
                self.PathChosen(self, path if path.is_absolute() else Path.cwd() / path)
            )

    def _dropdown_key(self, key: str) -> bool:
        """Keys of an open ``@path`` dropdown: tab/enter accept, up/down move, escape closes."""
        dropdown = self._dropdown
        if dropdown is None or not dropdown.display:
            return False
        if key in ("tab", "enter") and (choice := dropdown.choice) is not None:
            self._accept_path(dropdown, choice)
        elif key == "up":
            dropdown.action_cursor_up()
        elif key == "down":
            dropdown.action_cursor_down()
        elif key == "escape":
            dropdown.hide()
        else:
            return False
        return True

    async def _on_key(self, event: events.Key) -> None:
        if self._dropdown_key(event.key):
            event.stop()
            event.prevent_default()
            return
        # Send and newline keys act here, in the composer's own queue after the keys typed
        # before them (a priority binding ran ahead of them: under load the end of the text
        # was not sent).
        if event.key in _SEND_KEYS or event.key in _NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            if event.key in _SEND_KEYS:
                self.action_submit()
            else:
                self.action_newline()
            return
        if event.key == "up" and self.prompts and self.cursor_at_first_line:
            if self._history_index is None:
                self._draft = self.text
                self._history_index = len(self.prompts)
            if self._history_index > 0:
                self._history_index -= 1
                self._show(self.prompts[self._history_index], at_end=False)
                event.stop()
                event.prevent_default()
                return
        elif event.key == "down" and self._history_index is not None and self.cursor_at_last_line:
            self._history_index += 1
            if self._history_index >= len(self.prompts):
                self._history_index = None
                self._show(self._draft, at_end=True)
            else:
                self._show(self.prompts[self._history_index], at_end=True)
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def passes_up(self, event: events.Key) -> bool:
        """``backspace`` with nothing before the cursor goes up to the screen, which removes
        the last attached file; ``end`` at the end of the line (where it moves nothing) goes
        up too, where it follows a streaming reply the user scrolled away from."""
        if self.selected_text:
            return False
        if event.key == "end":
            return self.cursor_at_end_of_line
        return event.key == "backspace" and self.cursor_location == (0, 0)
