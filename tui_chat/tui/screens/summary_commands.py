"""What the chat screen does to summary versions: compact now, inspect, activate, roll back,
regenerate.

:class:`SummaryCommands` is held by the chat screen (composition, not a base class): the
``action_*`` methods are named in the table of actions as ``summary.<name>``
(``tui/actions.py``), and the timeline's messages reach it through its ``routes()``. The
inspector is imported when first opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tui_chat.tui.widgets.summary_timeline import SummaryTimeline

if TYPE_CHECKING:
    from tui_chat.core.models import Summary
    from tui_chat.tui.screens.chat_screen import ChatScreen
    from tui_chat.tui.screens.inspector import Activate, Regenerate


class SummaryCommands:
    """The actions on the summary versions of the conversation on screen.

    Args:
        screen: The chat screen: its timeline lists the versions, and its panels are refreshed
            after a change.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The timeline's request to inspect a version."""
        return {SummaryTimeline.Inspect: lambda event: self.action_inspect(event.summary)}

    def action_compact(self) -> None:
        """Compact the conversation now (in the background), asking first when the compact
        preview warns."""
        self._screen.run_worker(self.compact(), group="compact-preview", exit_on_error=False)

    def action_regenerate(self) -> None:
        """Regenerate the highlighted (or active) version, asking for instructions."""
        self._screen.run_worker(self.ask_regenerate(), exit_on_error=False)

    async def compact(self) -> None:
        """Compact the conversation now (in the background); first, when the compact preview
        says the next request (the draft, else the newest user message) would lose messages
        it needs, ask with the preview's lines (run in a worker: it waits for the answer)."""
        from tui_chat.tui.screens.prompt import Confirm

        screen = self._screen
        if screen.conversation is None:
            return
        conversation_id = screen.conversation.id
        draft = screen.composer.text
        found = await screen.app.service.summaries.preview(conversation_id, draft or None)
        if found.warning is not None:
            question = "\n".join([*found.lines(), "", "Compact anyway?"])
            if not await screen.app.push_screen_wait(Confirm(question, "Compact")):
                screen.notify("Not compacted.", timeout=2)
                return
        screen.notify("Compacting now…", timeout=2)
        screen.app.compact(conversation_id)

    def highlighted_or_active(self) -> Summary | None:
        """The version highlighted in the timeline when it has the focus, else the active."""
        screen = self._screen
        timeline = screen.timeline
        focused = screen.focused is not None and timeline in screen.focused.ancestors
        if focused and (summary := timeline.highlighted) is not None:
            return summary
        return next((s for s in timeline.summaries if s.id == timeline.active_id), None) or next(
            (s for s in timeline.summaries if s.status == "completed"), None
        )

    async def action_inspect(self, summary: Summary | None = None) -> None:
        """Open the inspector on ``summary`` (by default the highlighted or active version)."""
        from tui_chat.tui.screens.inspector import InspectorScreen

        screen = self._screen
        await screen.refresh_timeline()
        summary = summary or self.highlighted_or_active()
        if summary is None or screen.conversation is None:
            screen.notify("No summary yet: ctrl+g compacts now.", severity="warning")
            return
        versions = screen.timeline.summaries
        parent = next((s for s in versions if s.id == summary.parent_id), None)
        active = summary.id == screen.conversation.active_summary_id
        kept = await screen.app.service.summaries.retention(screen.conversation.id, summary)
        await screen.app.push_screen(
            InspectorScreen(summary, parent, active=active, retention=kept),
            self._inspector_closed,
        )

    async def _inspector_closed(self, choice: Activate | Regenerate | None) -> None:
        from tui_chat.tui.screens.inspector import Activate, Regenerate

        if isinstance(choice, Activate):
            await self.activate(choice.version)
        elif isinstance(choice, Regenerate):
            self.regenerate(choice.summary, choice.instructions)

    async def activate(self, version: int) -> None:
        """Put a summary version in force (0: none) and refresh the panels."""
        screen = self._screen
        if screen.conversation is None:
            return
        await screen.app.service.summaries.activate(screen.conversation.id, version)
        label = f"v{version}" if version else "no summary (everything raw)"
        screen.notify(f"Summary in force: {label}.")
        await screen.refresh_summaries()

    async def action_roll_back(self) -> None:
        """Put the previous completed version in force (none before v1)."""
        screen = self._screen
        if screen.conversation is None:
            return
        # Read here, not off the timeline: a panel refresh begun meanwhile (the one after the
        # first frame) would leave the timeline's versions unread when this looked at them.
        service = screen.app.service
        conversation = await service.conversations.resolve(screen.conversation.id)
        versions = await service.summaries.versions(conversation.id)
        active = next((s for s in versions if s.id == conversation.active_summary_id), None)
        if active is None:
            screen.notify("No summary is in force: nothing to roll back.", severity="warning")
            return
        older = [s for s in versions if s.status == "completed" and s.version < active.version]
        await self.activate(older[0].version if older else 0)

    def regenerate(self, summary: Summary, instructions: str | None) -> None:
        """Start regenerating a version in the background."""
        screen = self._screen
        if screen.conversation is None:
            return
        screen.notify(f"Regenerating summary v{summary.version}…", timeout=2)
        screen.app.regenerate(screen.conversation.id, summary.version, instructions or None)

    async def regenerated(self, summary: Summary) -> None:
        """A regeneration finished: say whether the new version is the one in force."""
        screen = self._screen
        if screen.conversation is None or summary.conversation_id != screen.conversation.id:
            return
        await screen.refresh_summaries()
        if screen.timeline.active_id == summary.id:
            screen.notify(f"Summary v{summary.version} is now the active version.")
        else:
            screen.notify(f"Summary v{summary.version} kept aside (another version is active).")

    async def ask_regenerate(self) -> None:
        """Regenerate the highlighted (or active) version, asking for instructions (run in a
        worker: it waits for the prompt)."""
        from tui_chat.tui.screens.inspector import regenerate_prompt

        screen = self._screen
        await screen.refresh_timeline()
        summary = self.highlighted_or_active()
        if summary is None:
            screen.notify("No completed summary to regenerate.", severity="warning")
            return
        instructions = await screen.app.push_screen_wait(regenerate_prompt(summary))
        if instructions is not None:
            self.regenerate(summary, instructions.strip())
