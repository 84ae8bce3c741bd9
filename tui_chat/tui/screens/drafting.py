"""The chat screen's draft: what is typed and attached, the gauge's recount while typing, and
sending it (as a fork when a prompt is edited).

:class:`Drafting` is a part of the chat screen (``screen.drafting``): its ``action_*`` methods
are named in the table of actions as ``drafting.<name>``, and the composer's and the draft
tray's messages reach it through :meth:`Drafting.routes`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from textual import events
from textual.widgets import TextArea

from tui_chat.core.attachments import (
    Attachment,
    AttachmentError,
    check_request,
    typed_text,
)
from tui_chat.core.filetypes import image_type
from tui_chat.core.models import Message
from tui_chat.engine.send import EmptyMessage, MessageTooLarge
from tui_chat.tui.debounce import Debounce
from tui_chat.tui.screens.chat_view import NO_KEY_HELP
from tui_chat.tui.screens.reply_flow import ReplyEnded
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.draft_tray import DraftTray
from tui_chat.tui.widgets.message_actions import EditRequested

if TYPE_CHECKING:
    from textual.worker import Worker

    from tui_chat.tui.screens.chat_screen import ChatScreen

NOT_SENT = (EmptyMessage, MessageTooLarge, AttachmentError)
"""Refusals of a send that stored nothing."""

GAUGE_DEBOUNCE = 0.15
"""Seconds of typing pause before the gauge recounts the draft."""

RECALL_DEBOUNCE = 0.6
"""Seconds of typing pause before the full request (with recall for the draft) is built."""


def pasted_path(text: str) -> str:
    """A path as typed, pasted or dropped on the terminal: quotes and ``file://`` removed."""
    path = text.strip().strip("'\"")
    if path.startswith("file://"):
        path = unquote(path.removeprefix("file://"))
    return path


class Drafting:
    """The message being written: its text and files, and sending it.

    Args:
        screen: The chat screen: its composer and draft tray hold the draft, its gauge counts it.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen
        self._recounts = (
            Debounce(screen, GAUGE_DEBOUNCE, partial(self._update_gauge, False)),
            Debounce(screen, RECALL_DEBOUNCE, partial(self._update_gauge, True)),
        )
        """The recounts of the draft after a pause in typing (the newest typing wins)."""
        self._unsent: tuple[str, str, list[Attachment]] | None = None
        """The last send (conversation, text, files) until its worker ends."""

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The messages this part handles (``events.Key``: ``True`` when it took the key)."""
        return {
            TextArea.Changed: self._draft_changed,
            Composer.Submitted: self._submit,
            DraftTray.Changed: self._files_changed,
            Composer.PathChosen: self._attach_typed_path,
            events.Key: self._key,
            EditRequested: self._edit,
            ReplyEnded: lambda ended: self.unsent_back(ended.worker.error),
        }

    @property
    def editing(self) -> int | None:
        """The prompt being edited (sending forks before it), if any."""
        return self._screen.tray.editing

    def attached_files(self) -> Sequence[Attachment]:
        """Files attached to the draft (counted by the gauge)."""
        return self._screen.tray.pending

    # -- the draft and the gauge -------------------------------------------------------------

    def _draft_changed(self, event: TextArea.Changed) -> None:
        screen = self._screen
        if event.text_area is not screen.composer:
            return
        if (conv_id := screen.conversation_id) is not None:
            screen.app.drafts.note(conv_id, screen.composer.text)  # written after a pause
        # Counting is cheap, but not per keystroke: wait for a pause in typing.
        for recount in self._recounts:
            recount.poke()

    @property
    def recount_due(self) -> bool:
        """Whether a recount of the draft waits for a pause in typing."""
        return any(r.waiting for r in self._recounts)

    def _update_gauge(self, full: bool) -> None:
        counting: Worker[None] = self._screen.run_worker(
            partial(self._count, full), name="_update_gauge", group="gauge", exclusive=True,
            exit_on_error=False,
        )  # fmt: skip
        del counting  # its failure is reported by the screen

    async def _count(self, full: bool) -> None:
        screen = self._screen
        if screen.app.replying and not screen.composer.text.strip():
            return  # the prompt went out: the reply's end brings the figures (no build here)
        if not full:
            await screen.app.drafts.flush()
        await screen.refresh_gauge(full=full, figures=False)  # typing changes the draft alone

    async def keep_draft(self) -> None:
        """Write the composer's text as the draft of the conversation on screen."""
        screen = self._screen
        if screen.conversation is not None:
            screen.app.drafts.note(screen.conversation.id, screen.composer.text)
        await screen.app.drafts.flush()

    async def show_draft(self, conversation_id: str) -> None:
        """Put the conversation's kept draft in the composer (unless typing began meanwhile)."""
        composer = self._screen.composer
        shown = composer.text
        draft = await self._screen.app.drafts.get(conversation_id)
        if composer.text == shown and draft != shown:
            composer.load_text(draft)
            composer.move_cursor(composer.document.end)

    def _files_changed(self, event: DraftTray.Changed) -> None:
        self._screen.composer.has_files = event.has_files

    # -- sending -----------------------------------------------------------------------------

    def _submit(self, event: Composer.Submitted) -> None:
        screen = self._screen
        if screen.conversation is None:
            event.composer.restore(event.text)
            return
        if not screen.app.service.has_key:
            event.composer.restore(event.text)
            screen.notify(NO_KEY_HELP, title="Cannot send", severity="error", markup=False)
            return
        # The new message and its reply are shown, wherever the view was.
        screen.chat.follow(unselect=True)
        if screen.replies.busy:  # still streaming, or the reply's worker is finishing
            screen.replies.queue(event.composer, event.text)
            return
        self.send_draft(event.composer, event.text)

    def send_draft(self, composer: Composer, text: str) -> None:
        """Send the draft with its files (as a fork when a prompt is being edited).

        The draft stays in the composer when the files cannot be sent.
        """
        screen = self._screen
        if screen.conversation is None:
            return
        try:
            check_request([a.ref() for a in screen.tray.pending])
        except AttachmentError as exc:
            composer.restore(text)  # cleared when it was submitted
            screen.notify(f"{exc}; nothing was sent", severity="error", markup=False)
            return
        composer.remember(text)
        # The stored draft keeps the files until the message is stored (one transaction), so
        # a refused send gives them back (unsent_back).
        files, editing = screen.tray.take()
        self._unsent = (screen.conversation.id, text, files) if editing is None else None
        if editing is None:
            screen.app.send_reply(screen.conversation.id, text, files)
        else:
            screen.branches.send_edit(editing, text, files)

    async def unsent_back(self, error: BaseException | None) -> None:
        """After a send: when it was refused before its message was stored, its text and
        files come back to the composer (and the draft).

        Args:
            error: Why the reply worker failed (``None``: it did not).
        """
        unsent, self._unsent = self._unsent, None
        if unsent is None or not isinstance(error, NOT_SENT):
            return
        screen = self._screen
        conversation_id, text, files = unsent
        if conversation_id != screen.conversation_id:
            return
        if isinstance(error, MessageTooLarge):
            text = error.text  # the text with the draft kept before it
        if not screen.composer.text.strip() and text.strip():
            screen.composer.load_text(text)
            screen.composer.move_cursor(screen.composer.document.end)
        await screen.tray.give_back(files)
        await screen.refresh_gauge()

    # -- keys in the composer ----------------------------------------------------------------

    async def _key(self, event: events.Key) -> bool:
        """``backspace`` at the very start of the composer removes the last attached file;
        ``escape`` while editing a prompt drops the edit (and its files)."""
        screen = self._screen
        if screen.focused is not screen.composer:
            return False
        composer = screen.composer
        if (
            event.key == "backspace"
            and screen.tray.pending
            and composer.cursor_location == (0, 0)
            and not composer.selected_text
        ):
            event.stop()
            event.prevent_default()
            await self.action_detach_file()
            return True
        if event.key == "escape" and self.editing is not None and not screen.app.replying:
            screen.tray.drop_edit()
            composer.clear()
            screen.notify("Edit cancelled.")
            event.stop()
            event.prevent_default()
            screen.run_worker(screen.tray.reload(), exit_on_error=False)
            return True
        return False

    # -- attachments -------------------------------------------------------------------------

    async def action_detach_file(self) -> None:
        """Remove the last file attached to the draft."""
        screen = self._screen
        removed = await screen.tray.detach()
        if removed is None:
            screen.notify("No file is attached to the message.", severity="warning")
            return
        screen.notify(f"Removed {removed.name}.", markup=False, timeout=2)
        await screen.refresh_gauge()

    def action_attach_file(self) -> None:
        """Ask for a file (a typed or pasted path, or one picked in the folder tree) and
        attach it to the draft."""
        asking: Worker[None] = self._screen.run_worker(
            self._attach_file, name="action_attach_file", exit_on_error=False
        )
        del asking  # its failure is reported by the screen

    async def _attach_file(self) -> None:
        from tui_chat.tui.screens.file_picker import FilePicker  # not needed before this

        screen = self._screen
        answer = await screen.app.push_screen_wait(FilePicker())
        if not answer or not answer.strip():
            return
        if await self._attach(pasted_path(answer)):
            screen.composer.focus()
            await self._kept()

    async def _attach(self, path: str) -> bool:
        try:
            await self._screen.tray.attach(path)
        except AttachmentError as exc:
            self._screen.notify(str(exc), title="Cannot attach", severity="error", markup=False)
            return False
        return True

    async def _kept(self) -> None:
        """The tray's files written to the draft, and counted."""
        await self._screen.tray.keep()
        await self._screen.refresh_gauge()

    async def _attach_typed_path(self, event: Composer.PathChosen) -> None:
        """An ``@path`` accepted in the composer: attach the file."""
        if await self._attach(str(event.path)):
            await self._kept()

    def action_paste_clipboard(self) -> None:
        """``ctrl+v``: attach the clipboard's image; with none, paste its text in the composer.

        The terminal did not paste (it sent ``ctrl+v`` as a key), so the text is read through
        the same tool. The tool runs in a thread: the loop never waits for it.
        """
        pasting: Worker[None] = self._screen.run_worker(
            self._paste, name="action_paste_clipboard", group="clipboard", exclusive=True,
            exit_on_error=False,
        )  # fmt: skip
        del pasting  # its failure is reported by the screen

    async def _paste(self) -> None:
        from tui_chat.tui.clipboard import NoClipboardTool, read_clipboard

        screen = self._screen
        try:
            clipboard = await asyncio.to_thread(read_clipboard)
        except NoClipboardTool as exc:
            screen.notify(str(exc), title="Cannot paste", severity="warning", markup=False)
            if screen.app.clipboard:  # what was copied in the app still pastes, as before
                screen.composer.focus()
                screen.composer.insert(screen.app.clipboard)
            return
        if clipboard.image:
            kind = image_type(clipboard.image)
            suffix = "." + kind[0].removeprefix("image/") if kind else ""
            name = f"clipboard-{datetime.now():%Y%m%d-%H%M%S}{suffix}"
            try:
                attached = screen.tray.attach_data(name, clipboard.image)
            except AttachmentError as exc:
                screen.notify(str(exc), title="Cannot attach", severity="error", markup=False)
                return
            screen.notify(f"Attached the clipboard's image ({attached.name}).", markup=False)
            screen.composer.focus()
            await self._kept()
        elif clipboard.text:
            screen.composer.focus()
            screen.composer.insert(clipboard.text)
        else:
            screen.notify("No image or text on the clipboard.", severity="warning")

    # -- a prompt edited ---------------------------------------------------------------------

    def _edit(self, request: EditRequested) -> None:
        """Put the prompt (and its files) in the composer; sending makes a fork.

        The text and the focus move at once, so keys typed right after ``e`` add to the
        prompt; its files follow when read.
        """
        screen, message = self._screen, request.message
        screen.tray.start_edit(message.id)
        screen.composer.load_text(typed_text(message.content, message.text))
        screen.composer.move_cursor(screen.composer.document.end)
        screen.set_focus(screen.composer)
        reading: Worker[None] = screen.run_worker(
            partial(self._edit_files, message), name="_edit_files", exit_on_error=False
        )
        del reading  # its failure is reported by the screen

    async def _edit_files(self, message: Message) -> None:
        screen = self._screen
        try:
            files = await screen.app.service.branches.files_of(message)
        except AttachmentError as exc:
            screen.notify(f"{exc}; edited without them", severity="error", markup=False)
            return
        screen.tray.edit_files(message.id, files)
