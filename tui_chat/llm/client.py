"""The Claude client: streaming replies, summary calls and token counts.

``ClaudeClient`` wraps ``anthropic.AsyncAnthropic``. The SDK takes most of a second to
import, so it is imported only when the first request is made; importing this module
is cheap.

``stream`` never raises for API or network failures: it returns what arrived so far with
``error`` set. Only ``message_stop`` makes a reply complete, because the SDK ends a stream
silently when the connection closes early.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tui_chat.core.models import ContentBlock, Usage, sane_usage
from tui_chat.core.unanswered import REFUSAL, refusal_message
from tui_chat.llm.compaction import (
    CompactionResult,
    compaction_params,
    parse_compaction,
    unsupported_compaction,
)
from tui_chat.llm.diagnostics import cache_miss
from tui_chat.llm.errors import ChatError, map_error
from tui_chat.llm.files import FilesBeta, file_ids_in, request_headers, upload
from tui_chat.llm.files import delete as delete_file
from tui_chat.llm.plain import plain

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["COUNT_TOKENS_KEYS", "ClaudeClient", "OnBlock", "OnText", "StreamResult", "no_key_error"]

OnText = Callable[[str], Awaitable[None] | None]
"""Receives each text delta as it arrives; may be a plain function or a coroutine function."""

OnBlock = Callable[[dict[str, Any]], Awaitable[None] | None]
"""Receives each finished server tool block (call or result) as a plain dict."""

COUNT_TOKENS_KEYS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "cache_control",
        "output_config",
        "speed",
    }
)
"""Request keys that ``messages.count_tokens`` accepts (``max_tokens``, ``metadata`` … are not)."""

_CONNECT_TIMEOUT = 5.0


@dataclass
class StreamResult:
    """The outcome of one (streamed) Messages call.

    Attributes:
        content: The Anthropic content blocks received (text, tool_use, thinking …), as
            plain dicts ready to store and send back. Empty text blocks are left out.
        text: All text blocks joined.
        usage: Input counts from ``message_start`` and the cumulative output count from
            the last ``message_delta``.
        stop_reason: ``end_turn``, ``max_tokens``, ``tool_use`` … or ``None`` if the
            reply never got that far.
        model: The model that answered, as reported by the API.
        complete: True only if ``message_stop`` was received.
        error: Why the reply failed or is incomplete, ``None`` on success.
        message_id: The API's id of the message (``msg_…``), when received.
        stop_details: The API's ``stop_details`` (a refusal's ``type``, ``category`` and
            ``explanation``), when given.
        usage_note: What was clamped in ``usage`` (see :func:`~tui_chat.core.models.sane_usage`).
    """

    content: list[ContentBlock] = field(default_factory=list)
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    model: str | None = None
    complete: bool = False
    error: ChatError | None = None
    message_id: str | None = None
    stop_details: dict[str, Any] | None = None
    usage_note: str | None = None
    """Set when a usage figure the endpoint reported was out of range and clamped."""

    @property
    def ok(self) -> bool:
        """True when the reply is complete and no error occurred."""
        return self.complete and self.error is None


def no_key_error() -> ChatError:
    """The error returned when no API key is configured."""
    return ChatError(
        "no_key",
        "no Anthropic API key is configured",
        "set ANTHROPIC_API_KEY or `api_key` in config.toml",
    )


class _OnTextFailed(Exception):
    """Carries an exception raised by the caller's ``on_text`` past the API error handler."""


async def _deliver(callback: Callable[[Any], Awaitable[None] | None], value: Any) -> None:
    """Pass ``value`` to a caller's callback; what it raises is carried past the API handler."""
    try:
        delivered = callback(value)
        if inspect.isawaitable(delivered):
            await delivered
    except Exception as exc:
        raise _OnTextFailed from exc


def hour_writes(usage: Any) -> int:
    """Tokens a response wrote to the cache with the 1-hour TTL (``usage.cache_creation``)."""
    split = getattr(usage, "cache_creation", None)
    if isinstance(split, dict):
        return int(split.get("ephemeral_1h_input_tokens") or 0)
    return int(getattr(split, "ephemeral_1h_input_tokens", 0) or 0)


class ClaudeClient:
    """A lazily created ``AsyncAnthropic`` with error mapping and result accumulation.

    Args:
        api_key: The API key; ``None`` or empty means no key (calls fail with ``no_key``
            without touching the network).
        base_url: An Anthropic-compatible endpoint; ``None`` lets the SDK use
            ``ANTHROPIC_BASE_URL`` or the public API.
        timeout: Seconds allowed for a request (connect timeout is at most 5 s).
        max_retries: Retries the SDK makes on 408/409/429/5xx and connection errors.
    """

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
    ) -> None:
        self._api_key = api_key.strip() if api_key and api_key.strip() else None
        self._base_url = base_url
        self._timeout = timeout
        self._max_retries = max_retries
        self._client: AsyncAnthropic | None = None
        self._spare: AsyncAnthropic | None = None
        """A client built by :meth:`preload` in a thread, for the first loop that sends."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self.diagnostics = True
        """Ask for cache diagnostics (False once this endpoint refused the field)."""
        self.files_beta = FilesBeta()
        """The Files API endpoints here that still ask for the beta header."""

    def __repr__(self) -> str:
        # Never show the key.
        return (
            f"ClaudeClient(has_key={self.has_key}, base_url={self._base_url!r}, "
            f"timeout={self._timeout}, max_retries={self._max_retries})"
        )

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        return self._api_key is not None

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (the SDK's default when none is configured)."""
        return self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"

    async def upload_file(self, name: str, data: bytes, media_type: str) -> str:
        """Upload a file to the Files API (:func:`tui_chat.llm.files.upload`); its id."""
        if self._api_key is None:
            raise no_key_error()
        sdk = await self._sdk()
        return await upload(sdk, self._api_key, name, data, media_type, self.files_beta)

    async def delete_file(self, file_id: str) -> bool:
        """Delete an uploaded file (:func:`tui_chat.llm.files.delete`); False if it was gone."""
        if self._api_key is None:
            raise no_key_error()
        return await delete_file(await self._sdk(), self._api_key, file_id, self.files_beta)

    def preload(self) -> None:
        """From a thread: import the SDK (a second of CPU) and build a client (its TLS context:
        35 ms), not on the event loop as the first reply starts. It has no connection yet: the
        first loop that sends takes it (:meth:`_sdk`)."""
        if self._client is None and self._spare is None:
            self._spare = self._new_sdk()

    def _new_sdk(self) -> AsyncAnthropic:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            timeout=anthropic.Timeout(self._timeout, connect=min(_CONNECT_TIMEOUT, self._timeout)),
            max_retries=self._max_retries,
        )

    async def _sdk(self) -> AsyncAnthropic:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # Pooled connections belong to the loop that opened them (e.g. one asyncio.run
            # per CLI command): start afresh on a new loop.
            self._client = None
            self._loop = loop
        if self._client is None:
            spare, self._spare = self._spare, None  # built by preload(), never connected
            # The SDK's import (seconds of CPU when loaded) in a thread: the loop runs on.
            built = spare if spare is not None else await asyncio.to_thread(self._new_sdk)
            self._client = self._client or built  # or one built meanwhile on this loop
        return self._client

    async def stream(
        self,
        request: dict[str, Any],
        on_text: OnText | None = None,
        on_thinking: OnText | None = None,
        on_block: OnBlock | None = None,
    ) -> StreamResult:
        """Stream one reply.

        Args:
            request: The exact keyword arguments for ``messages.stream`` (``model``,
                ``system``, ``messages``, ``max_tokens``, optionally ``metadata`` …).
            on_text: Called with each text delta as soon as it arrives.
            on_thinking: Called with each thinking delta (``thinking_delta``) as it arrives.
            on_block: Called with each finished block other than text and thinking (a server
                tool's call or result, as a plain dict) when its ``content_block_stop`` arrives.

        Returns:
            The accumulated reply. API and network failures are reported in ``error``
            with whatever content arrived before them; ``complete`` is False unless
            ``message_stop`` was received.

        Raises:
            asyncio.CancelledError: When the caller cancels; every text delta received
                before the cancellation has already been passed to ``on_text``.
            TypeError: If ``request`` holds arguments ``messages.stream`` does not accept.
            Exception: Whatever ``on_text`` raises, unchanged.
        """
        if self._api_key is None:
            return StreamResult(error=no_key_error())
        result = await self._stream(request, on_text, on_thinking, on_block)
        if any(file_ids_in(request)) and self.files_beta.retry("messages", result.error):
            result = await self._stream(request, on_text, on_thinking, on_block)  # a gateway
        return result

    async def _stream(
        self,
        request: dict[str, Any],
        on_text: OnText | None,
        on_thinking: OnText | None,
        on_block: OnBlock | None,
    ) -> StreamResult:
        """One attempt of :meth:`stream`."""
        headers = request_headers(request, self.files_beta)
        extra: dict[str, Any] = {"extra_headers": headers} if headers else {}
        manager = (await self._sdk()).messages.stream(**request, **extra)
        stream: Any = None
        started = False
        stopped = False
        error: ChatError | None = None
        try:
            async with manager as stream:
                async for event in stream:
                    if event.type == "message_start":
                        started = True
                    elif event.type == "text" and on_text is not None:
                        await _deliver(on_text, event.text)
                    elif event.type == "thinking" and on_thinking is not None:
                        await _deliver(on_thinking, event.thinking)
                    elif event.type == "content_block_stop" and on_block is not None:
                        block = plain(event.content_block, exclude_none=True)
                        if block.get("type") not in ("text", "thinking", "redacted_thinking"):
                            await _deliver(on_block, block)
                    elif event.type == "message_stop":
                        stopped = True
        except asyncio.CancelledError:
            raise
        except _OnTextFailed as wrapped:
            assert wrapped.__cause__ is not None
            raise wrapped.__cause__ from None
        except Exception as exc:
            error = map_error(exc, secrets=[self._api_key])
        result = _result_from_snapshot(stream.current_message_snapshot if started else None)
        result.complete = stopped and error is None
        if error is None and not stopped:
            error = ChatError(
                "incomplete",
                "the connection ended before the reply finished",
                "retry; the partial reply was kept",
            )
        if error is None and result.stop_reason == REFUSAL:
            error = refusal_error(result.stop_details)
        result.error = error
        return result

    async def complete(self, request: dict[str, Any]) -> StreamResult:
        """Make a call whose text is only needed at the end (summaries).

        Streams under the hood (long non-streaming calls are refused by the SDK) and has
        the same semantics as :meth:`stream`.

        Args:
            request: The keyword arguments for ``messages.stream``.

        Returns:
            The accumulated reply, with ``error`` set on failure.
        """
        return await self.stream(request)

    async def count_tokens(self, request: dict[str, Any]) -> int:
        """Ask the API how many input tokens a request would use.

        Args:
            request: A Messages request; keys ``count_tokens`` does not accept
                (``max_tokens``, ``metadata``, ``temperature`` …) are dropped.

        Returns:
            The API's input token count.

        Raises:
            ChatError: When there is no key or the call fails.
        """
        if self._api_key is None:
            raise no_key_error()
        params = {key: value for key, value in request.items() if key in COUNT_TOKENS_KEYS}
        headers = request_headers(request, self.files_beta)
        if headers:
            params["extra_headers"] = headers
        try:
            counted = await (await self._sdk()).messages.count_tokens(**params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # No chaining: the SDK's own message may quote the request, headers included.
            raise map_error(exc, secrets=[self._api_key]) from None
        return int(counted.input_tokens)

    async def list_model_info(self) -> list[dict[str, Any]]:
        """The endpoint's models as it describes them (``GET /v1/models``, every page).

        Returns:
            One dict per model, newest first, as the API gives it: ``id``, ``display_name``
            and, where the endpoint says them, ``max_input_tokens``, ``max_tokens`` and
            ``capabilities`` (``None`` values left out).

        Raises:
            ChatError: When there is no key or the endpoint does not answer.
        """
        if self._api_key is None:
            raise no_key_error()
        sdk = (await self._sdk()).with_options(max_retries=0)
        try:
            return [plain(model, exclude_none=True) async for model in sdk.models.list(limit=1000)]
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise map_error(exc, secrets=[self._api_key]) from None

    async def compact(
        self, request: dict[str, Any], *, instructions: str | None = None
    ) -> CompactionResult:
        """Ask the API to compact a conversation (on-demand compaction, beta).

        Args:
            request: The conversation as it stands, in the shape of a chat request
                (``model``, ``system``, ``messages``, ``max_tokens`` …); keys that only
                shape a reply are dropped.
            instructions: Replace the server's summarization prompt for this request.

        Returns:
            The returned block exactly as received, its text, signature and usage.

        Raises:
            ChatError: ``no_key`` without a key; ``unsupported`` when the model or
                endpoint cannot compact; ``incomplete`` when no summary came back; any
                other kind for ordinary failures.
        """
        if self._api_key is None:
            raise no_key_error()
        params = compaction_params(request, instructions)
        try:
            raw = await (await self._sdk()).beta.messages.with_raw_response.create(**params)
            body = json.loads(await raw.read())
        except asyncio.CancelledError:
            raise
        except ValueError:
            raise ChatError("stream_error", "the compaction response was not valid JSON") from None
        except Exception as exc:
            raise unsupported_compaction(map_error(exc, secrets=[self._api_key])) from None
        return parse_compaction(body)

    async def aclose(self) -> None:
        """Close the HTTP connections (a later call opens new ones)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.close()

    async def __aenter__(self) -> ClaudeClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def refusal_error(details: dict[str, Any] | None) -> ChatError:
    """The error of a reply Claude refused (``stop_reason: "refusal"``), from ``stop_details``.

    Claude's docs ("Handle streaming refusals"): the stream ends normally with
    ``stop_reason: "refusal"``; ``stop_details`` (``type: "refusal"``, ``category`` and
    ``explanation``, either may be null) arrives on ``message_delta``; the refused turn must be
    removed or rephrased before the conversation continues.
    """
    details = details or {}
    category, explanation = details.get("category"), details.get("explanation")
    return ChatError(
        "refused",
        refusal_message(
            category if isinstance(category, str) else None,
            explanation if isinstance(explanation, str) else None,
        ),
        "this turn is left out of later requests; rephrase the prompt and send it again",
    )


def _result_from_snapshot(snapshot: Any) -> StreamResult:
    """Build a result from the SDK's accumulated message (``None`` before message_start)."""
    if snapshot is None:
        return StreamResult()
    content: list[ContentBlock] = []
    texts: list[str] = []
    for block in snapshot.content:
        data = plain(block, exclude_none=True)
        data.pop("parsed_output", None)
        if data.get("type") == "text":
            if not data.get("text"):
                continue
            if not data.get("citations"):
                data.pop("citations", None)
            texts.append(data["text"])
        content.append(data)
    usage = snapshot.usage
    checked, note = sane_usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_1h_input_tokens=hour_writes(usage),
        thinking_tokens=_count(getattr(usage, "output_tokens_details", None), "thinking_tokens"),
        web_search_requests=_count(usage.server_tool_use, "web_search_requests"),
        web_fetch_requests=_count(usage.server_tool_use, "web_fetch_requests"),
    )
    return StreamResult(
        content=content,
        text="".join(texts),
        usage=replace(
            checked,
            speed="fast" if getattr(usage, "speed", None) == "fast" else "",
            **cache_miss(getattr(snapshot, "diagnostics", None)),
        ),
        usage_note=note,
        stop_reason=snapshot.stop_reason,
        model=snapshot.model,
        message_id=snapshot.id,
        stop_details=_stop_details(snapshot),
    )


def _stop_details(snapshot: Any) -> dict[str, Any] | None:
    """``stop_details`` of the SDK's message as a plain dict (``None`` when absent)."""
    details = getattr(snapshot, "stop_details", None)
    if details is None:
        return None
    if isinstance(details, dict):
        return details
    return plain(details)


def _count(part: Any, name: str) -> int:
    """A count inside an optional usage object (``server_tool_use`` …); 0 when absent."""
    if part is None:
        return 0
    value = part.get(name) if isinstance(part, dict) else getattr(part, name, None)
    return int(value or 0)
