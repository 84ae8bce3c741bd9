"""The command palette provider: every action of the main screen under its DESIGN.md name."""

from __future__ import annotations

from functools import partial
from typing import Final

from textual.command import DiscoveryHit, Hit, Hits, Provider

PALETTE: Final[tuple[tuple[str, str, str], ...]] = (
    ("New conversation", "new_conversation", "Start a new conversation  ctrl+n"),
    ("Rename conversation", "rename_conversation", "Give this conversation a title  f2"),
    ("Delete conversation", "delete_conversation", "Delete this conversation (asks first)"),
    ("Search", "search", "Full-text search across every conversation  ctrl+f"),
    ("Compact now", "compact", "Summarise the older turns now  ctrl+g"),
    ("Pin message", "pin_message", "Always send the selected message verbatim"),
    ("Unpin message", "unpin_message", "Stop pinning the selected message"),
    ("Summary timeline", "toggle_timeline", "Show or hide the summary versions  ctrl+t"),
    ("Inspect summary", "inspect_summary", "Full text, segments and diff of a version  f4"),
    ("Roll back summary", "roll_back_summary", "Put the previous summary version in force"),
    ("Regenerate summary", "regenerate_summary", "Summarise the same turns again"),
    ("Context preview", "context_preview", "The exact request the next send makes  ctrl+o"),
    ("Export conversation", "export", "Write the conversation to Markdown or JSON  ctrl+s"),
    ("Settings", "settings", "Model, preset, thresholds, compression rate  f3"),
    ("Retry reply", "retry", "Ask again for the last reply  ctrl+r"),
    ("Cancel reply", "cancel_reply", "Stop the streaming reply  escape"),
)
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
