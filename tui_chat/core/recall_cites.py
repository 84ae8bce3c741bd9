"""Citations of recalled passages in a reply: which messages of the conversation it cites.

Recalled passages are sent as Claude's ``search_result`` blocks, one per day, each passage a
text block labelled ``#id role:`` (:func:`tui_chat.core.request.render.recall_blocks`). A reply
that uses them carries ``search_result_location`` citations on its text (Claude's "Search
results" docs, read 2026-11-26): ``source`` and ``title`` of the result, ``cited_text`` (the
full text of the cited blocks, so it opens with their labels), ``search_result_index``,
``start_block_index`` and ``end_block_index``. The cited messages are read from the labels of
``cited_text``; a ``source`` naming a message (``tui-chat://message/<id>``) is read too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["LOCATION", "MESSAGE_SOURCE", "block_marks", "cited_ids", "recalled_ids"]

LOCATION = "search_result_location"
"""The ``type`` of a citation of a search result."""

MESSAGE_SOURCE = "tui-chat://message/"
"""A ``source`` naming one message (followed by its id)."""

_LABEL = re.compile(r"(?:^|(?<=\s)|(?<=[.!?…)\]]))#(\d+)(?: \d+/\d+)? (?:user|assistant):")


def cited_ids(citation: Mapping[str, Any]) -> list[int]:
    """The messages one citation cites, in order (empty for another kind of citation)."""
    if citation.get("type") != LOCATION:
        return []
    found: list[int] = []
    source = str(citation.get("source") or "")
    if source.startswith(MESSAGE_SOURCE) and source[len(MESSAGE_SOURCE) :].isdigit():
        found.append(int(source[len(MESSAGE_SOURCE) :]))
    for match in _LABEL.finditer(str(citation.get("cited_text") or "")):
        if int(match.group(1)) not in found:
            found.append(int(match.group(1)))
    return found


def _citations(block: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if block.get("type") != "text":
        return []
    return [c for c in block.get("citations") or () if isinstance(c, Mapping)]


def block_marks(block: Mapping[str, Any]) -> list[str]:
    """The ``[#id]`` marks that follow one text block, one per message it cites."""
    marks: list[str] = []
    for citation in _citations(block):
        marks += [f"[#{i}]" for i in cited_ids(citation) if f"[#{i}]" not in marks]
    return marks


def recalled_ids(content: Iterable[Mapping[str, Any]]) -> list[int]:
    """The messages a reply cites from recall, in the order first cited."""
    found: list[int] = []
    for block in content:
        for citation in _citations(block):
            found += [i for i in cited_ids(citation) if i not in found]
    return found
