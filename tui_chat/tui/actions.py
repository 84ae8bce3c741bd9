"""Every user action of the TUI, in one table: the key bindings, the help screen and the
command palette are all read from here, so a key, a name or a description is written once.

:data:`ACTIONS` says what each action is called (footer label, help text, palette name and
help); :data:`KEYMAP` says which keys run it, part by part of the app (after Harlequin's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from textual.binding import Binding, BindingType

from tui_chat.tui.action_types import Action, Note, on_screen, part, scroll_action, version_action
from tui_chat.tui.tool_actions import DELETE_KEY, DELETE_MESSAGE, DELETE_SELECTED, PASTE, TOOLS


@dataclass(frozen=True, slots=True)
class Key:
    """Keys bound to an action of :data:`ACTIONS`.

    Attributes:
        keys: Comma-separated Textual key names.
        action: The action's id in :data:`ACTIONS`.
        key_display: How the help screen and footer show the keys (default: all of them).
    """

    keys: str
    action: str
    key_display: str | None = None
    command: bool = False
    """Only in the chat's navigation mode (``action_command``); otherwise the key is typed."""

    @property
    def shown(self) -> str:
        """The keys as the help screen shows them."""
        if self.key_display:
            return self.key_display
        return " / ".join(key.strip() for key in self.keys.split(","))

    def binding(self, priority: bool = False) -> Binding:
        """The Textual binding (``priority``: whatever the action says)."""
        action = ACTIONS[self.action]
        return Binding(
            self.keys,
            f"command({action.action!r})" if self.command else action.action,
            action.description,
            show=action.show,
            key_display=self.key_display,
            priority=priority or action.priority,
            tooltip=action.tooltip,
        )


ACTIONS: Final[dict[str, Action]] = {
    # -- the main screen, in the order of the command palette -------------------------------
    "new_conversation": Action(
        part("conversation.new"),
        "New",
        "New conversation",
        palette="New conversation",
        palette_help="Start a new conversation",
    ),
    "rename_conversation": Action(
        part("conversation.rename"),
        "Rename",
        "Rename conversation",
        show=False,
        priority=True,  # opens at once, so the title typed right after f2 reaches it
        palette="Rename conversation",
        palette_help="Give this conversation a title",
    ),
    "delete_conversation": Action(
        part("conversation.delete"),
        "Delete",
        palette="Delete conversation",
        palette_help="Delete this conversation (asks first)",
    ),
    "search": Action(
        part("view.search"),
        "Search",
        "Search all conversations",
        priority=True,  # opens at once, so the words typed right after ctrl+f reach it
        palette="Search",
        palette_help="Full-text search across every conversation",
    ),
    "compact": Action(
        part("summary.compact"),
        "Compact",
        "Compact now",
        palette="Compact now",
        palette_help="Summarise the older turns now",
    ),
    "pin_message": Action(
        part("messages.pin"),
        "Pin",
        palette="Pin message",
        palette_help="Always send the selected message verbatim",
    ),
    "unpin_message": Action(
        part("messages.unpin"),
        "Unpin",
        palette="Unpin message",
        palette_help="Stop pinning the selected message",
    ),
    "toggle_timeline": Action(
        part("view.toggle_timeline"),
        "Timeline",
        "Show/hide summary timeline",
        palette="Summary timeline",
        palette_help="Show or hide the summary versions",
    ),
    "inspect_summary": Action(
        part("summary.inspect"),
        "Inspect",
        "Inspect summary",
        show=False,
        palette="Inspect summary",
        palette_help="Full text, segments and diff of a version",
    ),
    "roll_back_summary": Action(
        part("summary.roll_back"),
        "Roll back",
        palette="Roll back summary",
        palette_help="Put the previous summary version in force",
    ),
    "regenerate_summary": Action(
        part("summary.regenerate"),
        "Regenerate",
        palette="Regenerate summary",
        palette_help="Summarise the same turns again",
    ),
    "context_preview": Action(
        part("view.context_preview"),
        "Context",
        "Context preview (next request)",
        palette="Context preview",
        palette_help="The exact request the next send makes",
    ),
    "export": Action(
        part("conversation.export"),
        "Export",
        "Export conversation",
        show=False,
        palette="Export conversation",
        palette_help="Write the conversation to Markdown, JSON or HTML",
    ),
    "settings": Action(
        part("view.settings"),
        "Settings",
        "Conversation settings",
        show=False,
        palette="Settings",
        palette_help="Model, preset, thresholds, compression rate",
    ),
    "retry": Action(
        part("messages.retry"),
        "Retry",
        "Retry the last reply",
        show=False,
        palette="Retry reply",
        palette_help="Ask again for the last reply",
    ),
    "cancel_reply": Action(
        part("messages.cancel_reply"),
        "Cancel reply",
        "Cancel the streaming reply",
        palette="Cancel reply",
        palette_help="Stop the streaming reply",
    ),
    "fork_conversation": Action(
        "message.fork",
        "Fork",
        "Fork at the selected message",
        show=False,
        palette="Fork conversation",
        palette_help="A new branch of the conversation from the selected message",
    ),
    "edit_message": Action(
        "message.edit",
        "Edit",
        "Edit the selected prompt (sending it makes a branch)",
        show=False,
        palette="Edit message",
        palette_help="Put the selected prompt in the composer; sending makes a branch",
    ),
    "compact_upto": Action(
        "message.compact_upto",
        "Compact to here",
        "Compact every turn up to the selected message",
        show=False,
        palette="Compact up to here",
        palette_help="A new version covering the turns up to the selected message",
    ),
    "attach_file": Action(
        part("drafting.attach_file"),
        "Attach",
        "Attach a file (image, PDF or text) to the next message",
        show=False,
        priority=True,
        palette="Attach file",
        palette_help="Attach an image, a PDF or a text file to the message being written",
    ),
    "paste_clipboard": PASTE,
    "detach_file": Action(
        part("drafting.detach_file"),
        "Remove file",
        "Remove the last file attached to the message being written",
        show=False,
        palette="Remove attached file",
        palette_help="Remove the last file attached to the message being written "
        "(backspace at the start of the composer)",
    ),
    "copy_code": Action(
        "message.copy_code",
        "Copy code",
        "Copy the next code block of the selected message",
        show=False,
        palette="Copy code block",
        palette_help="Copy a fenced code block of the selected message (again: the next one)",
    ),
    "previous_version": version_action(-1),
    "next_version": version_action(1),
    "tools": TOOLS,
    "delete_message": DELETE_MESSAGE,
    "dismiss_warnings": Action(
        part("view.dismiss_warnings"),
        "Hide warnings",
        show=False,
        palette="Hide warnings",
        palette_help="Hide the warnings under the gauge (a click on them does too)",
    ),
    "usage": Action(
        "app.usage",
        "Usage",
        "Usage: cost per day or month and model",
        show=False,
        palette="Usage and cost",
        palette_help="What the API cost per day or month and model, summaries included",
    ),
    "jump_cited": Action(
        "app.jump_cited",
        "Cited",
        show=False,
        palette="Go to cited message",
        palette_help="Select the next message the selected reply cites from recall (r)",
    ),
    "toggle_conversations": Action(
        part("view.toggle_conversations"), "Chats", "Show/hide conversations"
    ),
    # Priority: the keys typed right after it are commands, not text.
    "focus_messages": Action(
        part("view.focus_messages"), "Navigate", "Navigation mode", False, True
    ),
    # -- everywhere --------------------------------------------------------------------------
    "app.help": Action("help", "Help"),
    "app.quit": Action("quit", "Quit", priority=True),
    # -- the composer ------------------------------------------------------------------------
    "composer.submit": Action("submit", "Send"),  # run by the composer, in key order
    "composer.clear": Action("clear_text", "Clear", "Clear (up brings it back)", show=False),
    "composer.newline": Action("newline", "Newline"),
    "composer.page_up": scroll_action("up", "Page up", "Scroll the chat a page up"),
    "composer.page_down": scroll_action("down", "Page down", "Scroll the chat a page down"),
    "composer.top": scroll_action("top", "Top", "Jump to the chat's start"),
    "composer.bottom": scroll_action("end", "End", "Jump to the chat's end"),
    # -- the chat pane (messages) ------------------------------------------------------------
    "chat.previous": Action("select_previous", "Previous message", show=False),
    "chat.next": Action("select_next", "Next message", show=False),
    "chat.first": Action("select_first", "First message", show=False),
    "chat.last": Action("select_last", "Last message", show=False),
    "chat.copy": Action("message.copy", "Copy"),
    "chat.copy_markdown": Action(
        "range.copy_markdown", "Copy as Markdown", "Copy the range or message as Markdown"
    ),
    "chat.mark": Action(
        "range.mark", "Range", "Start a range here (moves extend it); again: drop it"
    ),
    "chat.extend_previous": Action(
        part("range.extend_previous"), "Extend up", "Extend the range upwards", False
    ),
    "chat.extend_next": Action(
        part("range.extend_next"), "Extend down", "Extend the range downwards", False
    ),
    "chat.toggle_pin": Action("pins.toggle", "Pin/unpin"),
    "chat.compose": Action(on_screen("view.focus_composer"), "Type", "Back to the composer"),
    "chat.commands": Action(
        on_screen("view.focus_messages"), "Commands", "Navigation mode: letters are commands"
    ),
    "chat.previous_panel": Action(
        on_screen("view.previous_panel"), "Chats", "The conversation list (opened if hidden)"
    ),
    "chat.edit": Action("message.edit", "Edit", "Edit this prompt (sending it branches)"),
    "chat.compact_upto": Action(
        "message.compact_upto", "Compact to here", "Compact every turn up to this message"
    ),
    "chat.copy_code": Action(
        "message.copy_code", "Copy code", "Copy the next fenced code block of this message"
    ),
    "chat.fork": Action("message.fork", "Fork", "Fork: a new branch from here"),
    "chat.delete": DELETE_SELECTED,
    "chat.delete_key": DELETE_KEY,
    "chat.thinking": Action(
        "reply.toggle_thinking", "Thinking", "Open or fold this reply's thinking"
    ),
    "chat.links": Action(
        "reply.copy_links", "Links", "Copy the web pages this reply cites or read"
    ),
    "chat.cited": Action(
        "reply.jump_cited", "Cited", "Go to a message this reply cites (the next at each press)"
    ),
    # -- the conversation list ---------------------------------------------------------------
    "conversations.new": Action("new", "New"),
    "conversations.rename": Action("rename", "Rename"),
    "conversations.delete": Action("delete", "Delete"),
    "conversations.archive": Action("archive", "Archive", "Archive or unarchive"),
    "conversations.archived": Action(
        "toggle_archived", "Archived", "Show/hide archived conversations"
    ),
    # -- modal screens -----------------------------------------------------------------------
    "close": Action("close", "Close"),
    "cancel": Action("cancel", "Cancel"),
    "inspector.activate": Action("activate", "Activate"),
    "inspector.regenerate": Action("regenerate", "Regenerate"),
    "inspector.text": Action("show_tab('text')", "Text", show=False),
    "inspector.segments": Action("show_tab('segments')", "Segments", show=False),
    "inspector.diff": Action("show_tab('diff')", "Diff", show=False),
    "inspector.identifiers": Action("show_tab('identifiers')", "Identifiers", show=False),
    "search.results": Action("focus_results", "Results", show=False),
    "usage.day": Action("per('day')", "Per day"),
    "usage.month": Action("per('month')", "Per month"),
    "preview.copy": Action("copy", "Copy JSON"),
    "preview.readable": Action("show_tab('readable')", "Readable"),
    "preview.json": Action("show_tab('json')", "JSON"),
    "preview.cache": Action("show_tab('cache')", "Cache"),
    "settings.save": Action("save", "Save", priority=True),
    "confirm.yes": Action("answer(True)", "Yes"),
    "confirm.no": Action("answer(False)", "No"),
}
"""Every action by id (main-screen actions by their own name, others ``part.name``)."""


KEYMAP: Final[dict[str, tuple[Key | Note, ...]]] = {
    "app": (
        Key("f1", "app.help"),
        Key("ctrl+q", "app.quit"),
        Note("ctrl+p", "Command palette"),
        Note("tab / shift+tab", "Move between panels"),
    ),
    "main": (
        Key("ctrl+n", "new_conversation"),
        Key("ctrl+b", "toggle_conversations"),
        Key("ctrl+t", "toggle_timeline"),
        Key("ctrl+f", "search"),
        Key("ctrl+g", "compact"),
        Key("ctrl+o", "context_preview"),
        Key("ctrl+s", "export"),
        Key("ctrl+r", "retry"),
        Key("escape", "cancel_reply"),
        Key("f2", "rename_conversation"),
        Key("f3", "settings"),
        Key("f4", "inspect_summary"),
        Key("f5", "focus_messages"),
        Key("ctrl+a", "attach_file"),
        Key("ctrl+v", "paste_clipboard"),
        Key("f8", "usage"),
        Key("f9", "tools"),
    ),
    "composer": (
        Key("enter", "composer.submit"),
        Key("ctrl+j,shift+enter,alt+enter", "composer.newline", key_display="ctrl+j"),
        Key("ctrl+l", "composer.clear"),
        Key("pageup", "composer.page_up"),
        Key("pagedown", "composer.page_down"),
        Key("ctrl+home", "composer.top"),
        Key("ctrl+end", "composer.bottom"),
        Note("up / down", "Prompt history (first / last line)"),
        Note("backspace", "At the start: remove the last attached file"),
        Note("tab", "Go to the messages"),
    ),
    "chat": (
        Key("up", "chat.previous"),
        Key("down", "chat.next"),
        Key("home", "chat.first"),
        Key("end", "chat.last"),
        Key("shift+up", "chat.extend_previous"),
        Key("shift+down", "chat.extend_next"),
        Key("delete", "chat.delete_key"),
        Key("enter,escape", "chat.compose"),
        Key("f5", "chat.commands"),
        Key("shift+tab", "chat.previous_panel"),
        Note("letters", "Typed into the composer (unless in navigation)"),
    ),
    "navigation": (
        Key("k", "chat.previous", command=True),
        Key("j", "chat.next", command=True),
        Key("g", "chat.first", command=True),
        Key("G", "chat.last", command=True),
        Key("c,y", "chat.copy", command=True),
        Key("m", "chat.copy_markdown", command=True),
        Key("v", "chat.mark", command=True),
        Key("p", "chat.toggle_pin", command=True),
        Key("e", "chat.edit", command=True),
        Key("s", "chat.compact_upto", command=True),
        Key("b", "chat.copy_code", command=True),
        Key("f", "chat.fork", command=True),
        Key("d", "chat.delete", command=True),
        Key("t", "chat.thinking", command=True),
        Key("u", "chat.links", command=True),
        Key("left_square_bracket", "previous_version", command=True, key_display="["),
        Key("right_square_bracket", "next_version", command=True, key_display="]"),
        Key("r", "chat.cited", command=True),
        Key("i", "chat.compose", command=True),
    ),
    "timeline": (
        Note("up / down", "Move between versions"),
        Note("enter", "Inspect the version"),
    ),
    "inspector": (
        Key("escape,q", "close"),
        Key("a", "inspector.activate"),
        Key("g", "inspector.regenerate"),
        Key("t", "inspector.text"),
        Key("s", "inspector.segments"),
        Key("d", "inspector.diff"),
        Key("i", "inspector.identifiers"),
    ),
    "conversations": (
        Key("n", "conversations.new", command=True),
        Key("r", "conversations.rename", command=True),
        Key("d", "conversations.delete", command=True),
        Key("delete", "conversations.delete"),
        Key("a", "conversations.archive", command=True),
        Key("i", "chat.compose", command=True),
        Key("f5", "chat.commands"),
        Key("f6", "conversations.archived"),
        Note("enter", "Open"),
        Note("letters", "Commands in navigation mode (f5 here), else text"),
    ),
    "search": (
        Key("escape", "close"),
        Key("down", "search.results"),
        Note("enter", "Jump to the hit"),
    ),
    "preview": (
        Key("escape,q", "close"),
        Key("c", "preview.copy"),
        Key("r", "preview.readable"),
        Key("j", "preview.json"),
        Key("k", "preview.cache"),
    ),
    "settings": (
        Key("escape", "cancel"),
        Key("ctrl+s", "settings.save"),
    ),
    "usage": (Key("escape,q", "close"), Key("d", "usage.day"), Key("m", "usage.month")),
    "help": (Key("escape,q,f1", "close"),),
    "prompt": (Key("escape", "cancel"),),
    "picker": (
        Key("escape", "cancel"),
        Note("enter", "Attach the typed path, or the file chosen in the tree"),
        Note("tab", "Browse the folder tree"),
    ),
    "confirm": (
        Key("y", "confirm.yes"),
        Key("n,escape", "confirm.no"),
    ),
}
"""The keys of each part of the app, in footer and help order."""


def bindings(scope: str, *, priority: bool = False) -> list[BindingType]:
    """The Textual ``BINDINGS`` of one part of the app (a :data:`KEYMAP` key).

    Args:
        scope: The part of the app.
        priority: Make every binding a priority one: it runs when its key arrives, before
            the next key is routed (the chat's keys move the focus and the selection).
    """
    return [entry.binding(priority) for entry in KEYMAP[scope] if isinstance(entry, Key)]


def main_keys(action_id: str) -> str:
    """The main-screen keys of an action ('' when it has none)."""
    keys = [k.shown for k in KEYMAP["main"] if isinstance(k, Key) and k.action == action_id]
    return keys[0] if keys else ""


def palette() -> tuple[tuple[str, str, str], ...]:
    """(palette name, action, help with the key) of every palette command."""
    entries = []
    for action_id, action in ACTIONS.items():
        if action.palette:
            keys = main_keys(action_id)
            help_text = f"{action.palette_help}  {keys}" if keys else action.palette_help
            entries.append((action.palette, action.action, help_text))
    return tuple(entries)
