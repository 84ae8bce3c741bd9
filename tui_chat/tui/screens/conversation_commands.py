"""What the chat screen does to whole conversations: start, rename, delete, archive, export.

:class:`ConversationCommands` is held by the chat screen (composition, not a base class): the
``action_*`` methods are named in the table of actions as ``conversation.<name>``
(``tui/actions.py``), and the conversation list's messages reach it through its ``routes()``.
The prompts it asks with are imported when first used (the first frame needs none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_chat.files import TargetExistsError
from tui_chat.tui.text import one_line
from tui_chat.tui.widgets.conversation_list import ConversationList

if TYPE_CHECKING:
    from tui_chat.core.family import Family
    from tui_chat.tui.screens.chat_screen import ChatScreen


class ConversationCommands:
    """The actions on a conversation as a whole (the one on screen unless one is named).

    Args:
        screen: The chat screen: it shows, reloads and lists the conversations, and runs the
            workers (their failures are reported there).
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The conversation list's requests (its letters in navigation mode)."""
        return {
            ConversationList.New: lambda _: self.action_new(),
            ConversationList.Rename: lambda event: self.action_rename(event.conversation_id),
            ConversationList.Delete: lambda event: self.action_delete(event.conversation_id),
            ConversationList.Archive: lambda event: self.action_archive(event.conversation_id),
        }

    async def action_new(self) -> None:
        """Start a new conversation and open it."""
        screen = self._screen
        conversation = await screen.app.service.conversations.new()
        await screen.open_conversation(conversation.id)
        screen.composer.focus()

    def _target(self, conversation_id: str | None) -> str | None:
        return conversation_id or self._screen.conversation_id

    def action_rename(self, conversation_id: str | None = None) -> None:
        """Rename a conversation (the current one by default).

        The prompt for the one on screen opens at once, so the keys typed right after ``f2``
        reach it in order (under load a rename lost its last character).
        """
        if (conv_id := self._target(conversation_id)) is None:
            return
        shown = self._screen.conversation
        if shown is not None and conv_id == shown.id:
            self._ask_title(conv_id, shown.title)
        else:
            self._screen.run_worker(self._rename_other(conv_id), exit_on_error=False)

    async def _rename_other(self, conv_id: str) -> None:
        self._ask_title(
            conv_id, (await self._screen.app.service.conversations.resolve(conv_id)).title
        )

    def _ask_title(self, conv_id: str, title: str) -> None:
        from tui_chat.tui.screens.prompt import TextPrompt

        prompt = TextPrompt("Rename conversation", title, "A short title")
        self._screen.app.push_screen(prompt, partial(self._rename, conv_id))

    async def _rename(self, conv_id: str, title: str | None) -> None:
        if title is None or not title.strip():
            return
        screen = self._screen
        await screen.app.service.conversations.rename(conv_id, title)
        if conv_id == screen.conversation_id:
            await screen.reload()
        else:
            await screen.refresh_conversations()

    def action_delete(self, conversation_id: str | None = None) -> None:
        """Delete a conversation after confirmation; opens another one afterwards."""
        if (conv_id := self._target(conversation_id)) is not None:
            self._screen.run_worker(self._delete(conv_id), exit_on_error=False)

    async def _delete(self, conv_id: str) -> None:
        from tui_chat.tui.screens.prompt import Confirm

        screen = self._screen
        conversation = await screen.app.service.conversations.resolve(conv_id)
        family = await screen.app.service.branches.family(conv_id)
        question = (
            f"Delete “{one_line(conversation.title, 50)}” and all its messages and summaries? "
            "This cannot be undone."
        )
        if not await screen.app.push_screen_wait(Confirm(question, "Delete")):
            return
        await screen.app.service.conversations.delete(conv_id)
        screen.notify(f"Deleted “{one_line(conversation.title, 50)}”.", markup=False)
        await self._after_removal(conv_id, family)

    async def action_archive(self, conversation_id: str | None = None) -> None:
        """Archive a conversation (hidden from the list, kept), or unarchive an archived one."""
        if (conv_id := self._target(conversation_id)) is None:
            return
        screen = self._screen
        if (await screen.app.service.conversations.resolve(conv_id)).archived_at is not None:
            restored = await screen.app.service.conversations.archive(conv_id, archived=False)
            screen.notify(f"Unarchived “{one_line(restored.title, 50)}”.", markup=False)
            await screen.refresh_conversations()
            return
        family = await screen.app.service.branches.family(conv_id)
        conversation = await screen.app.service.conversations.archive(conv_id)
        screen.notify(f"Archived “{one_line(conversation.title, 50)}”.", markup=False)
        await self._after_removal(conv_id, family)

    async def _after_removal(self, conv_id: str, family: Family) -> None:
        """A conversation left the list: open another one if it was on screen (another branch
        of the same conversation first)."""
        screen = self._screen
        if conv_id != screen.conversation_id:
            await screen.refresh_conversations()
            return
        if rest := [b.id for b in family.branches if b.id != conv_id]:
            left = await screen.app.service.branches.family(rest[0])
            shown = left.get(left.shown)
            if shown is not None and not shown.archived:
                await screen.open_conversation(shown.id)
                return
        infos = await screen.app.service.conversations.list()
        if infos:
            await screen.open_conversation(infos[0].conversation.id)
        else:
            conversation = await screen.app.service.conversations.new()
            await screen.open_conversation(conversation.id)

    def action_export(self) -> None:
        """Export the conversation to a Markdown (``.md``), JSON (``.json``) or HTML (``.html``)
        file."""
        if (shown := self._screen.conversation) is not None:
            self._screen.run_worker(self._export(shown.id), exit_on_error=False)

    async def _export(self, conv_id: str) -> None:
        from tui_chat.tui.screens.prompt import Confirm, TextPrompt

        screen = self._screen
        default = screen.app.export_dir / f"tui-chat-{conv_id[:8]}.md"
        answer = await screen.app.push_screen_wait(
            TextPrompt("Export conversation to (.md, .json or .html)", str(default))
        )
        if not answer or not answer.strip():
            return
        path = Path(answer.strip()).expanduser()
        try:
            # JSON or HTML by the suffix (.json, .html), else Markdown; private (0600).
            await screen.app.service.transfer.export_to(conv_id, path)
        except TargetExistsError:
            # Only a file is replaced, and only when the user says so (by a new file moved
            # into place, so a failed write leaves the old one whole).
            question = f"{path} exists. Replace it with this export?"
            if not path.is_file() or not await screen.app.push_screen_wait(
                Confirm(question, "Replace")
            ):
                screen.notify(f"Not exported: {path} exists.", severity="warning", markup=False)
                return
            await self._export_over(conv_id, path)
            return
        except OSError as exc:
            screen.notify(
                f"Cannot write {path}: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        screen.notify(f"Exported to {path}", title="Export", markup=False)

    async def _export_over(self, conv_id: str, path: Path) -> None:
        screen = self._screen
        try:
            await screen.app.service.transfer.export_to(conv_id, path, force=True)
        except OSError as exc:
            screen.notify(
                f"Cannot write {path}: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        screen.notify(f"Exported to {path} (replaced)", title="Export", markup=False)
