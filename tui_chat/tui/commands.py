"""The command palette provider: every palette action of the main screen (see ``actions.py``)."""

from __future__ import annotations

from functools import partial
from typing import Final

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui_chat.tui.actions import palette

PALETTE: Final[tuple[tuple[str, str, str], ...]] = palette()
"""(palette name, main screen action, help) of every palette command."""


class ChatCommands(Provider):
    """Offers :data:`PALETTE` in the command palette of the main screen."""

    async def _run(self, action: str) -> None:
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
