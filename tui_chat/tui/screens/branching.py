"""What the chat screen does with the draft and at a chosen message: attach files to the
message being written, send it (as a fork when a prompt is edited), and the edit, fork,
compact-up-to and delete requests the chat pane posts (``widgets/message_actions.py``).

:class:`BranchView` sits between :class:`~tui_chat.tui.screens.chat_view.ChatView` (the panels)
and :class:`~tui_chat.tui.screens.main.MainScreen` (every other action); its ``action_*``
methods are named in the table of actions (``tui/actions.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from urllib.parse import unquote

from textual import events, on, work

from tui_chat.core.attachments import (
    Attachment,
    AttachmentError,
    check_request,
    typed_text,
)
from tui_chat.core.filetypes import image_type
from tui_chat.core.models import Message
from tui_chat.engine.send import EmptyMessage, MessageTooLarge
from tui_chat.tui.screens.chat_view import ChatView
from tui_chat.tui.screens.conversation_commands import ConversationCommands
from tui_chat.tui.screens.message_deleting import MessageDeleting
from tui_chat.tui.screens.summary_commands import SummaryCommands
from tui_chat.tui.text import one_line
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList
from tui_chat.tui.widgets.draft_tray import DraftTray
from tui_chat.tui.widgets.message_actions import (
    CompactUptoRequested,
    DeleteRequested,
    EditRequested,
    ForkRequested,
)

NOT_SENT = (EmptyMessage, MessageTooLarge, AttachmentError)
"""Refusals of a send that stored nothing."""


def pasted_path(text: str) -> str:
    """A path as typed, pasted or dropped on the terminal: quotes and ``file://`` removed."""
    path = text.strip().strip("'\"")
    if path.startswith("file://"):
        path = unquote(path.removeprefix("file://"))
    return path


class BranchView(ChatView):
    """The chat screen's message-level actions, the draft tray's files, and the actions on
    whole conversations (handed over to :class:`ConversationCommands`)."""

    def __init__(self) -> None:
        super().__init__()
        self.conversation_commands = ConversationCommands(self)
        """New, rename, delete, archive, export (the actions on whole conversations hand over
        to it)."""
        self.summary_commands = SummaryCommands(self)
        """Compact now or up to a message, inspect, activate, roll back and regenerate summary
        versions."""
        self.deleting = MessageDeleting(self)
        """Deleting the selected message (asks first)."""
        self._unsent: tuple[str, str, list[Attachment]] | None = None
        """The last send (conversation, text, files) until its worker ends."""

    # -- whole conversations: the table of actions and the list hand over to the commands --

    async def action_new_conversation(self) -> None:
        """Start a new conversation and open it."""
        await self.conversation_commands.new()

    def action_rename_conversation(self, conversation_id: str | None = None) -> None:
        """Rename a conversation (the current one by default); the prompt opens at once."""
        self.conversation_commands.rename(conversation_id)

    def action_delete_conversation(self, conversation_id: str | None = None) -> None:
        """Delete a conversation after confirmation; opens another one afterwards."""
        self.conversation_commands.delete(conversation_id)

    async def action_archive_conversation(self, conversation_id: str | None = None) -> None:
        """Archive a conversation (hidden from the list, kept), or unarchive an archived one."""
        await self.conversation_commands.archive(conversation_id)

    def action_export(self) -> None:
        """Export the conversation to a Markdown (``.md``) or JSON (``.json``) file."""
        self.conversation_commands.export()

    @on(ConversationList.New)
    async def _list_new(self) -> None:
        await self.conversation_commands.new()

    @on(ConversationList.Rename)
    def _list_rename(self, event: ConversationList.Rename) -> None:
        self.conversation_commands.rename(event.conversation_id)

    @on(ConversationList.Delete)
    def _list_delete(self, event: ConversationList.Delete) -> None:
        self.conversation_commands.delete(event.conversation_id)

    @on(ConversationList.Archive)
    async def _list_archive(self, event: ConversationList.Archive) -> None:
        await self.conversation_commands.archive(event.conversation_id)

    @property
    def tray(self) -> DraftTray:
        """The files attached to the draft, and the prompt being edited."""
        return self.query_one("#pending-files", DraftTray)

    @property
    def editing(self) -> int | None:
        """The prompt being edited (sending forks before it), if any."""
        return self.tray.editing

    @on(DraftTray.Changed)
    def _files_changed(self, event: DraftTray.Changed) -> None:
        self.composer.has_files = event.has_files

    def attached_files(self) -> Sequence[Attachment]:
        """Files attached to the draft (counted by the gauge)."""
        return self.tray.pending

    async def open_conversation(
        self, conversation_id: str, around: int | None = None, **options: bool
    ) -> None:
        """Show a conversation with the files attached to its draft; an edit of another one
        is dropped (the other's attached files stay in its draft)."""
        if conversation_id != self.conversation_id:
            for tray in self.query(DraftTray):  # not there yet at start-up
                tray.forget()
        await super().open_conversation(conversation_id, around, **options)
        await self.tray.switch(self.conversation_id)
        if self.conversation_id is not None:  # the branch its family opens next time
            await self.app.service.branches.viewed(self.conversation_id)

    async def unsent_back(self, error: BaseException | None) -> None:
        """After a send: when it was refused before its message was stored, its text and
        files come back to the composer (and the draft).

        Args:
            error: Why the reply worker failed (``None``: it did not).
        """
        unsent, self._unsent = self._unsent, None
        if unsent is None or not isinstance(error, NOT_SENT):
            return
        conversation_id, text, files = unsent
        if conversation_id != self.conversation_id:
            return
        if isinstance(error, MessageTooLarge):
            text = error.text  # the text with the draft kept before it
        if not self.composer.text.strip() and text.strip():
            self.composer.load_text(text)
            self.composer.move_cursor(self.composer.document.end)
        await self.tray.give_back(files)
        await self.refresh_gauge()

    @on(events.Key)
    async def _remove_file(self, event: events.Key) -> None:
        """``backspace`` at the very start of the composer removes the last attached file."""
        if (
            event.key == "backspace"
            and self.tray.pending
            and self.focused is self.composer
            and self.composer.cursor_location == (0, 0)
            and not self.composer.selected_text
        ):
            event.stop()
            event.prevent_default()
            await self.action_detach_file()

    async def action_detach_file(self) -> None:
        """Remove the last file attached to the draft."""
        removed = await self.tray.detach()
        if removed is None:
            self.notify("No file is attached to the message.", severity="warning")
            return
        self.notify(f"Removed {removed.name}.", markup=False, timeout=2)
        await self.refresh_gauge()

    @on(events.Key)
    def _cancel_edit(self, event: events.Key) -> None:
        """``escape`` in the composer while editing a prompt drops the edit (and its files)."""
        if (
            event.key == "escape"
            and self.editing is not None
            and self.focused is self.composer
            and not self.app.replying
        ):
            self.tray.drop_edit()
            self.composer.clear()
            self.notify("Edit cancelled.")
            event.stop()
            event.prevent_default()
            self.run_worker(self.tray.reload(), exit_on_error=False)

    # -- attachments -------------------------------------------------------------------------

    @work(exit_on_error=False)
    async def action_attach_file(self) -> None:
        """Ask for a file (a typed or pasted path, or one picked in the folder tree) and
        attach it to the draft."""
        from tui_chat.tui.screens.file_picker import FilePicker  # not needed before this

        answer = await self.app.push_screen_wait(FilePicker())
        if not answer or not answer.strip():
            return
        path = pasted_path(answer)
        try:
            await self.tray.attach(path)
        except AttachmentError as exc:
            self.notify(str(exc), title="Cannot attach", severity="error", markup=False)
            return
        self.composer.focus()
        await self.tray.keep()
        await self.refresh_gauge()

    @on(Composer.PathChosen)
    async def _attach_typed_path(self, event: Composer.PathChosen) -> None:
        """An ``@path`` accepted in the composer: attach the file."""
        try:
            await self.tray.attach(str(event.path))
        except AttachmentError as exc:
            self.notify(str(exc), title="Cannot attach", severity="error", markup=False)
            return
        await self.tray.keep()
        await self.refresh_gauge()

    @work(exit_on_error=False, group="clipboard", exclusive=True)
    async def action_paste_clipboard(self) -> None:
        """``ctrl+v``: attach the clipboard's image; with none, paste its text in the composer.

        The terminal did not paste (it sent ``ctrl+v`` as a key), so the text is read through
        the same tool. The tool runs in a thread: the loop never waits for it.
        """
        from tui_chat.tui.clipboard import NoClipboardTool, read_clipboard

        try:
            clipboard = await asyncio.to_thread(read_clipboard)
        except NoClipboardTool as exc:
            self.notify(str(exc), title="Cannot paste", severity="warning", markup=False)
            if self.app.clipboard:  # what was copied in the app still pastes, as before
                self.composer.focus()
                self.composer.insert(self.app.clipboard)
            return
        if clipboard.image:
            kind = image_type(clipboard.image)
            suffix = "." + kind[0].removeprefix("image/") if kind else ""
            name = f"clipboard-{datetime.now():%Y%m%d-%H%M%S}{suffix}"
            try:
                attached = self.tray.attach_data(name, clipboard.image)
            except AttachmentError as exc:
                self.notify(str(exc), title="Cannot attach", severity="error", markup=False)
                return
            self.notify(f"Attached the clipboard's image ({attached.name}).", markup=False)
            self.composer.focus()
            await self.tray.keep()
            await self.refresh_gauge()
        elif clipboard.text:
            self.composer.focus()
            self.composer.insert(clipboard.text)
        else:
            self.notify("No image or text on the clipboard.", severity="warning")

    def send_draft(self, composer: Composer, text: str) -> None:
        """Send the draft with its files (as a fork when a prompt is being edited).

        The draft stays in the composer when the files cannot be sent.
        """
        if self.conversation is None:
            return
        try:
            check_request([a.ref() for a in self.tray.pending])
        except AttachmentError as exc:
            composer.restore(text)  # cleared when it was submitted
            self.notify(f"{exc}; nothing was sent", severity="error", markup=False)
            return
        composer.remember(text)
        # The stored draft keeps the files until the message is stored (one transaction), so
        # a refused send gives them back (unsent_back).
        files, editing = self.tray.take()
        self._unsent = (self.conversation.id, text, files) if editing is None else None
        if editing is None:
            self.app.send_reply(self.conversation.id, text, files)
        else:
            self.send_edit(editing, text, files)

    @work(exit_on_error=False)
    async def send_edit(self, message_id: int, text: str, files: list[Attachment]) -> None:
        fork, _ = await self.app.service.branches.fork_for_edit(message_id)
        # What was typed since enter belongs to the fork, not to the original's draft.
        typed = self.composer.text
        self.composer.clear()
        await self.open_conversation(fork.id)
        if typed and not self.composer.text:
            self.composer.load_text(typed)
            self.composer.move_cursor(self.composer.document.end)
        self.notify("Edited as a new branch (‹ › on the prompt; f5 then [ / ] switch back).")
        self.app.send_reply(fork.id, text, files)

    # -- what the chat pane asks for at the selected message ---------------------------------

    @on(EditRequested)
    def _edit(self, request: EditRequested) -> None:
        """Put the prompt (and its files) in the composer; sending makes a fork.

        The text and the focus move at once, so keys typed right after ``e`` add to the
        prompt; its files follow when read.
        """
        message = request.message
        self.tray.start_edit(message.id)
        self.composer.load_text(typed_text(message.content, message.text))
        self.composer.move_cursor(self.composer.document.end)
        self.set_focus(self.composer)
        self._edit_files(message)

    @work(exit_on_error=False)
    async def _edit_files(self, message: Message) -> None:
        try:
            files = await self.app.service.branches.files_of(message)
        except AttachmentError as exc:
            self.notify(f"{exc}; edited without them", severity="error", markup=False)
            return
        self.tray.edit_files(message.id, files)

    @on(CompactUptoRequested)
    def _compact_upto(self, request: CompactUptoRequested) -> None:
        """Compact every whole turn up to the message's turn ("compact up to here", ``s``),
        asking first when the compact preview warns, as ``ctrl+g`` does."""
        self.run_worker(
            self.summary_commands.compact(request.message_id),
            group="compact-preview",
            exit_on_error=False,
        )

    @on(DeleteRequested)
    async def _delete(self, request: DeleteRequested) -> None:
        """Ask before deleting the message (the dialog is open once this returns)."""
        await self.deleting.ask(request.message_id)

    @on(ForkRequested)
    async def _fork(self, request: ForkRequested) -> None:
        """Fork at the message and open the fork."""
        if self.conversation is None:
            return
        fork = await self.app.service.branches.fork(self.conversation.id, request.message_id)
        await self.open_conversation(fork.id)
        self.notify(f"New branch “{one_line(fork.title, 50)}”; f5 then [ / ] switch back.")
