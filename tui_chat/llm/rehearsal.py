"""One reply streamed through the SDK from memory, so the first real one does not build its types.

The SDK builds the pydantic schemas of the stream's events, blocks and usage the first time
each is parsed: 150-200 ms of CPU on the event loop during the first reply, most of it when
its last events (the usage, ``message_stop``) arrive, which delayed the end of that reply on
screen by as much. :func:`rehearse` streams a short canned reply (text, a thinking block, a web
search's call and result, the usage) through :meth:`ClaudeClient.stream` and the SDK's real
parsing, from an in-memory transport: nothing leaves the process. The TUI runs it in its
warm-up thread once the first frame is drawn.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

__all__ = ["rehearse"]

_MESSAGE: dict[str, Any] = {
    "id": "msg_rehearsal",
    "type": "message",
    "role": "assistant",
    "model": "claude-rehearsal",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}

_SEARCH: dict[str, Any] = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {},
}
_RESULTS: dict[str, Any] = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.invalid/",
            "title": "t",
            "encrypted_content": "e",
            "page_age": None,
        }
    ],
}


def _events() -> list[dict[str, Any]]:
    usage = {"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 0}
    return [
        {"type": "message_start", "message": _MESSAGE},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": _SEARCH},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": _RESULTS},
        {"type": "content_block_stop", "index": 2},
        {"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 3},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": usage,
        },
        {"type": "message_stop"},
    ]


def _body() -> bytes:
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in _events()
    ).encode()


async def rehearse() -> bool:
    """Stream the canned reply through a client of its own; whether it came whole."""
    import anthropic
    import httpx2

    from tui_chat.llm.client import ClaudeClient

    def answer(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, content=_body())

    client = ClaudeClient(api_key="sk-ant-rehearsal", base_url="http://rehearsal.invalid")
    transport = httpx2.MockTransport(answer)
    async with httpx2.AsyncClient(transport=transport) as http:
        client._client = anthropic.AsyncAnthropic(
            api_key="sk-ant-rehearsal",
            base_url="http://rehearsal.invalid",
            http_client=http,
            max_retries=0,
        )
        client._loop = asyncio.get_running_loop()
        request = {
            "model": "claude-rehearsal",
            "max_tokens": 16,
            "messages": [{"role": "user", "content": "warm up"}],
        }
        result = await client.stream(
            request, on_text=_ignore, on_thinking=_ignore, on_block=_ignore_block
        )
    return result.complete and result.error is None


def _ignore(text: str) -> None:
    """A delta of the rehearsal: nobody reads it."""


def _ignore_block(block: dict[str, Any]) -> None:
    """A block of the rehearsal: nobody reads it."""
