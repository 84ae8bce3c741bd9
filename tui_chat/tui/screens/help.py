"""The help screen: every key binding of every part of the app, read from the BINDINGS."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


def _keys(binding: Binding) -> str:
    if binding.key_display:
        return binding.key_display
    return " / ".join(key.strip() for key in binding.key.split(","))


def binding_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(keys, description)]) for every part of the app."""
    from tui_chat.tui.app import ChatApp
    from tui_chat.tui.screens.context_preview import ContextPreviewScreen
    from tui_chat.tui.screens.inspector import InspectorScreen
    from tui_chat.tui.screens.main import MainScreen
    from tui_chat.tui.screens.search import SearchScreen
    from tui_chat.tui.screens.settings import SettingsScreen
    from tui_chat.tui.widgets.chat_pane import ChatPane
    from tui_chat.tui.widgets.composer import Composer
    from tui_chat.tui.widgets.conversation_list import ConversationList

    def rows(bindings: list[BindingType], *extra: tuple[str, str]) -> list[tuple[str, str]]:
        found = [
            (_keys(b), b.tooltip or b.description or b.action)
            for b in bindings
            if isinstance(b, Binding)
        ]
        return found + list(extra)

    return [
        (
            "Everywhere",
            rows(
                ChatApp.BINDINGS,
                (ChatApp.COMMAND_PALETTE_BINDING, "Command palette"),
                ("tab / shift+tab", "Move between panels"),
            ),
        ),
        ("Chat", rows(MainScreen.BINDINGS)),
        (
            "Composer",
            rows(
                Composer.BINDINGS,
                ("up / down", "Prompt history (first / last line)"),
                ("tab", "Go to the messages"),
            ),
        ),
        ("Messages (f5 or tab)", rows(ChatPane.BINDINGS)),
        (
            "Summary timeline (ctrl+t)",
            [("up / down", "Move between versions"), ("enter", "Inspect the version")],
        ),
        ("Summary inspector", rows(InspectorScreen.BINDINGS)),
        ("Conversation list (ctrl+b)", rows(ConversationList.BINDINGS, ("enter", "Open"))),
        ("Search (ctrl+f)", rows(SearchScreen.BINDINGS, ("enter", "Jump to the hit"))),
        ("Context preview (ctrl+o)", rows(ContextPreviewScreen.BINDINGS)),
        ("Settings (f3)", rows(SettingsScreen.BINDINGS)),
    ]


def render_section(title: str, entries: list[tuple[str, str]]) -> Content:
    """One section: a bold title, then ``keys  description`` lines."""
    width = max((len(keys) for keys, _ in entries), default=0)
    lines = [Content.styled(title, "bold $text-accent")]
    lines += [
        Content.assemble((f"{keys:<{width}}", "bold $text-warning"), "  ", description)
        for keys, description in entries
    ]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Every binding, grouped by where it applies; ``escape`` closes."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > #help {
        width: 96%;
        height: 94%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    HelpScreen #help-title { text-style: bold; margin-bottom: 1; }
    HelpScreen VerticalScroll { height: 1fr; }
    HelpScreen Grid {
        grid-size: 3;
        grid-gutter: 1 2;
        grid-rows: auto;
        height: auto;
    }
    HelpScreen Grid > Static { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1", "close", "Close")]

    def compose(self) -> ComposeResult:
        """Title and a grid of sections."""
        with Vertical(id="help"):
            yield Static(
                "tui-chat keys — everything is also in the command palette (ctrl+p). "
                "escape closes.",
                id="help-title",
                markup=False,
            )
            with VerticalScroll(), Grid():
                for title, entries in binding_sections():
                    yield Static(render_section(title, entries))

    def action_close(self) -> None:
        """Back to where the user was."""
        self.dismiss(None)
