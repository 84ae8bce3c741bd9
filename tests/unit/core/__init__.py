"""Tests of tui_chat.core: the pure domain, no I/O."""
