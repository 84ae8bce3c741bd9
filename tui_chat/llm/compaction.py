"""Claude's on-demand compaction: one request that returns a signed ``compaction`` block.

Follows Claude's documentation ("Compaction on demand", beta ``compact-2026-09-04``): the
request is the conversation as it stands plus ``"compaction": {"type": "summarize"}``
(optional ``instructions`` replace the server's summarization prompt); the response holds
one ``compaction`` block — readable ``content`` and a ``signature`` — alone, with
``stop_reason: "compaction"``. Later requests send the block back exactly as received,
first in ``messages``, with the same beta header (:func:`compaction_headers`).

The call is made without streaming and the block is taken from the raw JSON body, so what
is stored is byte-for-byte what the API sent, including fields this SDK version does not
model. A model or endpoint without the feature — one that refuses the parameter, or a gateway
that drops it and answers with a plain reply — is reported as a :class:`ChatError` of kind
``unsupported`` so the caller can fall back to its own summarizer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui_chat.core.models import Usage, sane_usage
from tui_chat.llm.errors import ChatError

__all__ = [
    "COMPACTION_BETA",
    "CompactionResult",
    "compaction_headers",
    "compaction_params",
    "has_compaction_block",
    "parse_compaction",
    "unsupported_compaction",
]

COMPACTION_BETA = "compact-2026-09-04"
"""The ``anthropic-beta`` value on-demand compaction requires."""

_REQUEST_KEYS = frozenset(
    {"model", "system", "messages", "max_tokens", "tools", "tool_choice", "metadata", "thinking"}
)


@dataclass(frozen=True)
class CompactionResult:
    """A completed on-demand compaction.

    Attributes:
        block: The ``compaction`` block exactly as the API returned it (send it back
            unchanged, first in ``messages``).
        text: The block's readable summary (``content``).
        signature: The block's signature, when it has one.
        usage: The compaction call's token usage (input, cache read/write, output).
        model: The model that compacted, as the API reported it.
    """

    block: dict[str, Any]
    text: str
    signature: str | None
    usage: Usage
    model: str


def has_compaction_block(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a request's messages send a compaction block back (it needs the beta)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, Mapping) and block.get("type") == "compaction" for block in content
        ):
            return True
    return False


def compaction_headers(request: Mapping[str, Any]) -> dict[str, str]:
    """The extra headers a request needs: the beta when it carries a compaction block."""
    messages = request.get("messages")
    if isinstance(messages, list) and has_compaction_block(messages):
        return {"anthropic-beta": COMPACTION_BETA}
    return {}


def compaction_params(request: Mapping[str, Any], instructions: str | None) -> dict[str, Any]:
    """The keyword arguments of ``beta.messages.create`` for a compaction of ``request``.

    Keys that only shape a reply (``stop_sequences``, ``temperature``, ``context_management``
    …) are left out: the documentation says ``compaction`` cannot be combined with
    ``context_management``, and the SDK's own runner drops the others too.
    """
    params = {key: value for key, value in request.items() if key in _REQUEST_KEYS}
    config: dict[str, Any] = {"type": "summarize"}
    if instructions and instructions.strip():
        config["instructions"] = instructions
    params["compaction"] = config
    params["betas"] = [COMPACTION_BETA]
    params["stream"] = False
    return params


def parse_compaction(body: Any) -> CompactionResult:
    """Read a compaction response body (the decoded JSON).

    Raises:
        ChatError: ``unsupported`` when the response is a plain reply (text, no compaction
            block, a stop reason other than ``compaction``: an endpoint that ignored the
            parameter); ``incomplete`` when it holds no compaction block with text (the
            documented "missing summary" case: keep the history as it is).
    """
    if not isinstance(body, dict):
        raise ChatError("stream_error", "the compaction response was not a JSON object")
    blocks = [b for b in body.get("content") or [] if isinstance(b, dict)]
    found = [b for b in blocks if b.get("type") == "compaction"]
    if (
        not found
        and body.get("stop_reason") != "compaction"
        and any(b.get("type") == "text" and str(b.get("text") or "").strip() for b in blocks)
    ):
        # A gateway that drops the unknown parameter answers the conversation instead.
        raise ChatError(
            "unsupported",
            "on-demand compaction is not available here: the endpoint ignored the "
            f"compaction parameter and answered with a plain reply "
            f"(stop_reason {body.get('stop_reason')!r})",
            "tui-chat falls back to the `claude` summarizer for this model",
        )
    if not found or not isinstance(found[0].get("content"), str) or not found[0]["content"]:
        raise ChatError(
            "incomplete",
            f"the compaction produced no summary (stop_reason {body.get('stop_reason')!r})",
            "the history is kept as it is; retry later",
        )
    block = found[0]
    raw_usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    assert isinstance(raw_usage, dict)
    usage, _clamped = sane_usage(  # an absurd figure is never taken as given
        input_tokens=raw_usage.get("input_tokens"),
        output_tokens=raw_usage.get("output_tokens"),
        cache_creation_input_tokens=raw_usage.get("cache_creation_input_tokens"),
        cache_read_input_tokens=raw_usage.get("cache_read_input_tokens"),
    )
    signature = block.get("signature")
    return CompactionResult(
        block=block,
        text=str(block["content"]),
        signature=signature if isinstance(signature, str) else None,
        usage=usage,
        model=str(body.get("model") or ""),
    )


def unsupported_compaction(error: ChatError) -> ChatError:
    """Re-classify an API error as ``unsupported`` when it says compaction is unavailable.

    A 400 that names ``compaction`` (the model lacks the feature, the endpoint does not
    know the parameter or the beta) and a 404 (a gateway without the beta route) mean
    "use another summarizer"; anything else (429, 5xx, timeouts) is an ordinary failure.
    """
    mentions = "compaction" in error.message.lower()
    if (error.status == 400 and mentions) or error.status == 404:
        return ChatError(
            "unsupported",
            f"on-demand compaction is not available here: {error.message}",
            "tui-chat falls back to the `claude` summarizer for this model",
            status=error.status,
        )
    return error
