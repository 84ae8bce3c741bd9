"""What the engine needs to know from the outside: :class:`ServiceSettings`.

The outer layers (the CLI and the TUI) read the config file and the environment and resolve
paths; the engine only reads these values. :class:`tui_chat.config.Config` satisfies the
protocol as it is, so ``ChatService.open(Config(...))`` works without a conversion.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from tui_chat.core.tools import ServerSpec

__all__ = ["ModelOverrides", "ServiceSettings"]

ModelOverrides = Mapping[str, Mapping[str, float]]
"""Per-model overrides of ``context_window``, ``max_output`` and prices, by model id."""


class ServiceSettings(Protocol):
    """The settings a :class:`~tui_chat.engine.service.ChatService` runs with (read only)."""

    @property
    def model(self) -> str:
        """Model for new conversations."""

    @property
    def system_prompt(self) -> str:
        """System prompt for new conversations."""

    @property
    def base_url(self) -> str | None:
        """Anthropic-compatible endpoint; ``None`` for the default."""

    @property
    def api_key(self) -> str | None:
        """The API key, if any (never stored or printed)."""

    @property
    def timeout(self) -> float:
        """Seconds before a reply request is abandoned."""

    @property
    def max_retries(self) -> int:
        """SDK retries on 429/5xx/connection errors."""

    @property
    def db_path(self) -> Path:
        """The database file, already resolved by the caller."""

    @property
    def compaction(self) -> Mapping[str, object]:
        """Defaults for every conversation's compaction policy."""

    @property
    def models(self) -> ModelOverrides:
        """Per-model overrides of window, output limit and prices."""

    @property
    def mcp_servers(self) -> tuple[ServerSpec, ...]:
        """The configured MCP servers (``mcp.json``)."""

    @property
    def mcp_error(self) -> str | None:
        """Why ``mcp.json`` could not be used (its line named), if it could not."""
