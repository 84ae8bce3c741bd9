"""The command palette provider: every palette action of the main screen (see ``actions.py``)."""

from __future__ import annotations

from functools import partial
from typing import Final

from textual.actions import parse
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui_chat.tui.actions import palette
from tui_chat.tui.widgets.navigation import NavigationMode, run_part

PALETTE: Final[tuple[tuple[str, str, str], ...]] = palette()
"""(palette name, action, help) of every palette command: an action of the main screen,
the app (``app.``) or a part of the chat pane (``message.``)."""


class ChatCommands(Provider):
    """Offers :data:`PALETTE` in the command palette of the main screen."""

    async def _run(self, action: str) -> None:
        """Run a screen action, or one of a chat pane's part (``message.fork``) on the pane."""
        chat = self.screen.query_one("#chat", NavigationMode)
        if parse(action)[0] in chat.parts:
            await run_part(chat, action)
        else:
            await self.screen.run_action(action)

    async def discover(self) -> Hits:
        """Every command, for the empty palette."""
        for name, action, help_text in PALETTE:
            yield DiscoveryHit(name, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        """Commands whose name matches what was typed."""
        matcher = self.matcher(query)
        for name, action, help_text in PALETTE:
            score = matcher.match(name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    partial(self._run, action),
                    text=name,
                    help=help_text,
                )
