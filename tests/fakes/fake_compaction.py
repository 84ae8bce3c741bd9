"""On-demand compaction for the fake Anthropic server (``tests/fakes/fake_anthropic.py``).

Modelled on Claude's documentation pages "Compaction on demand" and "Compaction in the
background" and on the ``anthropic`` SDK's beta types (``BetaCompactionConfigParam``,
``BetaCompactionBlock``, ``BetaCompactionBlockParam``):

- A request with ``"compaction": {"type": "summarize"}`` (optionally ``"instructions"``,
  which replace the default summarization prompt; empty or whitespace counts as absent) and
  the ``anthropic-beta: compact-2026-09-04`` header summarizes every message it holds. The
  response holds one ``compaction`` block alone — readable ``content`` and a ``signature`` —
  with ``stop_reason: "compaction"``; nothing is sampled after it.
- ``compaction`` cannot be combined with ``context_management``.
- A later request sends the block back exactly as received, first in ``messages`` (inside
  the returned assistant message), with the same beta header.
- ``count_tokens`` accepts the parameter and ignores it.

What the documentation does not spell out, and this server therefore decides on its own
(docs/docs-checked.md, "Server compaction", lists these): the wording and status of the
error for a model or endpoint without the feature (400 ``invalid_request_error`` naming
``compaction``), the signature's format (``sig_`` + an HMAC of the content), that a tampered
block is refused with 400, that a block counts as input by the tokens of its ``content``
alone, and the stream events of a streamed compaction (the block start carries the
signature, one ``compaction_delta`` carries the content).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

__all__ = [
    "COMPACTION_BETA",
    "DOCUMENTED_MODELS",
    "check_compaction_blocks",
    "check_compaction_request",
    "compaction_instructions",
    "is_compaction_request",
    "opens_with_compaction",
    "sign",
    "verify",
]

COMPACTION_BETA = "compact-2026-09-04"
"""The beta header value of on-demand compaction."""

DOCUMENTED_MODELS = frozenset(
    {
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-fable-5",
        "claude-mythos-5",
        "claude-mythos-preview",
        "claude-opus-5-5",
        "claude-opus-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-5-5",
        "claude-sonnet-5",
        "claude-sonnet-4-6",
        "claude-haiku-5-5",
    }
)
"""The models the "Compaction on demand" page lists as supported (Haiku 4.5 is not)."""


def is_compaction_request(body: Any) -> bool:
    """Whether ``body`` asks for a compaction (has a ``compaction`` parameter)."""
    return isinstance(body, dict) and body.get("compaction") is not None


def compaction_instructions(body: dict[str, Any]) -> str | None:
    """The request's ``compaction.instructions``, ``None`` when absent, empty or blank."""
    config = body.get("compaction")
    text = config.get("instructions") if isinstance(config, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def sign(content: str, secret: bytes) -> str:
    """The fake server's signature over a compaction block's content."""
    return "sig_" + hmac.new(secret, content.encode(), hashlib.sha256).hexdigest()


def verify(block: dict[str, Any], secret: bytes) -> bool:
    """Whether a compaction block's signature matches its content."""
    content = block.get("content")
    signature = block.get("signature")
    if content is None:
        return True  # a failed compaction round-trips as a no-op (BetaCompactionBlock)
    if not isinstance(content, str) or not isinstance(signature, str):
        return False
    return hmac.compare_digest(signature, sign(content, secret))


def _has_beta(headers: dict[str, str]) -> bool:
    betas = headers.get("anthropic-beta", "")
    return COMPACTION_BETA in [beta.strip() for beta in betas.split(",")]


def _base_model(model: str) -> str:
    model = model.strip().lower()
    parts = model.rsplit("-", 1)
    return parts[0] if len(parts) == 2 and parts[1].isdigit() and len(parts[1]) == 8 else model


def check_compaction_request(
    body: dict[str, Any],
    headers: dict[str, str],
    *,
    endpoint_supports: bool,
    models: frozenset[str],
) -> str | None:
    """Why a compaction request must be refused (a 400 message), or ``None``.

    Args:
        body: The request body (it has a ``compaction`` parameter).
        headers: The request headers, names lower-cased.
        endpoint_supports: False to behave like a Messages endpoint without the feature.
        models: The model ids (without date suffix) that support it.
    """
    if not endpoint_supports or not _has_beta(headers):
        return "compaction: Extra inputs are not permitted"
    config = body["compaction"]
    if not isinstance(config, dict) or config.get("type") != "summarize":
        return "compaction.type: Input should be 'summarize'"
    if "instructions" in config and not isinstance(config["instructions"], str | None):
        return "compaction.instructions: Input should be a valid string"
    if body.get("context_management") is not None:
        return "compaction: cannot be combined with `context_management`"
    model = str(body.get("model", ""))
    if _base_model(model) not in models:
        return f"compaction: on-demand compaction is not supported for the model {model!r}"
    return None


def opens_with_compaction(messages: list[Any]) -> bool:
    """Whether the first message is the assistant message holding a compaction block."""
    if not messages or not isinstance(messages[0], dict):
        return False
    first = messages[0]
    content = first.get("content")
    return (
        first.get("role") == "assistant"
        and isinstance(content, list)
        and bool(content)
        and isinstance(content[0], dict)
        and content[0].get("type") == "compaction"
    )


def check_compaction_blocks(
    messages: list[Any], headers: dict[str, str], secret: bytes
) -> str | None:
    """Why the compaction blocks a request sends back must be refused, or ``None``.

    A block is accepted only first in ``messages``, unchanged (its signature matches) and
    with the beta header.
    """
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") != "compaction":
                continue
            where = f"messages.{i}.content.{j}"
            if not _has_beta(headers):
                return f"{where}: compaction blocks require the `{COMPACTION_BETA}` beta"
            if i != 0 or j != 0:
                return f"{where}: a compaction block must come first in `messages`"
            if not verify(block, secret):
                return f"{where}: invalid `signature` in compaction block"
    return None
