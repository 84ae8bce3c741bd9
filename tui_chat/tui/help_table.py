"""What the help screen lists: its sections, read from the table of actions
(:mod:`tui_chat.tui.actions`), in order."""

from __future__ import annotations

from typing import Final

from tui_chat.tui.action_types import Section
from tui_chat.tui.actions import ACTIONS, KEYMAP, Key, main_keys

HELP_SECTIONS: Final[tuple[Section, ...]] = (
    Section("Everywhere", "app"),
    Section("Chat", "main"),
    Section("Composer", "composer"),
    Section("Messages (tab or {})", "chat", "focus_messages"),
    Section("Navigation mode ({}; i, enter, esc leave)", "navigation", "focus_messages"),
    Section("Summary timeline ({})", "timeline", "toggle_timeline"),
    Section("Summary inspector", "inspector"),
    Section("Conversation list ({})", "conversations", "toggle_conversations"),
    Section("Search ({})", "search", "search"),
    Section("Context preview ({})", "preview", "context_preview"),
    Section("Usage ({})", "usage", "usage"),
    Section("Settings ({})", "settings", "settings"),
    Section("Attach a file ({})", "picker", "attach_file"),
)
"""The parts of the app the help screen lists, in order."""


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(keys, description)]) for every part of the help screen."""
    sections = []
    for section in HELP_SECTIONS:
        rows = [
            (entry.shown, ACTIONS[entry.action].help_text)
            if isinstance(entry, Key)
            else (entry.keys, entry.text)
            for entry in KEYMAP[section.scope]
        ]
        title = section.title.format(main_keys(section.opened_by))
        sections.append((title, rows))
    return sections
