"""What a reply may use beyond the conversation: thinking, effort and Claude's web tools.

The request keys here follow Claude's documentation as read on 2026-11-26 (docs corpus:
"Building with extended thinking" and "Adaptive thinking", platform.claude.com/docs
build-with-claude/extended-thinking and …/adaptive-thinking; "Preserved thinking"; "Web
search tool" and "Web fetch tool", …/tool-use/web-search-tool and …/web-fetch-tool; the
SDK's ``ThinkingConfigAdaptiveParam``, ``WebSearchTool20250305Param`` and
``WebFetchTool20250910Param`` of anthropic 2.14):

- ``thinking: {"type": "adaptive", "display": …}`` on models that support adaptive thinking
  (the endpoint's ``capabilities.thinking.types.adaptive``, or the table below); elsewhere the
  budget form ``{"type": "enabled", "budget_tokens": N, "display": …}`` with ``1024 <= N <
  max_tokens``. ``display`` is always sent, because its default depends on the model (newer
  models omit the thinking text unless asked for ``summarized``).
- ``output_config: {"effort": …}`` only when the conversation sets an effort.
- ``tools``: ``web_search_20260318`` / ``web_fetch_20260318``, the newest versions (Tool
  reference, platform.claude.com/docs/agents-and-tools/tool-use/tool-reference, read
  2026-12-02: web search 20260318, 20260209, 20250305; web fetch 20260318, 20260309,
  20260209, 20250910; no beta header), where the endpoint's ``GET /v1/models`` says the model
  has what they add: ``capabilities.code_execution`` (SDK 2.15 ``ModelCapabilities``: code the
  model runs can call the request's other tools, "as in … dynamic filtering for web search
  and web fetch"; the web search tool page: versions from 20260209 on add dynamic filtering,
  which some platforms lack). Elsewhere, and where the endpoint said nothing, the basic
  ``web_search_20250305`` / ``web_fetch_20250910``. Each with ``max_uses`` and either
  ``allowed_domains`` or ``blocked_domains`` (never both).
- ``speed: "fast"`` when the conversation turns fast mode on and the model has it (Claude's
  fast-mode page, build-with-claude/fast-mode, English copy of 2026-11: Fable 5.2, Opus 5.5,
  a research preview on Opus 5); the reply's ``usage.speed`` prices it.

Thinking is off unless a conversation turns it on: the docs make no default for models where
thinking is optional (newer models that think by default think whatever is sent).

Text between tool calls: on Opus 5.5 and Sonnet 5.5 it comes back in ``thinking`` blocks,
"whose text is empty with the default display setting"; an application streaming it "goes
quiet between tool calls until it sets a display value that returns the text" ("What's new
in Claude Opus 5.5" and "… Sonnet 5.5", platform.claude.com/docs/…/whats-new-*, read
2026-12-02). So on these models a request with tools (the web tools or MCP servers') and
thinking off asks ``thinking: {"type": "adaptive", "display": "summarized"}`` — the same
thinking as omitting the field (adaptive is their default, "or send the equivalent
``{"type": "adaptive"}``"), with the display that returns the text (SDK 2.15: ``display`` is
``summarized`` or ``omitted``). A conversation whose ``thinking_display`` is ``omitted`` asks
otherwise: nothing is sent and the text stays empty (:func:`tool_text_as_thinking`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tui_chat.core.policy import Policy

__all__ = [
    "MIN_THINKING_BUDGET",
    "REPLY_KEYS",
    "ReplyOptions",
    "describe",
    "reply_options",
    "thinking_kind",
    "tool_text_as_thinking",
]

MIN_THINKING_BUDGET = 1_024
"""The least ``budget_tokens`` the API accepts."""

ANSWER_ROOM = 1_024
"""Tokens of ``max_tokens`` the budget form leaves for the answer after thinking."""

WEB_SEARCH_TOOL = "web_search_20250305"
WEB_FETCH_TOOL = "web_fetch_20250910"
"""The basic versions, on every model with the web tools."""
WEB_SEARCH_NEWEST = "web_search_20260318"
WEB_FETCH_NEWEST = "web_fetch_20260318"
"""The newest versions (dynamic filtering), where ``/v1/models`` says the model has it."""
NEWEST_TOOLS_FEATURE = "dynamic filtering"
"""The ``llm.models.model_features`` label of ``capabilities.code_execution``."""

_VERSIONED = re.compile(r"claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?!\d)")
"""A model id's family and version (``claude-sonnet-5-5`` → sonnet 5.5; a date suffix is not
a minor version)."""

_ADAPTIVE_FROM = {
    "opus": (4, 6),
    "sonnet": (4, 6),
    "haiku": (5, 5),
    "fable": (5, 0),
    "mythos": (5, 0),
}
"""The first version of each family with adaptive thinking (models overview, 2026-10: Opus
and Sonnet from 4.6, every 5.x model, Haiku from 5.5; Sonnet 5 and later answer the budget
form with a 400), for endpoints whose model list says nothing."""

_TOOL_TEXT_FROM = {"opus": (5, 5), "sonnet": (5, 5)}
"""The first version of each family that returns text between tool calls as thinking (the
Opus 5.5 and Sonnet 5.5 what's-new pages, 2026-12-02)."""


def _version(model: str) -> tuple[str, tuple[int, int]] | None:
    found = _VERSIONED.search(model.lower())
    if found is None:
        return None
    return found.group(1), (int(found.group(2)), int(found.group(3) or 0))


def tool_text_as_thinking(model: str) -> bool:
    """Whether ``model`` returns its text between tool calls in ``thinking`` blocks."""
    found = _version(model)
    return (
        found is not None and found[0] in _TOOL_TEXT_FROM and found[1] >= _TOOL_TEXT_FROM[found[0]]
    )


REPLY_KEYS: tuple[str, ...] = (
    "thinking",
    "thinking_budget",
    "thinking_display",
    "effort",
    "web_search",
    "web_fetch",
    "web_max_uses",
    "web_allowed_domains",
    "web_blocked_domains",
    "fast",
)
"""The settings of what a reply may use (kept when a conversation changes its preset)."""

ReplyOptions = dict[str, Any]
"""Request keys added to a chat request (``thinking``, ``output_config``, ``tools``)."""


def thinking_kind(model: str, features: Sequence[str]) -> str:
    """``adaptive`` or ``enabled`` (the budget form) for a model.

    Args:
        model: The model id (any spelling).
        features: What the endpoint says the model supports (``llm.models.model_features``
            labels); empty when it said nothing.
    """
    if "adaptive thinking" in features:
        return "adaptive"
    if "thinking" in features:
        return "enabled"
    found = _version(model)
    if found is None:
        return "enabled"
    return "adaptive" if found[1] >= _ADAPTIVE_FROM[found[0]] else "enabled"


def reply_options(
    policy: Policy,
    model: str,
    max_output: int,
    features: Sequence[str] = (),
    *,
    fast_mode: bool = False,
    tools: bool = False,
) -> tuple[ReplyOptions, list[str]]:
    """The request keys a conversation's policy adds, and warnings about what it could not.

    Args:
        policy: The conversation's policy.
        model: The model id.
        max_output: The request's ``max_tokens``.
        features: The endpoint's feature labels for the model (empty: unknown).
        fast_mode: The model has fast mode (its price card has a fast multiplier).
        tools: The request carries client tools (an MCP server's).

    Returns:
        ``(options, warnings)``: options to merge into the request (empty when nothing is on).
    """
    options: ReplyOptions = {}
    warnings: list[str] = []
    if policy.thinking == "on":
        kind = thinking_kind(model, features)
        if kind == "adaptive":
            options["thinking"] = {"type": "adaptive", "display": policy.thinking_display}
        else:
            # The budget is part of max_tokens: the answer keeps at least ANSWER_ROOM of it.
            budget = min(policy.thinking_budget, max_output - ANSWER_ROOM)
            if budget < MIN_THINKING_BUDGET:
                warnings.append(
                    f"thinking is off for this request: max_tokens {max_output:,} leaves no room "
                    f"for the least thinking budget ({MIN_THINKING_BUDGET:,}) and an answer; "
                    "raise max_output"
                )
            else:
                if budget < policy.thinking_budget:
                    warnings.append(
                        f"thinking budget cut to {budget:,} tokens so the answer keeps "
                        f"{ANSWER_ROOM:,} of max_tokens {max_output:,}; raise max_output for more"
                    )
                options["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": budget,
                    "display": policy.thinking_display,
                }
    if policy.effort != "default" and features and "effort" not in features:
        warnings.append(f"effort is not sent: the endpoint says {model} does not take it")
    elif policy.effort != "default":
        options["output_config"] = {"effort": policy.effort}
    web = _web_tools(policy, NEWEST_TOOLS_FEATURE in features)
    if web:
        options["tools"] = web
    if (
        policy.thinking != "on"
        and (web or tools)
        and policy.thinking_display == "summarized"
        and tool_text_as_thinking(model)
        and thinking_kind(model, features) == "adaptive"
    ):  # the text between tool calls comes back in thinking blocks: ask for it shown
        options["thinking"] = {"type": "adaptive", "display": "summarized"}
    if policy.fast and fast_mode:
        options["speed"] = "fast"
    elif policy.fast:
        warnings.append(f"fast mode is not sent: {model} has none (standard speed and price)")
    return options, warnings


def _web_tools(policy: Policy, newest: bool) -> list[dict[str, Any]]:
    """The server tool definitions the policy turns on (web search first), in their newest
    versions when ``newest`` (the endpoint says the model has dynamic filtering)."""
    tools: list[dict[str, Any]] = []
    for on, kind, name in (
        (policy.web_search, WEB_SEARCH_NEWEST if newest else WEB_SEARCH_TOOL, "web_search"),
        (policy.web_fetch, WEB_FETCH_NEWEST if newest else WEB_FETCH_TOOL, "web_fetch"),
    ):
        if not on:
            continue
        tool: dict[str, Any] = {"type": kind, "name": name, "max_uses": policy.web_max_uses}
        if policy.web_allowed_domains:
            tool["allowed_domains"] = list(policy.web_allowed_domains)
        elif policy.web_blocked_domains:
            tool["blocked_domains"] = list(policy.web_blocked_domains)
        if name == "web_fetch":
            tool["citations"] = {"enabled": True}
        tools.append(tool)
    return tools


def describe(request: dict[str, Any]) -> str | None:
    """One line for what a request lets the reply use (``None`` when nothing), e.g.
    ``thinking adaptive (summarized) · web_search: max 5, only docs.python.org``."""
    parts: list[str] = []
    thinking = request.get("thinking")
    if isinstance(thinking, dict):
        budget = f", budget {thinking['budget_tokens']:,}" if "budget_tokens" in thinking else ""
        kind = "budget" if thinking.get("type") == "enabled" else thinking.get("type")
        parts.append(f"thinking {kind} ({thinking.get('display', 'default')}{budget})")
    if request.get("speed") == "fast":
        parts.append("fast mode")
    config = request.get("output_config")
    if isinstance(config, dict) and config.get("effort"):
        parts.append(f"effort {config['effort']}")
    for tool in request.get("tools") or ():
        if not isinstance(tool, dict) or not str(tool.get("type", "")).startswith("web_"):
            continue
        limits = [f"max {tool['max_uses']}"] if "max_uses" in tool else []
        if tool.get("allowed_domains"):
            limits.append("only " + ", ".join(tool["allowed_domains"]))
        if tool.get("blocked_domains"):
            limits.append("not " + ", ".join(tool["blocked_domains"]))
        parts.append(
            f"{tool.get('name')}: {', '.join(limits)}" if limits else str(tool.get("name"))
        )
    return " · ".join(parts) or None
