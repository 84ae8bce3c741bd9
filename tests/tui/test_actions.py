"""Typed actions: every key binding, palette entry and help line of ``tui/actions.py``
resolves to a callable ``action_*`` method of the class that carries it.

An action named by a string no class defines would do nothing when its key is pressed; this
test names the class of each part of the app and resolves every string against it.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from textual.actions import parse

from tui_chat.tui.actions import ACTIONS, KEYMAP, Key, palette
from tui_chat.tui.app import ChatApp
from tui_chat.tui.help_table import help_sections
from tui_chat.tui.screens.branching import Branches
from tui_chat.tui.screens.chat_view import ChatView
from tui_chat.tui.screens.context_preview import ContextPreviewScreen
from tui_chat.tui.screens.conversation_commands import ConversationCommands
from tui_chat.tui.screens.drafting import Drafting
from tui_chat.tui.screens.exchange import Exchange
from tui_chat.tui.screens.file_picker import FilePicker
from tui_chat.tui.screens.help import HelpScreen
from tui_chat.tui.screens.inspector import InspectorScreen
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.prompt import Confirm, TextPrompt
from tui_chat.tui.screens.reply_flow import ReplyFlow
from tui_chat.tui.screens.search import SearchScreen
from tui_chat.tui.screens.settings import SettingsScreen
from tui_chat.tui.screens.summary_commands import SummaryCommands
from tui_chat.tui.screens.usage import UsageScreen
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList
from tui_chat.tui.widgets.message_actions import MessageActions
from tui_chat.tui.widgets.message_pins import MessagePins
from tui_chat.tui.widgets.message_range import MessageRange
from tui_chat.tui.widgets.pages import MessageSource
from tui_chat.tui.widgets.reply_keys import ReplyKeys
from tui_chat.tui.widgets.summary_timeline import SummaryTimeline

OWNERS: dict[str, tuple[type[Any], type[Any]]] = {
    "app": (ChatApp, MainScreen),
    "main": (MainScreen, MainScreen),
    "composer": (Composer, MainScreen),
    "chat": (ChatPane, MainScreen),
    "navigation": (ChatPane, MainScreen),
    "conversations": (ConversationList, MainScreen),
    "timeline": (SummaryTimeline, MainScreen),
    "inspector": (InspectorScreen, InspectorScreen),
    "search": (SearchScreen, SearchScreen),
    "preview": (ContextPreviewScreen, ContextPreviewScreen),
    "settings": (SettingsScreen, SettingsScreen),
    "help": (HelpScreen, HelpScreen),
    "usage": (UsageScreen, UsageScreen),
    "prompt": (TextPrompt, TextPrompt),
    "picker": (FilePicker, FilePicker),
    "confirm": (Confirm, Confirm),
}
"""The class whose ``BINDINGS`` hold each part's keys, and the screen it lives on."""


PARTS: dict[str, type[Any]] = {
    "message": MessageActions,
    "range": MessageRange,
    "reply": ReplyKeys,
    "pins": MessagePins,
}
"""The chat pane's parts by action namespace: its letters (``command('message.edit')``) and
the palette (``message.fork``) run their actions."""


SCREEN_PARTS: dict[str, type[Any]] = {
    "replies": ReplyFlow,
    "drafting": Drafting,
    "branches": Branches,
    "messages": Exchange,
    "view": ChatView,
    "conversation": ConversationCommands,
    "summary": SummaryCommands,
}
"""The chat screen's parts by action namespace: its keys and the palette
(``part('drafting.attach_file')``) run their actions."""


def resolve(action: str, owner: type[Any], screen: type[Any]) -> Any:
    """The method a Textual action string runs on ``owner`` (``command(…)`` and ``part(…)``
    unwrapped: a part's action is looked up on the class of the part of that name)."""
    namespace, name, params = parse(action)
    if name == "command" and not namespace:
        assert callable(getattr(owner, "action_command", None)), owner
        assert len(params) == 1 and isinstance(params[0], str)
        return resolve(params[0], owner, screen)
    if name == "part" and namespace in ("", "screen"):
        target = screen if namespace else owner
        assert callable(getattr(target, "action_part", None)), target
        assert len(params) == 1 and isinstance(params[0], str)
        part_namespace, part_name, _ = parse(params[0])
        parts = SCREEN_PARTS if issubclass(target, MainScreen) else PARTS
        return getattr(parts.get(part_namespace), f"action_{part_name}", None)
    target = {"": owner, "screen": screen, "app": ChatApp, **PARTS}[namespace]
    return getattr(target, f"action_{name}", None)


def test_every_part_of_the_keymap_has_an_owner() -> None:
    assert set(KEYMAP) == set(OWNERS)


@pytest.mark.parametrize("scope", sorted(KEYMAP))
def test_every_binding_resolves_to_a_callable(scope: str) -> None:
    owner, screen = OWNERS[scope]
    keys = [entry for entry in KEYMAP[scope] if isinstance(entry, Key)]
    for key in keys:
        binding = key.binding()
        assert any(b.key == binding.key for b in owner.BINDINGS), (scope, key.keys, owner)
        method = resolve(binding.action, owner, screen)
        assert callable(method), f"{scope}: {key.keys} runs {binding.action!r}, not defined"


def test_every_palette_entry_resolves_to_a_main_screen_action() -> None:
    for name, action, _help in palette():
        assert callable(resolve(action, MainScreen, MainScreen)), name


def test_every_help_line_names_a_bound_action() -> None:
    described = {action.help_text for action in ACTIONS.values()}
    notes = {entry.text for part in KEYMAP.values() for entry in part if not isinstance(entry, Key)}
    for title, rows in help_sections():
        for keys, text in rows:
            assert text in described or text in notes, (title, keys)


def test_the_chat_pane_holds_the_parts_named_here() -> None:
    pane = ChatPane(source=cast(MessageSource, object()))
    assert {name: type(part) for name, part in pane.parts.items()} == PARTS


def test_the_chat_screen_holds_the_parts_named_here() -> None:
    assert {name: type(part) for name, part in MainScreen().parts.items()} == SCREEN_PARTS


def test_a_misspelt_action_is_caught() -> None:
    assert resolve("part('drafting.no_such')", MainScreen, MainScreen) is None
    assert resolve("part('nowhere.attach_file')", MainScreen, MainScreen) is None
    assert resolve("screen.part('view.no_such')", Composer, MainScreen) is None
    assert resolve("screen.no_such_action", ChatPane, MainScreen) is None
    assert resolve("command('no_such')", ChatPane, MainScreen) is None
    assert resolve("command('message.no_such')", ChatPane, MainScreen) is None
