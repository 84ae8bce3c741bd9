"""Where tui-chat keeps its files.

``TUI_CHAT_HOME`` puts the database and the config under one folder (tests use it); otherwise
the platform's user data and config directories are used. Directories are created 0700.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "tui-chat"


def _home() -> Path | None:
    value = os.environ.get("TUI_CHAT_HOME")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The directory holding the database."""
    home = _home()
    if home is not None:
        return home / "data"
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def config_dir() -> Path:
    """The directory holding ``config.toml``."""
    home = _home()
    if home is not None:
        return home / "config"
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False)


def default_db_path() -> Path:
    """The default database file."""
    return data_dir() / "tui-chat.db"


def config_path() -> Path:
    """The config file (may not exist)."""
    return config_dir() / "config.toml"


def log_path() -> Path:
    """The log file: warnings (a malformed block from the endpoint, clamped usage figures),
    never printed over the TUI. Made only when there is something to log."""
    home = _home()
    if home is not None:
        return home / "state" / "tui-chat.log"
    from platformdirs import user_log_path

    return user_log_path(APP_NAME, appauthor=False) / "tui-chat.log"


def mcp_path(config: Path | None = None) -> Path:
    """``mcp.json``, beside the config file (may not exist)."""
    return (config or config_path()).parent / "mcp.json"
