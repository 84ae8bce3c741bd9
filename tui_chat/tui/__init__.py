"""The full-screen Textual interface. Importing this package does not import Textual."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_chat.config import Config

__all__ = ["run_app"]


def run_app(
    config: Config, db_path: Path | None = None, conversation_ref: str | None = None
) -> int:
    """Run the TUI until the user quits.

    Args:
        config: The loaded configuration.
        db_path: Database file (``--db``); defaults to the config's.
        conversation_ref: Conversation to open (id, unique prefix or ``last``); ``None`` opens
            the last conversation, or a new one when there is none.

    Returns:
        The process exit code (1 when the conversation or the database cannot be opened).
    """
    from tui_chat.tui.app import ChatApp

    app = ChatApp(config, db_path, conversation_ref)
    app.run()
    return app.return_code or 0
