"""tui-chat test suite."""
