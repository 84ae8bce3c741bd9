"""Shared fixtures: the fake Anthropic server and an isolated environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fake_anthropic import fake_anthropic_server  # noqa: F401  (fixture)


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``TUI_CHAT_HOME`` at a fresh directory and clear every ``ANTHROPIC_*`` variable.

    Returns:
        The home directory (set ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL`` with
        ``monkeypatch`` or ``fake_anthropic.env()`` when a test needs them).
    """
    home = tmp_path / "tui-chat-home"
    home.mkdir()
    monkeypatch.setenv("TUI_CHAT_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    return home
