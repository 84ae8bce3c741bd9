"""The tools screen (``f9``): the MCP servers of ``mcp.json`` in this conversation, and the
approvals given for good.

Each server's line says its state, its tools and what their definitions cost in tokens;
``space`` (or ``enter``) switches it on or off in this conversation — which changes the
request's prefix, so the next send writes the prompt cache once more (said when switched).
A failed server shows its error. Under them, each "always allowed" tool or server; ``delete``
(or ``r``) revokes it: its calls ask again.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_chat.engine.tools import Tools
from tui_chat.tui.text import inert_content
from tui_chat.tui.widgets.approval_list import approval_id, approval_label

__all__ = ["ToolsScreen"]


class ToolsScreen(ModalScreen[bool]):
    """Switch servers per conversation; revoke standing approvals. Dismisses with whether
    anything a request sends changed."""

    DEFAULT_CSS = """
    ToolsScreen { align: center middle; }
    ToolsScreen > Vertical {
        width: 96; max-width: 98%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    ToolsScreen .title { text-style: bold; color: $text-accent; }
    ToolsScreen .hint { color: $text-muted; }
    ToolsScreen OptionList { height: auto; max-height: 24; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("space", "switch", "On/off"),
        Binding("delete,r", "revoke", "Revoke"),
    ]

    def __init__(self, tools: Tools, conversation_id: str) -> None:
        super().__init__()
        self.tools = tools
        self.conversation_id = conversation_id
        self.changed = False
        self._off: frozenset[str] = frozenset()
        self._approvals: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Tools (MCP servers of mcp.json)", classes="title")
            yield OptionList(id="tools-list")
            yield Static(
                "space: on/off in this conversation · delete: revoke an approval · escape: close",
                classes="hint",
            )

    async def on_mount(self) -> None:
        await self._fill()
        self.query_one(OptionList).focus()

    async def _fill(self) -> None:
        self._off = await self.tools.off(self.conversation_id)
        self._approvals = await self.tools.approvals()
        options: list[Option | None] = []
        if self.tools.problem:
            options.append(Option(inert_content(self.tools.problem), disabled=True))
        reports = self.tools.reports()
        if not reports and not self.tools.problem:
            hint = "No MCP servers: add them to mcp.json beside config.toml (docs/mcp.md)."
            options.append(Option(hint, disabled=True))
        for report in reports:
            on = report.name not in self._off
            mark = "[x]" if on else "[ ]"
            cost = f"{len(report.tools)} tools · {report.tokens:,} tokens" if report.tools else ""
            line = f"{mark} {report.name}  {report.state}  {cost}"
            if report.error:
                line += "\n      " + " ".join(report.error.split())[:160]
            options.append(Option(inert_content(line), id=f"server:{report.name}"))
        if self._approvals:
            options.append(None)
            options.append(Option(Content.styled("Always allowed", "bold"), disabled=True))
            for server, tool in self._approvals:
                what = inert_content(f"  {approval_label(server, tool)}")
                options.append(Option(what, id=approval_id(server, tool)))
        listed = self.query_one(OptionList)
        highlighted = listed.highlighted
        listed.clear_options()
        listed.add_options(options)
        if listed.option_count:
            listed.highlighted = min(highlighted or 0, listed.option_count - 1)

    def _selected(self) -> str:
        listed = self.query_one(OptionList)
        if listed.highlighted is None:
            return ""
        return listed.get_option_at_index(listed.highlighted).id or ""

    async def action_switch(self) -> None:
        """Switch the highlighted server on or off in this conversation."""
        chosen = self._selected()
        if not chosen.startswith("server:"):
            return
        server = chosen.removeprefix("server:")
        on = server in self._off
        note = await self.tools.set_on(self.conversation_id, server, on)
        self.changed = True
        state = "on" if on else "off"
        self.notify(f"{server} {state}: {note}.", markup=False)
        await self._fill()

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        await self.action_switch()

    async def action_revoke(self) -> None:
        """Revoke the highlighted standing approval."""
        chosen = self._selected()
        if not chosen.startswith("approval:"):
            return
        _, server, tool = chosen.split(":", 2)
        await self.tools.revoke(server, tool)
        self.notify(f"Revoked: {server}{': ' + tool if tool else ''} asks again.", markup=False)
        await self._fill()

    def action_close(self) -> None:
        self.dismiss(self.changed)
