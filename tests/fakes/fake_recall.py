"""Claude's ``search_result`` blocks for the fake Anthropic server
(``tests/fakes/fake_anthropic.py``).

Modelled on Claude's documentation, "Search results" (docs corpus, the English page of
docs.anthropic.com/en/docs/build-with-claude/search-results, read 2026-11-26) and the
``anthropic`` 2.14 SDK's types (``SearchResultBlockParam``, ``CitationsSearchResultLocation``):

- A ``search_result`` block may be top-level content of a user message or inside a
  ``tool_result``'s content. It needs ``source`` (a string), ``title`` (a string) and
  ``content``: a list of text blocks with non-empty ``text``; ``citations`` is optional,
  ``{"enabled": bool}``; ``cache_control`` is optional. Anything else is a 400, and so is a
  request that mixes results with citations enabled and disabled (they are all or none).
- A reply that uses them carries ``citations`` on its text: ``search_result_location`` with
  the result's ``source`` and ``title``, ``cited_text`` (the full text of the cited blocks),
  ``search_result_index`` (0-based among all the request's search results, in order across
  messages and tool results) and ``start_block_index`` / ``end_block_index`` (exclusive) into
  its ``content``. Streamed, each citation comes as a ``citations_delta`` before the text.

This server's own choice, not the docs': it cites only when the last user text asks to
``remember`` or ``recall`` something and the request holds search results with citations
enabled; it then cites the (at most two) passages sharing the most words with that text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

try:
    from tests.fakes.fake_web import ReplyRequestError
except ImportError:  # run as a script: tests/ is on sys.path
    from fake_web import ReplyRequestError  # type: ignore[no-redef]

__all__ = ["SearchResultError", "check_search_results", "recall_reply"]

_ASKS = re.compile(r"\b(remember|recall)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]{3,}")
_LABEL = re.compile(r"^(?:\[[^\]\n]*\]\s*)?#\d+(?: \d+/\d+)? (?:user|assistant): ")


class SearchResultError(ReplyRequestError):
    """A ``search_result`` block the API would refuse (the message is the 400's)."""


def _results(body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every search_result-typed block with where it is, in the order the docs index them;
    a search_result in an assistant message or the system is an error."""
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "search_result":
                if message.get("role") != "user":
                    raise SearchResultError(
                        f"{where}: search_result blocks are only allowed in user messages"
                    )
                yield where, block
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                for k, inner in enumerate(block["content"]):
                    if isinstance(inner, dict) and inner.get("type") == "search_result":
                        yield f"{where}.content.{k}", inner


def check_search_results(body: dict[str, Any]) -> None:
    """Refuse the ``search_result`` blocks the API would refuse.

    Raises:
        SearchResultError: With the message of the 400.
    """
    enabled: set[bool] = set()
    for where, block in _results(body):
        for field in ("source", "title"):
            if not isinstance(block.get(field), str):
                raise SearchResultError(f"{where}.{field}: Field required (a string)")
        content = block.get("content")
        if not isinstance(content, list) or not content:
            raise SearchResultError(f"{where}.content: a non-empty list of text blocks")
        for k, inner in enumerate(content):
            if not isinstance(inner, dict) or inner.get("type") != "text":
                raise SearchResultError(f"{where}.content.{k}: only text blocks are allowed")
            if not isinstance(inner.get("text"), str) or not inner["text"]:
                raise SearchResultError(
                    f"{where}.content.{k}.text: text content blocks must be non-empty"
                )
        citations = block.get("citations", {"enabled": False})
        if not isinstance(citations, dict) or not isinstance(citations.get("enabled"), bool):
            raise SearchResultError(f"{where}.citations: expected {{'enabled': bool}}")
        enabled.add(citations["enabled"])
    if len(enabled) > 1:
        raise SearchResultError(
            "search_result citations must be enabled or disabled for all search results"
        )


def recall_reply(body: dict[str, Any], prompt: str) -> list[dict[str, Any]] | None:
    """The text blocks of a reply citing the request's search results, or ``None`` when the
    prompt does not ask to remember or the request has no citable search result."""
    if not _ASKS.search(prompt):
        return None
    asked = set(_WORD.findall(prompt.lower()))
    passages: list[tuple[int, int, int, dict[str, Any]]] = []
    for index, (_, block) in enumerate(_results(body)):
        if not (block.get("citations") or {}).get("enabled"):
            continue
        for number, inner in enumerate(block["content"]):
            shared = len(asked & set(_WORD.findall(str(inner["text"]).lower())))
            passages.append((-shared, index, number, block))
    if not passages:
        return None
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "From what was said before: "}]
    for _, index, number, block in sorted(passages, key=lambda p: p[:3])[:2]:
        cited = str(block["content"][number]["text"])
        quote = " ".join(_LABEL.sub("", cited).split()[:8]).rstrip(".,;:")
        blocks.append(
            {
                "type": "text",
                "text": f"{quote}. ",
                "citations": [
                    {
                        "type": "search_result_location",
                        "source": block["source"],
                        "title": block["title"],
                        "cited_text": cited,
                        "search_result_index": index,
                        "start_block_index": number,
                        "end_block_index": number + 1,
                    }
                ],
            }
        )
    blocks.append({"type": "text", "text": "That is what I recall."})
    return blocks
