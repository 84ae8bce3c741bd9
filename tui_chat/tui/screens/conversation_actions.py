"""What the main screen does to whole conversations: start, rename, delete, archive, export.

:class:`ConversationActions` sits between :class:`~tui_chat.tui.screens.branching.BranchView`
and :class:`~tui_chat.tui.screens.main.MainScreen`; its ``action_*`` methods are named in the
table of actions (``tui/actions.py``). The prompts it asks with are imported when first used.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from textual import on, work

from tui_chat.files import TargetExistsError
from tui_chat.tui.screens.branching import BranchView
from tui_chat.tui.text import one_line
from tui_chat.tui.widgets.conversation_list import ConversationList


class ConversationActions(BranchView):
    """The actions on a conversation as a whole (the one on screen unless one is named)."""

    async def action_new_conversation(self) -> None:
        """Start a new conversation and open it."""
        conversation = await self.app.service.new_conversation()
        await self.open_conversation(conversation.id)
        self.composer.focus()

    @on(ConversationList.New)
    async def _list_new(self) -> None:
        await self.action_new_conversation()

    @on(ConversationList.Rename)
    def _list_rename(self, event: ConversationList.Rename) -> None:
        self.action_rename_conversation(event.conversation_id)

    @on(ConversationList.Delete)
    def _list_delete(self, event: ConversationList.Delete) -> None:
        self.action_delete_conversation(event.conversation_id)

    @on(ConversationList.Archive)
    async def _list_archive(self, event: ConversationList.Archive) -> None:
        await self.action_archive_conversation(event.conversation_id)

    def _target(self, conversation_id: str | None) -> str | None:
        return conversation_id or self.conversation_id

    def action_rename_conversation(self, conversation_id: str | None = None) -> None:
        """Rename a conversation (the current one by default).

        The prompt for the one on screen opens at once, so the keys typed right after ``f2``
        reach it in order (issue 22: under load a rename lost its last character).
        """
        if (conv_id := self._target(conversation_id)) is None:
            return
        if self.conversation is not None and conv_id == self.conversation.id:
            self._ask_title(conv_id, self.conversation.title)
        else:
            self._rename_other(conv_id)

    @work(exit_on_error=False)
    async def _rename_other(self, conv_id: str) -> None:
        self._ask_title(conv_id, (await self.app.service.resolve(conv_id)).title)

    def _ask_title(self, conv_id: str, title: str) -> None:
        from tui_chat.tui.screens.prompt import TextPrompt

        prompt = TextPrompt("Rename conversation", title, "A short title")
        self.app.push_screen(prompt, partial(self._rename, conv_id))

    async def _rename(self, conv_id: str, title: str | None) -> None:
        if title is None or not title.strip():
            return
        await self.app.service.rename(conv_id, title)
        if conv_id == self.conversation_id:
            await self.reload()
        else:
            await self.refresh_conversations()

    @work(exit_on_error=False)
    async def action_delete_conversation(self, conversation_id: str | None = None) -> None:
        """Delete a conversation after confirmation; opens another one afterwards."""
        from tui_chat.tui.screens.prompt import Confirm

        if (conv_id := self._target(conversation_id)) is None:
            return
        conversation = await self.app.service.resolve(conv_id)
        question = (
            f"Delete “{one_line(conversation.title, 50)}” and all its messages and summaries? "
            "This cannot be undone."
        )
        if not await self.app.push_screen_wait(Confirm(question, "Delete")):
            return
        await self.app.service.delete(conv_id)
        self.notify(f"Deleted “{one_line(conversation.title, 50)}”.", markup=False)
        await self._after_removal(conv_id)

    async def action_archive_conversation(self, conversation_id: str | None = None) -> None:
        """Archive a conversation (hidden from the list, kept), or unarchive an archived one."""
        if (conv_id := self._target(conversation_id)) is None:
            return
        if (await self.app.service.resolve(conv_id)).archived_at is not None:
            restored = await self.app.service.archive(conv_id, archived=False)
            self.notify(f"Unarchived “{one_line(restored.title, 50)}”.", markup=False)
            await self.refresh_conversations()
            return
        conversation = await self.app.service.archive(conv_id)
        self.notify(f"Archived “{one_line(conversation.title, 50)}”.", markup=False)
        await self._after_removal(conv_id)

    async def _after_removal(self, conv_id: str) -> None:
        """A conversation left the list: open another one if it was on screen."""
        if conv_id != self.conversation_id:
            await self.refresh_conversations()
            return
        infos = await self.app.service.list_conversations()
        if infos:
            await self.open_conversation(infos[0].conversation.id)
        else:
            conversation = await self.app.service.new_conversation()
            await self.open_conversation(conversation.id)

    @work(exit_on_error=False)
    async def action_export(self) -> None:
        """Export the conversation to a Markdown (``.md``) or JSON (``.json``) file."""
        from tui_chat.tui.screens.prompt import Confirm, TextPrompt

        if self.conversation is None:
            return
        default = self.app.export_dir / f"tui-chat-{self.conversation.id[:8]}.md"
        answer = await self.app.push_screen_wait(
            TextPrompt("Export conversation to (.md or .json)", str(default))
        )
        if not answer or not answer.strip():
            return
        path = Path(answer.strip()).expanduser()
        try:
            # JSON for a .json file, else Markdown; private (0600) like the database.
            await self.app.service.export_to(self.conversation.id, path)
        except TargetExistsError:
            # Only a file is replaced, and only when the user says so (by a new file moved
            # into place, so a failed write leaves the old one whole).
            question = f"{path} exists. Replace it with this export?"
            if not path.is_file() or not await self.app.push_screen_wait(
                Confirm(question, "Replace")
            ):
                self.notify(f"Not exported: {path} exists.", severity="warning", markup=False)
                return
            await self._export_over(path)
            return
        except OSError as exc:
            self.notify(
                f"Cannot write {path}: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        self.notify(f"Exported to {path}", title="Export", markup=False)

    async def _export_over(self, path: Path) -> None:
        if self.conversation is None:
            return
        try:
            await self.app.service.export_to(self.conversation.id, path, force=True)
        except OSError as exc:
            self.notify(
                f"Cannot write {path}: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        self.notify(f"Exported to {path} (replaced)", title="Export", markup=False)
