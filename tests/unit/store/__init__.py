"""Tests of tui_chat.store: SQLite, migrations, repositories."""
