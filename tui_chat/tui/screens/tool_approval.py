"""The approval prompt of a tool call: what runs, with which arguments, and who decides.

``o`` allows the call once, ``t`` always allows this tool, ``s`` always allows every tool of
this server (both kept across sessions, revoked in the tools screen, ``f9``), ``d`` or
``escape`` denies it (the model is told). The arguments are shown inert and whole, scrollable.
"""

from __future__ import annotations

import json
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_chat.engine.tools import Decision, ToolCall
from tui_chat.tui.text import inert_content

__all__ = ["ToolApproval"]

_CHOICES: tuple[tuple[str, str, Decision], ...] = (
    ("o", "Allow once", "once"),
    ("t", "Always: tool", "tool"),
    ("s", "Always: server", "server"),
    ("d", "Deny", "deny"),
)


class ToolApproval(ModalScreen[Decision]):
    """Ask whether a tool call may run; dismisses with the decision."""

    DEFAULT_CSS = """
    ToolApproval { align: center middle; }
    ToolApproval > Vertical {
        width: 90; max-width: 96%; height: auto; max-height: 90%;
        border: round $warning; background: $surface; padding: 0 1;
    }
    ToolApproval .title { text-style: bold; color: $text-warning; }
    ToolApproval .what { color: $text-muted; }
    ToolApproval VerticalScroll { height: auto; max-height: 12; background: $boost; }
    ToolApproval Horizontal { height: auto; margin-top: 1; }
    ToolApproval Button { margin-right: 1; min-width: 10; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(key, f"decide('{decision}')", label) for key, label, decision in _CHOICES),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    def __init__(self, call: ToolCall) -> None:
        super().__init__()
        self.call = call

    def compose(self) -> ComposeResult:
        call = self.call
        arguments = json.dumps(call.arguments, ensure_ascii=False, indent=2, sort_keys=True)
        with Vertical():
            yield Static(inert_content(f"Run {call.tool} on {call.server}?"), classes="title")
            yield Static(inert_content(f"{call.api_name} · arguments:"), classes="what")
            with VerticalScroll():
                yield Static(inert_content(arguments), id="arguments")
            with Horizontal():
                for key, label, decision in _CHOICES:
                    yield Button(
                        f"{label} ({key})",
                        id=decision,
                        variant="error" if decision == "deny" else "primary",
                        compact=True,
                    )

    def on_mount(self) -> None:
        self.query_one("#once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(str(event.button.id))

    def action_decide(self, decision: str) -> None:
        """Answer and close."""
        chosen: Decision = next((d for _, _, d in _CHOICES if d == decision), "deny")
        self.dismiss(chosen)
