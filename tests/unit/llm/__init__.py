"""Tests of tui_chat.llm: the client through the real SDK and the fake server."""
