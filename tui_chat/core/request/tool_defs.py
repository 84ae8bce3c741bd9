"""What tool definitions cost in a request."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.core.tokens import TokenCounter

TOOLS_PREAMBLE = 346
"""Tokens the API adds to the system prompt when a request has tools (Claude's tool-use
pricing table: 346 for ``auto`` tool choice on Claude 4 models)."""


def tools_tokens(tools: Sequence[Mapping[str, Any]], counter: TokenCounter) -> int:
    """What tool definitions cost in a request: their JSON, and the API's preamble for them."""
    if not tools:
        return 0
    return TOOLS_PREAMBLE + sum(counter.count(json.dumps(tool, sort_keys=True)) for tool in tools)
