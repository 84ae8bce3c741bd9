"""Tests of tui_chat.engine: the UI-free services over a real store."""
