"""The "always allowed" tools and servers, listed where they can be revoked.

An approval given for good (``t`` or ``s`` at a tool call's prompt) is kept across sessions
and for every conversation. The settings screen (``f3``) lists them here and ``delete`` (or
``r``) on the highlighted one revokes it at once: that tool's (or server's) calls ask again.
The tools screen (``f9``) lists them too, under the servers.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual import events, on
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_chat.tui.text import inert_content

__all__ = ["ApprovalList", "Approvals", "approval_label"]

NONE_HINT = "None: each tool call asks first (t or s at its prompt: for good)."
"""What the list shows when nothing is allowed for good."""


class Approvals(Protocol):
    """Where the standing approvals are kept (``service.tools``)."""

    async def approvals(self) -> list[tuple[str, str]]:
        """``(server, tool)`` pairs; ``tool`` ``''``: every tool of the server."""
        ...

    async def revoke(self, server: str, tool: str = "") -> bool:
        """Take one back."""
        ...


def approval_label(server: str, tool: str) -> str:
    """One approval as a line: ``files: read_file``, or ``files: every tool``."""
    return f"{server}: {tool}" if tool else f"{server}: every tool"


def approval_id(server: str, tool: str) -> str:
    """The option id of one approval."""
    return f"approval:{server}:{tool}"


class ApprovalList(OptionList):
    """The standing approvals, one a line; ``delete`` or ``r`` revokes the highlighted one.

    Args:
        source: Where they are kept.
    """

    DEFAULT_CSS = """
    ApprovalList { height: auto; max-height: 8; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("delete,r", "revoke", "Revoke")]

    def __init__(self, source: Approvals, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.approvals: list[tuple[str, str]] = []
        """The approvals listed (as last read)."""

    @on(events.Mount)
    async def _read(self) -> None:
        """Read the approvals once shown."""
        await self.refill()

    async def refill(self) -> None:
        """Read the approvals again and list them (the highlight kept where it can be)."""
        self.approvals = await self.source.approvals()
        highlighted = self.highlighted
        self.clear_options()
        if not self.approvals:
            self.add_option(Option(NONE_HINT, disabled=True))
            return
        self.add_options(
            Option(inert_content(approval_label(server, tool)), id=approval_id(server, tool))
            for server, tool in self.approvals
        )
        self.highlighted = min(highlighted or 0, len(self.approvals) - 1)

    async def action_revoke(self) -> None:
        """Revoke the highlighted approval: its calls ask again."""
        if self.highlighted is None or not self.approvals:
            return
        option = self.get_option_at_index(self.highlighted)
        if option.id is None:
            return
        _, server, tool = option.id.split(":", 2)
        await self.source.revoke(server, tool)
        self.notify(f"Revoked {approval_label(server, tool)}: its calls ask again.", markup=False)
        await self.refill()
