"""Unit tests, one folder per layer of tui_chat (and the outer helpers)."""
