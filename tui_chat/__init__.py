"""tui-chat: a keyboard-driven terminal chat client for Claude with open context management."""

__version__ = "0.1.0"
