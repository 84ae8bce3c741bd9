"""Thinking and Claude's web tools for the fake Anthropic server
(``tests/fakes/fake_anthropic.py``).

Modelled on Claude's documentation as read on 2026-11-26 (docs corpus: "Building with extended
thinking", "Adaptive thinking", "Preserved thinking", "Web search tool", "Web fetch tool") and
on the ``anthropic`` 2.14 SDK's types:

- ``thinking``: ``{"type": "enabled", "budget_tokens": N}`` needs ``1024 <= N < max_tokens``;
  ``{"type": "adaptive"}`` is refused (400) for a model whose ``GET /v1/models`` entry says
  adaptive thinking is not supported; ``display`` is ``summarized`` or ``omitted``. A reply to
  a thinking request opens with a ``thinking`` block (streamed as ``thinking_delta`` events,
  then one ``signature_delta``); with ``display: "omitted"`` its text is empty and only the
  signature comes. Its tokens count in ``output_tokens`` and in
  ``usage.output_tokens_details.thinking_tokens``.
- A ``thinking`` block sent back must carry the signature this server gave its text (a
  changed block is a 400), as the docs require blocks to be sent back unmodified.
- ``tools`` with ``web_search_20250305`` / ``web_fetch_20250910``, or the newer versions of
  the Tool reference (platform.claude.com/docs/agents-and-tools/tool-use/tool-reference, read
  2026-12-02: ``web_search_20260209`` / ``_20260318``, ``web_fetch_20260209`` / ``_20260309`` /
  ``_20260318``), which add dynamic filtering: refused (400) for a model whose
  ``GET /v1/models`` entry says ``capabilities.code_execution`` is not supported (the web
  search page: Google-managed Vertex has only the basic version). ``allowed_domains`` and
  ``blocked_domains`` together are a 400; ``max_uses`` must be at least 1. A reply searches
  when the last user text asks to search or look something up, and fetches when it holds a
  URL: a ``server_tool_use`` block (its input streamed as ``input_json_delta``), then the
  result block in the same message (``web_search_tool_result`` with ``web_search_result``
  items, or ``web_fetch_tool_result`` with a ``web_fetch_result``), then text whose blocks
  carry ``citations`` (``web_search_result_location``; streamed as ``citations_delta``).
  ``usage.server_tool_use`` counts the requests. A reply scripted with ``stop_reason:
  "pause_turn"`` is continued by a request ending with that assistant message, which this
  server answers with text only.

- Text between tool calls on the models whose pages say it comes back in ``thinking`` blocks
  ("What's new in Claude Sonnet 5.5" and "… Opus 5.5", platform.claude.com, read
  2026-12-02: Opus 5.5 and Sonnet 5.5): before each tool call the reply holds a ``thinking``
  block with the short progress note, its text empty at the default ``display``
  (``omitted`` on these models) and returned with ``display: "summarized"``
  (:func:`progress_note`).
- Preserved thinking (platform.claude.com/docs/build-with-claude/preserved-thinking, read
  2026-12-02): a thinking block is bound to the model and to its prefix (the request's
  ``system``, ``tools`` and every message before it). Sent back after a changed prefix it is
  a 400 (:func:`check_bindings`; the default for accounts from 2026-08-31); sent to another
  model it is dropped without an error. With thinking on, on models before preserved
  thinking, the assistant message whose tool calls the request answers must start with its
  thinking block (extended thinking, tool use: the blocks are passed back unmodified), else a
  400.

This server's own choices, not the docs': when it searches or fetches (the words above),
the results (three pages on fixed domains, filtered by the domain lists), the signature
format (an HMAC of the text, as for compaction blocks), and the thinking text
(``"Considering: "`` and the prompt's start).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "TOOL_TEXT_AS_THINKING",
    "binding",
    "block_events",
    "check_bindings",
    "check_reply_request",
    "progress_note",
    "thinking_for",
    "web_blocks",
]

TOOL_TEXT_AS_THINKING = frozenset({"claude-opus-5-5", "claude-sonnet-5-5"})
"""The models that return text between tool calls in thinking blocks."""
PRESERVED_THINKING = frozenset(
    {"claude-fable-5-1", "claude-fable-5-2", "claude-opus-5-5", "claude-sonnet-5-5"}
)
"""Models with preserved thinking (from Fable 5.1; the 5.5 pages): a block they cannot use is
dropped or refused by its prefix check, so this server does not require the answered call's
message to start with one there (it does on earlier models)."""


def _base(model: str) -> str:
    return re.sub(r"-\d{8}$", "", model.strip().lower())


def progress_note(body: dict[str, Any], note: str, sign: Callable[[str], str]) -> dict[str, Any]:
    """The thinking block holding the text a tool-text-as-thinking model writes before a tool
    call: empty unless the request's ``display`` is ``summarized``."""
    thinking = body.get("thinking")
    shown = isinstance(thinking, dict) and thinking.get("display") == "summarized"
    text = note if shown else ""
    return {"type": "thinking", "thinking": text, "signature": sign(text)}


def _prefix(body: dict[str, Any], upto: int) -> str:
    def bare(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: bare(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [bare(v) for v in value]
        return value

    prefix = {
        "system": bare(body.get("system")),
        "tools": bare(body.get("tools")),
        "messages": bare(list(body.get("messages") or [])[:upto]),
    }
    return hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()


def binding(body: dict[str, Any]) -> tuple[str, str]:
    """What a reply's thinking blocks are bound to: the model and the prefix before it."""
    return _base(str(body.get("model", ""))), _prefix(body, len(body.get("messages") or []))


def check_bindings(body: dict[str, Any], bound: dict[str, list[tuple[str, str]]]) -> dict[str, Any]:
    """Refuse a thinking block sent back after a changed prefix; drop one of another model.

    Args:
        body: The request.
        bound: What each signature this server gave is bound to (:func:`binding`; a text
            given twice has one signature, so a list).

    Returns:
        ``body``, without the blocks of another model (a copy when any was dropped).

    Raises:
        ReplyRequestError: a block whose prefix changed (and every later one is invalid), or
            thinking on and the answered calls' message without its thinking block.
    """
    model = _base(str(body.get("model", "")))
    messages = list(body.get("messages") or [])
    dropped = False
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        kept = []
        for j, block in enumerate(content):
            known = bound.get(str(block.get("signature"))) if isinstance(block, dict) else None
            if not known or block.get("type") != "thinking":
                kept.append(block)
                continue
            if all(m != model for m, _ in known):
                dropped = True  # a model that cannot read it: dropped without an error
                continue
            if (model, _prefix(body, i)) not in known:
                raise ReplyRequestError(
                    f"messages.{i}.content.{j}: the thinking block is bound to a different "
                    "conversation: the system prompt, tools or messages before it changed"
                )
            kept.append(block)
        if len(kept) != len(content):
            messages[i] = {**message, "content": kept}
    thinking = body.get("thinking")
    if (
        isinstance(thinking, dict)
        and model not in PRESERVED_THINKING  # those drop or refuse blocks by their prefix
        and thinking.get("type") in ("enabled", "adaptive")
        and len(messages) >= 2
        and _answers_calls(messages[-1])
        and isinstance(messages[-2].get("content"), list)
        and (messages[-2]["content"] or [{}])[0].get("type")
        not in ("thinking", "redacted_thinking")
    ):
        raise ReplyRequestError(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            "`redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block"
        )
    return {**body, "messages": messages} if dropped else body


def _answers_calls(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


_SEARCH_WORDS = re.compile(r"\b(search|look up)\b", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s)>\]]+")
RESULT_DOMAINS = {
    "docs.python.org": "documentation",
    "en.wikipedia.org": "Wikipedia",
    "example.com": "a guide",
    "news.example.org": "news",
}
"""The domains the fake search finds pages on, in order (three are returned), and what the
page title calls the site."""


class ReplyRequestError(ValueError):
    """A thinking or tools parameter the API would refuse (the message is the API's kind)."""


NEWER_TOOLS = frozenset(
    {
        "web_search_20260209",
        "web_search_20260318",
        "web_fetch_20260209",
        "web_fetch_20260309",
        "web_fetch_20260318",
    }
)
"""The web tool versions with dynamic filtering."""


def check_reply_request(
    body: dict[str, Any],
    adaptive_ok: Callable[[str], bool],
    sign: Callable[[str], str],
    newest_tools_ok: Callable[[str], bool] = lambda _model: True,
) -> None:
    """Refuse what the docs say the API refuses about thinking and the web tools.

    Raises:
        ReplyRequestError: With the message of the 400.
    """
    thinking = body.get("thinking")
    if thinking is not None:
        if not isinstance(thinking, dict):
            raise ReplyRequestError("thinking: Input should be an object")
        kind = thinking.get("type")
        if thinking.get("display") not in (None, "summarized", "omitted"):
            raise ReplyRequestError("thinking.display: Input should be 'summarized' or 'omitted'")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                raise ReplyRequestError("thinking.budget_tokens: must be at least 1024")
            if budget >= int(body.get("max_tokens") or 0):
                raise ReplyRequestError(
                    "`max_tokens` must be greater than `thinking.budget_tokens`"
                )
        elif kind == "adaptive":
            if not adaptive_ok(str(body.get("model", ""))):
                raise ReplyRequestError(
                    f"thinking.type: adaptive thinking is not supported on {body.get('model')}; "
                    "use type 'enabled' with budget_tokens"
                )
        elif kind != "disabled":
            raise ReplyRequestError(
                "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'"
            )
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or not str(tool.get("type", "")).startswith("web_"):
            continue
        if tool.get("type") in NEWER_TOOLS and not newest_tools_ok(str(body.get("model", ""))):
            raise ReplyRequestError(
                f"tools.{i}.type: '{tool.get('type')}' is not supported on {body.get('model')}; "
                "use 'web_search_20250305' or 'web_fetch_20250910'"
            )
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            raise ReplyRequestError(
                f"tools.{i}: allowed_domains and blocked_domains cannot be used together"
            )
        uses = tool.get("max_uses")
        if uses is not None and (not isinstance(uses, int) or uses < 1):
            raise ReplyRequestError(f"tools.{i}.max_uses: must be at least 1")
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if (
                isinstance(block, dict)
                and block.get("type") == "thinking"
                and block.get("signature") != sign(str(block.get("thinking") or ""))
            ):
                raise ReplyRequestError(
                    f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                )


def thinking_for(body: dict[str, Any], prompt: str, scripted: str | None) -> str | None:
    """The thinking text of a reply (``""``: omitted; ``None``: no thinking block)."""
    if _continues(body):
        return scripted
    thinking = body.get("thinking")
    asked = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if not asked and scripted is None:
        return None
    if asked and thinking.get("display") == "omitted":
        return ""
    return scripted if scripted is not None else f"Considering: {prompt[:100].strip()}"


def _continues(body: dict[str, Any]) -> bool:
    """A request that continues a paused turn (it ends with the assistant's message): the
    searches were made; the continuation only writes."""
    messages = body.get("messages") or []
    return (
        bool(messages)
        and isinstance(messages[-1], dict)
        and messages[-1].get("role") == "assistant"
    )


def _tool(body: dict[str, Any], name: str) -> dict[str, Any] | None:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == name:
            return tool
    return None


def _allowed(tool: dict[str, Any], domain: str) -> bool:
    allowed = tool.get("allowed_domains") or []
    blocked = tool.get("blocked_domains") or []
    if allowed:
        return any(domain == d or domain.endswith("." + d) for d in allowed)
    return not any(domain == d or domain.endswith("." + d) for d in blocked)


def web_blocks(
    body: dict[str, Any], prompt: str, next_id: Callable[[str], str], sign: Callable[[str], str]
) -> tuple[list[dict[str, Any]], dict[str, int]] | None:
    """The server tool blocks and cited text of a reply that searches or fetches.

    Returns:
        ``(blocks, counts)``: the content after any thinking block, and
        ``{"web_search_requests": n, "web_fetch_requests": m}``; ``None`` when the reply
        uses no web tool.
    """
    if _continues(body):
        return None
    blocks: list[dict[str, Any]] = []
    counts = {"web_search_requests": 0, "web_fetch_requests": 0}
    search, fetch = _tool(body, "web_search"), _tool(body, "web_fetch")
    url = _URL.search(prompt)
    notes = _base(str(body.get("model", ""))) in TOOL_TEXT_AS_THINKING
    if fetch is not None and url is not None:
        address = url.group(0).rstrip(".,;")
        use_id = next_id("srvtoolu")
        if notes:
            blocks.append(progress_note(body, f"Reading {address}.", sign))
        blocks.append(
            {
                "type": "server_tool_use",
                "id": use_id,
                "name": "web_fetch",
                "input": {"url": address},
            }
        )
        host = re.sub(r"^https?://(www\.)?", "", address).split("/")[0]
        if _allowed(fetch, host):
            content: dict[str, Any] = {
                "type": "web_fetch_result",
                "url": address,
                "retrieved_at": "2026-11-26T12:00:00Z",
                "content": {
                    "type": "document",
                    "source": {
                        "type": "text",
                        "media_type": "text/plain",
                        "data": f"Page {address}",
                    },
                    "title": f"Page at {host}",
                },
            }
        else:
            content = {"type": "web_fetch_tool_error", "error_code": "url_not_allowed"}
        blocks.append({"type": "web_fetch_tool_result", "tool_use_id": use_id, "content": content})
        counts["web_fetch_requests"] = 1
        blocks.append({"type": "text", "text": f"I read {address}."})
    if search is not None and _SEARCH_WORDS.search(prompt):
        query = _SEARCH_WORDS.split(prompt, maxsplit=1)[-1].strip(" :?.!") or prompt[:60]
        query = re.sub(r"^(the web )?(for|about)\s+", "", query)[:80]
        use_id = next_id("srvtoolu")
        if notes:
            blocks.append(progress_note(body, f"Searching the web for {query}.", sign))
        blocks.append(
            {
                "type": "server_tool_use",
                "id": use_id,
                "name": "web_search",
                "input": {"query": query},
            }
        )
        slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-") or "page"
        pages = [
            {
                "type": "web_search_result",
                "url": f"https://{domain}/{slug}",
                "title": f"{query.capitalize()} – {site}",
                "encrypted_content": sign(f"{domain}/{slug}"),
                "page_age": "November 20, 2026",
            }
            for domain, site in RESULT_DOMAINS.items()
            if _allowed(search, domain)
        ][:3]
        blocks.append({"type": "web_search_tool_result", "tool_use_id": use_id, "content": pages})
        counts["web_search_requests"] = 1
        if pages:
            blocks.append({"type": "text", "text": "Here is what I found: "})
            for page in pages[:2]:
                cited = f"{page['title']} explains {query}."
                blocks.append(
                    {
                        "type": "text",
                        "text": f"{page['title']} covers {query}. ",
                        "citations": [
                            {
                                "type": "web_search_result_location",
                                "url": page["url"],
                                "title": page["title"],
                                "encrypted_index": sign(cited),
                                "cited_text": cited,
                            }
                        ],
                    }
                )
            blocks.append({"type": "text", "text": "That is all."})
        else:
            blocks.append({"type": "text", "text": "The search found nothing."})
    if not blocks:
        return None
    return blocks, counts


def block_events(
    index: int, block: dict[str, Any], pieces: Callable[[str], list[str]]
) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of one block, as the API streams it."""

    def start(content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": content},
        )

    def delta(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": payload},
        )

    stop = ("content_block_stop", {"type": "content_block_stop", "index": index})
    kind = block["type"]
    if kind == "thinking":
        return [
            start({"type": "thinking", "thinking": "", "signature": ""}),
            *(
                delta({"type": "thinking_delta", "thinking": p})
                for p in (pieces(block["thinking"]) if block["thinking"] else [])
            ),
            delta({"type": "signature_delta", "signature": block["signature"]}),
            stop,
        ]
    if kind == "server_tool_use":
        payload = json.dumps(block["input"])
        return [
            start({**block, "input": {}}),
            *(
                delta({"type": "input_json_delta", "partial_json": payload[i : i + 12]})
                for i in range(0, len(payload), 12)
            ),
            stop,
        ]
    if kind == "text":
        events = [start({"type": "text", "text": ""})]
        events += [
            delta({"type": "citations_delta", "citation": c}) for c in block.get("citations") or []
        ]
        events += [delta({"type": "text_delta", "text": p}) for p in pieces(block["text"])]
        return [*events, stop]
    return [start(block), stop]  # a result block arrives whole
