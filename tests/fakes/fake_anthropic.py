"""An Anthropic-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Point the real ``anthropic`` SDK (or ``ClaudeClient``) at ``server.base_url``; the server
speaks the Messages API closely enough for the SDK's streaming helper, retries and error
classes to behave as they do against the real API.

Endpoints
    ``POST /v1/messages``              JSON (``stream: false``) or SSE (``stream: true``).
    ``POST /v1/messages/count_tokens`` ``{"input_tokens": n}``.
    ``GET /v1/models``                 the model list (``fake.models``; ``None``: 404).
    ``POST /v1/files``, ``DELETE /v1/files/{id}``
                                       the Files API (``fake.files``,
    ``tests/fakes/fake_files.py``).
    ``POST /_fake/push``               Queue a behaviour from JSON (the fields of
                                       :class:`Behaviour`, minus ``when``/callables).
    ``GET  /_fake/requests``           The recorded request bodies as JSON.
    ``POST /_fake/reset``              Clear queue, records and prompt cache.
    ``POST /_fake/open``               Open the gate of behaviours pushed with ``"gate": true``
                                       (a ``hang`` mid-stream then carries on).

In a test (function-scoped fixture ``fake_anthropic``, registered by ``tests/conftest.py``
importing ``fake_anthropic_server``)::

    async def test_reply(fake_anthropic):
        fake_anthropic.push_reply("Hello there, friend.")
        client = ClaudeClient("sk-ant-test", base_url=fake_anthropic.base_url)
        result = await client.stream({...})
        assert fake_anthropic.requests[-1].body["model"] == ...

Scripting: every ``push_*`` queues one :class:`Behaviour` consumed by the next matching
request (``times=`` repeats it, ``times=None`` keeps it forever). With nothing queued a
chat request gets ``"Reply to: <first 60 chars of the last user text>"`` and a summary
request gets a ``<summary>…</summary>`` built from the first sentence of every paragraph
of the request. A request is a *summary request* when ``summary_marker`` (default
``"<summary>"``) occurs in its system prompt or its last user message; behaviours can
target ``"chat"``, ``"summary"`` or ``"any"`` (default) request, or take a predicate
``when=lambda req: ...``.

Usage is deterministic: a text costs ``ceil(len(text) / 4)`` tokens (:func:`fake_tokens`),
input = the sum over system blocks, tools and message blocks, output = the tokens of the
reply. Prompt caching is modelled: each ``cache_control`` breakpoint whose prefix reaches
``cache_min_tokens`` (default: the real per-model minimum, 1,024 or 4,096 — set it to 0 in
small tests) writes the prefix to the cache; a later request whose prefix matches a
written one at a block boundary up to 20 blocks before one of its breakpoints reads it.
Tokens read count as ``cache_read_input_tokens``, those between the hit and the last
breakpoint as ``cache_creation_input_tokens``, the rest as ``input_tokens``.

The server validates requests like the API does (``validate = True``): ``model``,
``max_tokens`` and non-empty ``messages`` present, first message from the user, no empty
text, every ``tool_use`` answered by a ``tool_result`` in the next message and vice versa,
at most 4 ``cache_control`` blocks, and the prompt within the model's window (1M for the
4.6 models, else 200k; ``context_window`` overrides). Failures are 400
``invalid_request_error`` responses with the API's wording.

On-demand compaction (``"compaction": {"type": "summarize"}`` with the
``compact-2026-09-04`` beta) is modelled in ``tests/fakes/fake_compaction.py``: the reply is one
signed ``compaction`` block with ``stop_reason: "compaction"``, a block sent back is checked
(first in ``messages``, signature intact) and counts as input by its text. Its docstring says
which parts follow Claude's documentation and which are this server's own choices. The
prompt cache's clock is ``clock`` (``time.monotonic`` unless a benchmark sets its own).

Standalone (benchmarks, manual runs)::

    python tests/fakes/fake_anthropic.py --port 0 --chunks-per-second 50

prints ``http://127.0.0.1:PORT`` on the first line and serves until interrupted.
Only the standard library is used (pytest only for the fixture).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import hashlib
import itertools
import json
import math
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal, cast

if not __package__:  # run as a script: tests/ is on sys.path, the repository root is not
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.fake_compaction import (
    DOCUMENTED_MODELS,
    check_compaction_blocks,
    check_compaction_request,
    compaction_instructions,
    is_compaction_request,
    opens_with_compaction,
    sign,
)
from tests.fakes.fake_continuation import summary_sources
from tests.fakes.fake_diagnostics import Diagnoses
from tests.fakes.fake_files import FakeFiles, FileRequestError
from tests.fakes.fake_recall import check_search_results, recall_reply
from tests.fakes.fake_web import (
    TOOL_TEXT_AS_THINKING,
    ReplyRequestError,
    binding,
    block_events,
    check_bindings,
    check_reply_request,
    progress_note,
    thinking_for,
    web_blocks,
)

__all__ = [
    "Behaviour",
    "FakeAnthropic",
    "RecordedRequest",
    "fake_anthropic_server",
    "fake_tokens",
    "main",
]

BehaviourKind = Literal["reply", "tool_use", "error", "sse_error", "drop", "malformed", "hang"]
Target = Literal["any", "chat", "summary", "compaction"]
Endpoint = Literal["messages", "count_tokens"]

FAST_MODELS = frozenset({"claude-fable-5-2", "claude-opus-5-5", "claude-opus-5"})
"""Models with fast mode (fast-mode page, English copy of 2026-11; a research preview on Opus
5): ``speed: "fast"`` elsewhere is a 400, and ``usage.speed`` says which speed ran."""
TextSource = str | Callable[[dict[str, Any]], str]

_ERROR_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low to access the Anthropic API."),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "Not found"),
    408: ("timeout_error", "Request timed out"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    504: ("timeout_error", "Gateway timeout"),
    529: ("overloaded_error", "Overloaded"),
}
_STATUS_FOR_TYPE = {error_type: status for status, (error_type, _) in _ERROR_TYPES.items()}
_STATUS_FOR_TYPE["invalid_request_error"] = 400
_LOOKBACK_BLOCKS = 20
_MAX_BREAKPOINTS = 4
_DEFAULT_429_RETRY_AFTER = 1.0


MAGIC_REFUSAL = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_"
    "1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86"
)
"""The test string Claude's docs give to trigger a refusal; a prompt holding it is refused."""


def fake_tokens(text: str) -> int:
    """The fake tokenizer: one token per 4 characters, rounded up."""
    return math.ceil(len(text) / 4)


@dataclass
class Behaviour:
    """One scripted response. Only the fields relevant to ``kind`` are used.

    Attributes:
        kind: ``reply`` (text), ``tool_use`` (optional text then a tool call), ``error``
            (an HTTP error status with Anthropic's JSON body), ``sse_error`` (an SSE
            ``error`` event after ``after_chunks`` deltas), ``drop`` (the connection ends
            after ``after_chunks`` deltas without ``message_stop``), ``malformed`` (an
            undecodable SSE event after ``after_chunks`` deltas) or ``hang`` (no answer
            for ``hang_seconds``, before the headers or after ``after_chunks`` deltas).
        text: Reply text, or a function of the request body returning it. ``None`` uses the
            default echo (chat) or generated summary (summary requests).
        endpoint: Which endpoint consumes it.
        target: Which requests may consume it: ``any``, ``chat``, ``summary`` or
            ``compaction`` (a request with the ``compaction`` parameter).
        when: Extra predicate on the recorded request.
        times: How many requests it answers; ``None`` means forever.
        delay: Seconds to wait before sending the response headers.
        chunk_delay: Seconds between stream deltas (``None``: the server's default).
        words_per_chunk: Words per text delta (``None``: the server's default).
        stop_reason: Overrides the stop reason (default ``end_turn``, ``tool_use`` for tool
            calls, ``max_tokens`` when the reply was cut at ``max_tokens``).
        stop_details: The message's ``stop_details`` (a refusal's ``type``, ``category``,
            ``explanation``), sent on ``message_delta`` and in a non-streamed message.
        usage: Values that override the computed usage fields.
        thinking: If set, a thinking block with this text precedes the reply.
        status: HTTP status for ``error`` (the error type follows from it).
        error_type: Anthropic error type (``overloaded_error`` …); defaults from status.
        message: Error message; defaults from status.
        retry_after: Seconds for the ``retry-after`` header (429 defaults to 1).
        headers: Extra response headers.
        after_chunks: Deltas sent before a fault (negative: before ``message_start``).
        abrupt: For ``drop``: reset the socket (a transport error in the client) instead of
            ending the HTTP body cleanly (the SDK then just stops, as with real drops).
        hang_seconds: How long a ``hang`` lasts (it ends early if the client goes away).
        tool_name: Name of the tool called by ``tool_use``.
        tool_input: Input of the tool call.
        tool_id: Id of the tool call (generated when ``None``).
    """

    kind: BehaviourKind = "reply"
    text: TextSource | None = None
    endpoint: Endpoint = "messages"
    target: Target = "any"
    when: Callable[[RecordedRequest], bool] | None = None
    times: int | None = 1
    delay: float = 0.0
    chunk_delay: float | None = None
    words_per_chunk: int | None = None
    stop_reason: str | None = None
    stop_details: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    thinking: str | None = None
    status: int = 500
    error_type: str | None = None
    message: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    after_chunks: int = 2
    abrupt: bool = False
    hang_seconds: float = 30.0
    gate: threading.Event | None = None
    """A ``hang`` mid-stream also ends when this is set (the test lets the reply go on)."""
    tool_name: str = "get_weather"
    tool_input: dict[str, Any] = field(default_factory=lambda: {"city": "Paris"})
    tool_id: str | None = None

    def matches(self, request: RecordedRequest, endpoint: Endpoint) -> bool:
        """Whether this behaviour answers ``request`` on ``endpoint``."""
        if self.endpoint != endpoint:
            return False
        if self.target == "chat" and (request.is_summary or request.is_compaction):
            return False
        if self.target == "summary" and not request.is_summary:
            return False
        if self.target == "compaction" and not request.is_compaction:
            return False
        return self.when is None or self.when(request)


@dataclass
class RecordedRequest:
    """One request received by the server.

    Attributes:
        index: Order of arrival (0-based, over all endpoints).
        method: HTTP method.
        path: URL path without the query string.
        headers: Request headers, names lower-cased.
        body: The decoded JSON body (``None`` if it was not JSON).
        is_summary: Whether it was classified as a summary request.
        is_compaction: Whether it asked for an on-demand compaction.
        behaviour: The kind of response given (``reply``, ``error`` …, ``invalid`` for a
            validation failure).
        status: The HTTP status sent.
        usage: The usage reported (for replies and token counts).
        disconnected: True if the client went away before the response was complete.
        received_at: ``time.monotonic()`` at arrival.
        last_delta_at: ``time.monotonic()`` right after the stream's last content delta was
            written (0 before it, or for a reply that was not streamed).
    """

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    is_summary: bool = False
    is_compaction: bool = False
    behaviour: str | None = None
    status: int | None = None
    usage: dict[str, Any] | None = None
    disconnected: bool = False
    received_at: float = 0.0
    last_delta_at: float = 0.0

    @property
    def streamed(self) -> bool:
        """True if the request asked for an SSE stream."""
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


class _InvalidRequest(Exception):
    def __init__(
        self, message: str, status: int = 400, error_type: str = "invalid_request_error"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type


class _ClientGone(Exception):
    """The client closed the connection, or the server is stopping."""


@dataclass
class _Segment:
    key: str
    tokens: int
    cache_control: dict[str, Any] | None


class FakeAnthropic:
    """A scriptable Anthropic Messages API on 127.0.0.1, served from a background thread.

    Args:
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        summary_marker: Text that marks a summary request (in the system prompt or the
            last user message).

    Attributes (settable at any time):
        chunk_delay: Default seconds between stream deltas.
        words_per_chunk: Default words per text delta.
        cache_min_tokens: Minimum prefix for a cache write; ``None`` = per-model minimum.
        cache_ttl: Seconds a 5-minute cache entry lives (1-hour entries live 12x longer).
        validate: Reject invalid requests with 400 as the API does.
        context_window: Prompt limit for the window check; ``None`` = per model.
        api_key: If set, any other ``x-api-key`` gets 401.
        summary_marker: See above.
        summary_max_chars: Upper bound on a generated summary's length.
        reply_text: Text (or function of the body) for chat requests with nothing queued;
            ``None`` gives the ``Reply to: …`` echo.
        compaction_endpoint: False to behave like an endpoint without on-demand
            compaction (every ``compaction`` request gets 400).
        compaction_models: Model ids (no date suffix) that support on-demand compaction;
            by default the models Claude's documentation lists.
        compaction_ignored: True to behave like a gateway that drops the unknown
            ``compaction`` parameter: the request is answered as a plain chat reply
            (``stop_reason: "end_turn"``, a text block, no compaction block).
        clock: The time source of the prompt cache (a benchmark advances a virtual clock
            to model pauses between turns).
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, *, summary_marker: str = "<summary>"
    ) -> None:
        self.host = host
        self.port = port
        self.summary_marker = summary_marker
        self.chunk_delay = 0.0
        self.words_per_chunk = 3
        self.cache_min_tokens: int | None = None
        self.cache_ttl = 300.0
        self.validate = True
        self.context_window: int | None = None
        self.api_key: str | None = None
        self.summary_max_chars = 1200
        self.reply_text: TextSource | None = None
        self.compaction_endpoint = True
        self.compaction_models: frozenset[str] = DOCUMENTED_MODELS
        self.compaction_ignored = False
        self.models: list[str] | None = ["claude-sonnet-4-6", "claude-haiku-4-5", "gateway-llama"]
        """What ``GET /v1/models`` lists (``None``: the endpoint answers 404)."""
        self.models_served = 0
        """How many times ``GET /v1/models`` answered."""
        self.files = FakeFiles()
        """The Files API (``tests/fakes/fake_files.py``; ``files.supported = False``: none)."""
        self.bindings: dict[str, list[tuple[str, str]]] = {}
        """What each thinking signature given is bound to: model and prefix (fake_web.py)."""
        self.diagnoses = Diagnoses(lambda body: [(g.key, g.tokens) for g in _segments(body)])
        """Cache diagnostics' fingerprints (``tests/fakes/fake_diagnostics.py``)."""
        self.model_limits: dict[str, dict[str, Any]] = {
            "claude-sonnet-4-6": model_entry(1_000_000, 64_000, adaptive=True),
            "claude-haiku-4-5": model_entry(200_000, 64_000, adaptive=False),
        }
        """``max_input_tokens``, ``max_tokens`` and ``capabilities`` per listed model (as the
        Models API reference gives them); a model without an entry is listed without them, as
        a gateway that does not know them would. Empty it for an endpoint without the fields."""
        self.clock: Callable[[], float] = time.monotonic
        self._secret = b"fake-compaction-signing-key"
        self._lock = threading.Condition()
        self._queue: list[Behaviour] = []
        self._requests: list[RecordedRequest] = []
        self._cache: dict[str, float] = {}
        self.http_gate = threading.Event()
        """The gate of behaviours pushed over HTTP with ``"gate": true`` (``/_fake/open``)."""
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        """Bind and serve in a daemon thread. Returns ``self``."""
        if self._server is not None:
            return self
        self._stop.clear()
        server = _Server((self.host, self.port), _Handler)
        server.fake = self
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.01},
            daemon=True,
            name=f"fake-anthropic:{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end hanging responses and close every connection."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stop.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The URL to pass as ``base_url`` / ``ANTHROPIC_BASE_URL``."""
        return f"http://{self.host}:{self.port}"

    def env(self, api_key: str = "sk-ant-fake-test-key") -> dict[str, str]:
        """Environment variables that point a subprocess at this server."""
        return {"ANTHROPIC_BASE_URL": self.base_url, "ANTHROPIC_API_KEY": api_key}

    # -- records -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy), in order of arrival."""
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.path == "/v1/messages"]

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the ``POST /v1/messages`` requests."""
        return [r.body for r in self.message_requests]

    @property
    def last(self) -> RecordedRequest:
        """The most recent ``POST /v1/messages`` request."""
        found = self.message_requests
        if not found:
            raise LookupError("no /v1/messages request received yet")
        return found[-1]

    @property
    def pending(self) -> int:
        """How many scripted behaviours are still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def open_connections(self) -> int:
        """How many client connections the server is still handling."""
        assert self._server is not None, "the fake is not started"
        with self._server.connections_lock:
            return len(self._server.connections)

    def drop_queued(self) -> int:
        """Forget the queued behaviours (the requests stay recorded); returns how many."""
        with self._lock:
            dropped = len(self._queue)
            self._queue.clear()
        return dropped

    def wait_for_sync(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``count`` messages requests have arrived (not from the event loop
        that makes the requests: use :meth:`wait_for` there)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._message_requests_locked()) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"expected {count} requests, got {len(self._requests)}")
                self._lock.wait(remaining)
            return self._message_requests_locked()

    async def wait_for(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait (asynchronously) until ``count`` messages requests have arrived."""
        import asyncio

        deadline = time.monotonic() + timeout
        while True:
            found = self.message_requests
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} requests, got {len(found)}")
            await asyncio.sleep(0.005)

    def _message_requests_locked(self) -> list[RecordedRequest]:
        return [r for r in self._requests if r.path == "/v1/messages"]

    def reset(self) -> None:
        """Forget queued behaviours, recorded requests and the prompt cache."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._cache.clear()
            self.diagnoses.reset()
            self.bindings.clear()
            self.http_gate = threading.Event()

    def clear_cache(self) -> None:
        """Empty the prompt cache (as if every entry had expired)."""
        with self._lock:
            self._cache.clear()

    # -- scripting -----------------------------------------------------------------------

    def push(self, behaviour: Behaviour | None = None, /, **fields_: Any) -> Behaviour:
        """Queue a behaviour (given, or built from keyword fields of :class:`Behaviour`)."""
        if behaviour is None:
            behaviour = Behaviour(**fields_)
        elif fields_:
            raise TypeError("pass a Behaviour or keyword fields, not both")
        if behaviour.times is not None and behaviour.times < 1:
            raise ValueError("times must be at least 1 (or None for forever)")
        with self._lock:
            self._queue.append(behaviour)
        return behaviour

    def push_reply(self, text: TextSource | None = None, **kw: Any) -> Behaviour:
        """Queue a text reply (``None``: the default echo or summary)."""
        return self.push(kind="reply", text=text, **kw)

    def push_summary(self, text: TextSource | None = None, **kw: Any) -> Behaviour:
        """Queue a reply for the next *summary* request only (``None``: generated summary)."""
        return self.push(kind="reply", text=text, target="summary", **kw)

    def push_tool_use(
        self,
        name: str = "get_weather",
        tool_input: dict[str, Any] | None = None,
        text: TextSource | None = "Let me check.",
        **kw: Any,
    ) -> Behaviour:
        """Queue a reply that calls a tool (stop reason ``tool_use``)."""
        return self.push(
            kind="tool_use",
            tool_name=name,
            tool_input=tool_input if tool_input is not None else {"city": "Paris"},
            text=text,
            **kw,
        )

    def push_refusal(
        self,
        category: str | None = "cyber",
        explanation: str | None = "This request was declined because it could enable cyber harm.",
        text: TextSource | None = "Hello..",
        **kw: Any,
    ) -> Behaviour:
        """Queue a reply the streaming classifiers stop, as Claude's docs ("Handle streaming
        refusals") show it: the text so far, ``stop_reason: "refusal"`` and ``stop_details``
        (``type: "refusal"``, ``category``, ``explanation``; both may be null) on the
        ``message_delta`` event, then ``message_stop``."""
        details = {"type": "refusal", "category": category, "explanation": explanation}
        return self.push(kind="reply", text=text, stop_reason="refusal", stop_details=details, **kw)

    def push_error(
        self,
        status: int,
        *,
        error_type: str | None = None,
        message: str | None = None,
        retry_after: float | None = None,
        **kw: Any,
    ) -> Behaviour:
        """Queue an HTTP error response with Anthropic's JSON error body.

        429 responses carry ``retry-after: 1`` unless ``retry_after`` is given.
        """
        return self.push(
            kind="error",
            status=status,
            error_type=error_type,
            message=message,
            retry_after=retry_after,
            **kw,
        )

    def push_sse_error(
        self,
        after_chunks: int = 2,
        *,
        error_type: str = "overloaded_error",
        message: str | None = None,
        **kw: Any,
    ) -> Behaviour:
        """Queue a stream that sends an SSE ``error`` event after ``after_chunks`` deltas."""
        return self.push(
            kind="sse_error",
            after_chunks=after_chunks,
            error_type=error_type,
            message=message,
            **kw,
        )

    def push_drop(self, after_chunks: int = 2, *, abrupt: bool = False, **kw: Any) -> Behaviour:
        """Queue a stream that ends after ``after_chunks`` deltas without ``message_stop``.

        ``abrupt=False`` ends the HTTP body cleanly (the SDK stops without an error, as
        with real mid-stream drops behind proxies); ``abrupt=True`` resets the socket.
        """
        return self.push(kind="drop", after_chunks=after_chunks, abrupt=abrupt, **kw)

    def push_malformed(self, after_chunks: int = 1, **kw: Any) -> Behaviour:
        """Queue a stream with an undecodable event after ``after_chunks`` deltas."""
        return self.push(kind="malformed", after_chunks=after_chunks, **kw)

    def push_hang(
        self, seconds: float = 30.0, *, after_chunks: int | None = None, **kw: Any
    ) -> Behaviour:
        """Queue a response that stalls for ``seconds`` (before the headers, or mid-stream
        after ``after_chunks`` deltas)."""
        if after_chunks is None:
            return self.push(kind="hang", hang_seconds=seconds, after_chunks=-1, **kw)
        return self.push(kind="hang", hang_seconds=seconds, after_chunks=after_chunks, **kw)

    # -- request classification and content ---------------------------------------------

    def listed_limits(self) -> dict[str, dict[str, Any]]:
        """:attr:`model_limits` with each model's compaction support as this server has it
        (``compaction_models``), so the list and a compaction request agree."""
        listed = copy.deepcopy(self.model_limits)
        for model, entry in listed.items():
            management = entry.get("capabilities", {}).get("context_management")
            if isinstance(management, dict):
                supported = _base_id(model) in self.compaction_models
                management["compact_20260112"] = {"supported": supported}
        return listed

    def newest_tools_ok(self, model: str) -> bool:
        """False when this endpoint lists ``model`` without ``capabilities.code_execution``
        (the newest web tool versions are then refused; an unlisted model takes them)."""
        entry = self.model_limits.get(_base_id(model), {})
        found = entry.get("capabilities", {}).get("code_execution", {})
        return bool(found.get("supported", True)) if entry else True

    def adaptive_ok(self, model: str) -> bool:
        """False when this endpoint lists ``model`` as without adaptive thinking."""
        entry = self.model_limits.get(_base_id(model), {})
        types = entry.get("capabilities", {}).get("thinking", {}).get("types", {})
        return bool(types.get("adaptive", {}).get("supported", True))

    def is_summary_request(self, body: Any) -> bool:
        """Whether ``body`` is a summary request (marker in system or last user text)."""
        if not isinstance(body, dict) or not self.summary_marker or is_compaction_request(body):
            return False
        if self.summary_marker in _system_text(body.get("system")):
            return True
        return self.summary_marker in _last_user_text(body)

    def default_reply(self, body: dict[str, Any]) -> str:
        """The reply given when no behaviour supplies text."""
        if is_compaction_request(body) and not self.compaction_ignored:
            return self.compaction_text(body)
        if self.is_summary_request(body):
            return self.summarize(body)
        if self.reply_text is not None:
            return self.reply_text(body) if callable(self.reply_text) else self.reply_text
        text = " ".join(_last_user_text(body).split())
        return f"Reply to: {text[:60]}"

    def summarize(self, body: dict[str, Any]) -> str:
        """A deterministic ``<summary>`` built from the first sentence of every paragraph
        of the request's messages (only inside ``<tag>…</tag>`` sections when there are
        any), each shortened so the whole fits ``summary_max_chars`` (and ``max_tokens``)."""
        sentences: list[str] = []
        for message in summary_sources(body, self.summary_marker, _content_text):
            # Earlier summaries are given "for context only (do not repeat them)": a model
            # follows that, and so does this summarizer.
            given = _EARLIER.sub(" ", _content_text(message.get("content")))
            source = _tagged_sections(given)
            for paragraph in source.split("\n"):
                if self.summary_marker and self.summary_marker in paragraph:
                    continue
                sentence = _first_sentence(re.sub(r"</?[A-Za-z_][^>]*>", " ", paragraph))
                if sentence and sentence not in sentences:
                    sentences.append(sentence)
        max_tokens = body.get("max_tokens")
        budget = self.summary_max_chars
        if isinstance(max_tokens, int) and max_tokens > 0:
            budget = min(budget, max_tokens * 4 - 40)
        budget = max(budget, 40)
        if not sentences:
            sentences = ["Nothing to summarize."]
        per_line = max(24, budget // len(sentences) - 3)
        lines: list[str] = []
        used = 0
        for sentence in sentences:
            line = sentence if len(sentence) <= per_line else sentence[: per_line - 1] + "…"
            if used + len(line) + 3 > budget:
                break
            lines.append(f"- {line}")
            used += len(line) + 3
        return "<summary>\n" + "\n".join(lines) + "\n</summary>"

    def compaction_text(self, body: dict[str, Any]) -> str:
        """The readable summary of a compaction: the generated summary without its tags,
        headed by the first line of the request's ``instructions`` when it has some."""
        inner = self.summarize(body).removeprefix("<summary>\n").removesuffix("\n</summary>")
        instructions = compaction_instructions(body)
        if instructions is None:
            return inner
        return f"Focus: {instructions.strip().splitlines()[0][:120]}\n{inner}"

    def signature(self, content: str) -> str:
        """The signature this server puts on a compaction block with ``content``."""
        return sign(content, self._secret)

    # -- usage and prompt caching ---------------------------------------------------------

    def input_tokens(self, body: dict[str, Any]) -> int:
        """The total input tokens of a request (uncached + cache write + cache read)."""
        return sum(segment.tokens for segment in _segments(body))

    def _usage(self, body: dict[str, Any], output_tokens: int) -> dict[str, Any]:
        segments = _segments(body)
        total = sum(s.tokens for s in segments)
        model = str(body.get("model", ""))
        minimum = self.cache_min_tokens
        if minimum is None:
            minimum = _default_cache_minimum(model)
        hashes: list[str] = []
        cumulative: list[int] = []
        digest = hashlib.sha256(model.encode())
        running = 0
        for segment in segments:
            digest.update(b"\x00" + segment.key.encode())
            hashes.append(digest.copy().hexdigest())
            running += segment.tokens
            cumulative.append(running)
        breakpoints = [
            i
            for i, s in enumerate(segments)
            if s.cache_control is not None and cumulative[i] >= max(minimum, 1)
        ]
        read = write = hour = 0
        now = self.clock()
        with self._lock:
            self._cache = {h: t for h, t in self._cache.items() if t > now}
            if breakpoints:
                last = breakpoints[-1]
                hit = -1
                for bp in reversed(breakpoints):
                    for j in range(bp, max(-1, bp - _LOOKBACK_BLOCKS - 1), -1):
                        if hashes[j] in self._cache:
                            hit = j
                            break
                    if hit >= 0:
                        break
                read = cumulative[hit] if hit >= 0 else 0
                write = cumulative[last] - read
                # What is written up to a 1-hour breakpoint is a 1-hour write (2x).
                hour_end = max(
                    (
                        cumulative[bp]
                        for bp in breakpoints
                        if _ttl_is_hour(segments[bp].cache_control)
                    ),
                    default=0,
                )
                hour = max(0, hour_end - read)
                if hit >= 0:
                    self._cache[hashes[hit]] = max(self._cache[hashes[hit]], now + self.cache_ttl)
                for bp in breakpoints:
                    ttl = self.cache_ttl * (12 if _ttl_is_hour(segments[bp].cache_control) else 1)
                    self._cache[hashes[bp]] = max(self._cache.get(hashes[bp], 0.0), now + ttl)
        return {
            "input_tokens": total - read - write,
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": write - hour,
                "ephemeral_1h_input_tokens": hour,
            },
            "output_tokens": output_tokens,
            "speed": "fast" if body.get("speed") == "fast" else "standard",
        }

    # -- validation -----------------------------------------------------------------------

    def _validate(self, body: Any, *, count_only: bool = False) -> None:
        if not isinstance(body, dict):
            raise _InvalidRequest("request body must be a JSON object")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise _InvalidRequest("model: Field required")
        if not count_only:
            max_tokens = body.get("max_tokens")
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
                raise _InvalidRequest("max_tokens: Field required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _InvalidRequest("messages: at least one message is required")
        if "speed" in body and not count_only:
            if body["speed"] not in ("standard", "fast"):
                raise _InvalidRequest("speed: Input should be 'standard' or 'fast'")
            if body["speed"] == "fast" and _base_id(body["model"]) not in FAST_MODELS:
                raise _InvalidRequest(f"speed: fast mode is not available for {body['model']}")
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            raise _InvalidRequest("system: Input should be a valid string or list of text blocks")
        breakpoints = 0
        for block in system if isinstance(system, list) else []:
            if not isinstance(block, dict) or block.get("type") != "text":
                raise _InvalidRequest("system: blocks must be text blocks")
            if not block.get("text"):
                raise _InvalidRequest("system: text content blocks must be non-empty")
            breakpoints += "cache_control" in block
        for tool in body.get("tools") or []:
            breakpoints += isinstance(tool, dict) and "cache_control" in tool
        previous_tool_ids: list[str] = []
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                raise _InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
            role = message["role"]
            if i == 0 and role != "user" and not opens_with_compaction(messages):
                raise _InvalidRequest('messages: first message must use the "user" role')
            content = message.get("content")
            final_assistant = i == len(messages) - 1 and role == "assistant"
            if isinstance(content, str):
                blocks: list[Any] = [{"type": "text", "text": content}] if content else []
            elif isinstance(content, list):
                blocks = content
            else:
                raise _InvalidRequest(f"messages.{i}.content: Input should be a string or a list")
            if not blocks and not final_assistant:
                raise _InvalidRequest(
                    f"messages.{i}: all messages must have non-empty content except for the "
                    "optional final assistant message"
                )
            tool_ids: list[str] = []
            result_ids: list[str] = []
            for j, block in enumerate(blocks):
                if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                    raise _InvalidRequest(f"messages.{i}.content.{j}: invalid content block")
                kind = block["type"]
                breakpoints += "cache_control" in block
                if kind == "text" and not block.get("text"):
                    raise _InvalidRequest(
                        f"messages.{i}.content.{j}.text: text content blocks must be non-empty"
                    )
                if kind in ("image", "document"):
                    _check_source(block, f"messages.{i}.content.{j}")
                if kind not in _CONTENT_TYPES:
                    raise _InvalidRequest(
                        f"messages.{i}.content.{j}: Input tag '{kind}' found using 'type' does "
                        "not match any of the expected tags"
                    )
                if kind == "tool_use":
                    if role != "assistant":
                        raise _InvalidRequest(
                            f"messages.{i}.content.{j}: tool_use blocks are only allowed in "
                            "assistant messages"
                        )
                    tool_ids.append(str(block.get("id")))
                if kind == "tool_result":
                    if role != "user":
                        raise _InvalidRequest(
                            f"messages.{i}.content.{j}: tool_result blocks are only allowed in "
                            "user messages"
                        )
                    result_ids.append(str(block.get("tool_use_id")))
                    if block.get("tool_use_id") not in previous_tool_ids:
                        raise _InvalidRequest(
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                            "block must have a corresponding `tool_use` block in the previous "
                            "message."
                        )
            missing = [tid for tid in previous_tool_ids if tid not in result_ids]
            if missing:
                raise _InvalidRequest(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
            previous_tool_ids = tool_ids
        if previous_tool_ids and not count_only and messages[-1].get("role") == "assistant":
            raise _InvalidRequest(
                f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(previous_tool_ids)}. Each `tool_use` block "
                "must have a corresponding `tool_result` block in the next message."
            )
        breakpoints += "cache_control" in body
        if breakpoints > _MAX_BREAKPOINTS:
            raise _InvalidRequest(
                f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {breakpoints}."
            )
        window = self.context_window or _default_window(str(body["model"]))
        prompt = self.input_tokens(body)
        if prompt > window:
            raise _InvalidRequest(f"prompt is too long: {prompt} tokens > {window} maximum")

    def _validate_compaction(self, body: Any, headers: dict[str, str], *, asks: bool) -> None:
        """Refuse a compaction request the endpoint or model cannot serve (always checked,
        like the API's own capability check) and tampered or misplaced compaction blocks."""
        if asks and not self.compaction_ignored:
            problem = check_compaction_request(
                body,
                headers,
                endpoint_supports=self.compaction_endpoint,
                models=self.compaction_models,
            )
            if problem is not None:
                raise _InvalidRequest(problem)
        if self.validate and isinstance(body, dict):
            problem = check_compaction_blocks(body.get("messages") or [], headers, self._secret)
            if problem is not None:
                raise _InvalidRequest(problem)

    # -- request dispatch (called from handler threads) -------------------------------------

    def _record(
        self, method: str, path: str, headers: dict[str, str], body: Any
    ) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(
                index=len(self._requests),
                method=method,
                path=path,
                headers=headers,
                body=body,
                is_summary=self.is_summary_request(body),
                is_compaction=is_compaction_request(body),
                received_at=time.monotonic(),
            )
            self._requests.append(request)
            self._lock.notify_all()
            return request

    def _take(self, request: RecordedRequest, endpoint: Endpoint) -> Behaviour | None:
        with self._lock:
            for i, behaviour in enumerate(self._queue):
                if behaviour.matches(request, endpoint):
                    if behaviour.times is not None:
                        behaviour.times -= 1
                        if behaviour.times <= 0:
                            del self._queue[i]
                    return behaviour
        return None

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    fake: FakeAnthropic

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def close_connections(self) -> None:
        with self.connections_lock:
            open_sockets = list(self.connections)
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-response are part of the tests; stay quiet.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "fake-anthropic/1.0"

    # -- plumbing ------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeAnthropic:
        return self.server.fake

    def _write(self, data: bytes) -> None:
        if self.fake._stop.is_set():
            raise _ClientGone
        try:
            self.wfile.write(data)
        except OSError as exc:
            raise _ClientGone from exc

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.fake._next_id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(data)

    def _send_error(
        self,
        record: RecordedRequest | None,
        status: int,
        error_type: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        if record is not None:
            record.status = status
        request_id = self.fake._next_id("req")
        body = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        self._send_json(status, body, headers)

    def _wait(self, seconds: float, gate: threading.Event | None = None) -> None:
        """Sleep (or until ``gate`` is set), but give up as soon as the client hangs up or
        the server stops."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (gate is not None and gate.is_set()):
                return
            if self.fake._stop.is_set():
                raise _ClientGone
            try:
                readable, _, _ = select.select([self.connection], [], [], min(remaining, 0.05))
            except (OSError, ValueError) as exc:
                raise _ClientGone from exc
            if readable:
                try:
                    peek = self.connection.recv(1, socket.MSG_PEEK)
                except OSError as exc:
                    raise _ClientGone from exc
                if not peek:
                    raise _ClientGone
                # Pipelined bytes: nothing to watch for, just sleep the rest.
                if self.fake._stop.wait(max(0.0, deadline - time.monotonic())):
                    raise _ClientGone
                return

    # -- routing ---------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self._drain_body()
        if path == "/_fake/requests":
            self._send_json(
                200,
                [
                    {
                        "path": r.path,
                        "body": r.body,
                        "behaviour": r.behaviour,
                        "status": r.status,
                        "usage": r.usage,
                        "last_delta_at": r.last_delta_at,
                    }
                    for r in self.fake.requests
                ],
            )
            return
        if path == "/v1/models" and self.fake.models is not None:
            self.fake.models_served += 1
            self._send_json(200, _models_page(self.fake.models, self.fake.listed_limits()))
            return
        self._send_error(None, 404, "not_found_error", f"Not found: {path}")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self._drain_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        if path.startswith("/_fake/"):
            self._control(path, body)
            return
        record = self.fake._record("POST", path, headers, body)
        try:
            if path == "/v1/messages":
                self._messages(record, raw)
            elif path == "/v1/messages/count_tokens":
                self._count_tokens(record, raw)
            elif path == "/v1/files":
                self._upload(record, raw)
            else:
                self._send_error(record, 404, "not_found_error", f"Not found: {path}")
        except _ClientGone:
            record.disconnected = True
            self.close_connection = True

    def do_DELETE(self) -> None:
        path = self.path.split("?", 1)[0]
        self._drain_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = self.fake._record("DELETE", path, headers, None)
        if not path.startswith("/v1/files/"):
            self._send_error(record, 404, "not_found_error", f"Not found: {path}")
            return
        if not self._check_auth(record):
            return
        try:
            answer = self.fake.files.delete(headers, path.removeprefix("/v1/files/"))
        except FileRequestError as exc:
            self._send_error(record, exc.status, exc.error_type, exc.message)
            return
        record.status = 200
        self._send_json(200, answer)

    def _drain_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _control(self, path: str, body: Any) -> None:
        if path == "/_fake/push" and isinstance(body, dict):
            allowed = {f.name for f in fields(Behaviour)} - {"when"}
            unknown = set(body) - allowed
            if unknown:
                self._send_error(None, 400, "invalid_request_error", f"unknown fields {unknown}")
                return
            body["gate"] = self.fake.http_gate if body.get("gate") is True else None
            self.fake.push(**body)
            self._send_json(200, {"pending": self.fake.pending})
        elif path == "/_fake/open":
            self.fake.http_gate.set()
            self._send_json(200, {"ok": True})
        elif path == "/_fake/reset":
            self.fake.reset()
            self._send_json(200, {"ok": True})
        else:
            self._send_error(None, 404, "not_found_error", f"Not found: {path}")

    def _check_auth(self, record: RecordedRequest) -> bool:
        key = record.headers.get("x-api-key") or ""
        bearer = record.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = key or bearer
        if not given or (self.fake.api_key is not None and given != self.fake.api_key):
            record.behaviour = "auth"
            self._send_error(record, 401, "authentication_error", "invalid x-api-key")
            return False
        return True

    def _upload(self, record: RecordedRequest, raw: bytes) -> None:
        if not self._check_auth(record):
            return
        try:
            meta = self.fake.files.upload(record.headers, raw)
        except FileRequestError as exc:
            self._send_error(record, exc.status, exc.error_type, exc.message)
            return
        record.status = 200
        self._send_json(200, meta)

    def _resolved(self, record: RecordedRequest) -> tuple[bool, Any]:
        """The body with its named files' bytes in place; ``(False, None)`` once refused."""
        try:
            return True, self.fake.files.resolve(record.body, record.headers)
        except FileRequestError as exc:
            record.behaviour = "invalid"
            self._send_error(record, exc.status, exc.error_type, exc.message)
            return False, None

    def _count_tokens(self, record: RecordedRequest, raw: bytes) -> None:
        if not self._check_auth(record):
            return
        ok, body = self._resolved(record)
        if not ok:
            return
        try:
            if body is None:
                raise _InvalidRequest(f"request body is not valid JSON: {raw[:40]!r}")
            if self.fake.validate:
                self.fake._validate(body, count_only=True)
                self.fake._validate_compaction(body, record.headers, asks=False)
        except _InvalidRequest as exc:
            record.behaviour = "invalid"
            self._send_error(record, exc.status, exc.error_type, exc.message)
            return
        behaviour = self.fake._take(record, "count_tokens")
        if behaviour is not None:
            record.behaviour = behaviour.kind
            if behaviour.delay:
                self._wait(behaviour.delay)
            if behaviour.kind == "hang":
                self._wait(behaviour.hang_seconds)
            if behaviour.kind == "error":
                self._scripted_error(record, behaviour)
                return
        tokens = self.fake.input_tokens(body)
        record.usage = {"input_tokens": tokens}
        record.status = 200
        self._send_json(200, {"input_tokens": tokens})

    def _scripted_error(self, record: RecordedRequest, behaviour: Behaviour) -> None:
        status = behaviour.status
        if behaviour.kind == "sse_error":
            status = _STATUS_FOR_TYPE.get(behaviour.error_type or "", 500)
        default_type, default_message = _ERROR_TYPES.get(
            status, ("api_error" if status >= 500 else "invalid_request_error", "Error")
        )
        error_type = behaviour.error_type or default_type
        message = behaviour.message or default_message
        if status == 404 and behaviour.message is None and isinstance(record.body, dict):
            message = f"model: {record.body.get('model')}"
        headers = dict(behaviour.headers)
        retry_after = behaviour.retry_after
        if retry_after is None and status == 429:
            retry_after = _DEFAULT_429_RETRY_AFTER
        if retry_after is not None:
            headers["retry-after"] = _format_seconds(retry_after)
        self._send_error(record, status, error_type, message, headers)

    def _messages(self, record: RecordedRequest, raw: bytes) -> None:
        if not self._check_auth(record):
            return
        ok, body = self._resolved(record)
        if not ok:
            return
        try:
            if body is None:
                raise _InvalidRequest(f"request body is not valid JSON: {raw[:40]!r}")
            if self.fake.validate:
                self.fake._validate(body)
                check_reply_request(
                    body, self.fake.adaptive_ok, self.fake.signature, self.fake.newest_tools_ok
                )
                check_search_results(body)
                body = check_bindings(body, self.fake.bindings)
            self.fake._validate_compaction(body, record.headers, asks=record.is_compaction)
        except _InvalidRequest as exc:
            record.behaviour = "invalid"
            self._send_error(record, exc.status, exc.error_type, exc.message)
            return
        except ReplyRequestError as exc:
            record.behaviour = "invalid"
            self._send_error(record, 400, "invalid_request_error", str(exc))
            return
        behaviour = self.fake._take(record, "messages") or Behaviour(kind="reply")
        record.behaviour = behaviour.kind
        if behaviour.delay:
            self._wait(behaviour.delay)
        if behaviour.kind == "error":
            self._scripted_error(record, behaviour)
            return
        if behaviour.kind == "hang" and behaviour.after_chunks < 0:
            self._wait(behaviour.hang_seconds)
            self.close_connection = True
            raise _ClientGone
        reply = _Reply.build(self.fake, body, behaviour)
        for block in reply.content():
            if block.get("type") == "thinking":  # bound to this model and prefix
                self.fake.bindings.setdefault(str(block.get("signature")), []).append(binding(body))
        record.usage = reply.usage
        if body.get("stream"):
            self._stream(record, body, behaviour, reply)
        else:
            self._whole(record, body, behaviour, reply)

    # -- responses ---------------------------------------------------------------------------

    def _whole(
        self, record: RecordedRequest, body: dict[str, Any], behaviour: Behaviour, reply: _Reply
    ) -> None:
        if behaviour.kind == "sse_error":
            self._scripted_error(record, behaviour)
            return
        full = json.dumps(reply.message(body, final=True)).encode()
        # malformed: a well-framed body that is not JSON; drop/hang: a cut-off body.
        data = full[: len(full) // 2] if behaviour.kind == "malformed" else full
        record.status = 200
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.fake._next_id("req"))
        for name, value in behaviour.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if behaviour.kind in ("drop", "hang"):
            self._write(data[: len(data) // 2])
            if behaviour.kind == "hang":
                self._wait(behaviour.hang_seconds)
            self._reset()
            return
        self._write(data)
        if behaviour.kind == "malformed":
            self.close_connection = True

    def _reset(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            # Linger 0: closing sends a reset, like a proxy or NAT dropping the flow.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        raise _ClientGone

    def _chunk(self, data: bytes) -> None:
        self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _event(self, name: str, payload: Any) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())

    def _stream(
        self, record: RecordedRequest, body: dict[str, Any], behaviour: Behaviour, reply: _Reply
    ) -> None:
        record.status = 200
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", self.fake._next_id("req"))
        for name, value in behaviour.headers.items():
            self.send_header(name, value)
        self.end_headers()
        events = reply.events(body)
        fault = (
            behaviour.kind if behaviour.kind in ("sse_error", "drop", "malformed", "hang") else None
        )
        fault_at = _fault_position(events, behaviour.after_chunks) if fault else -1
        delay = (
            behaviour.chunk_delay if behaviour.chunk_delay is not None else self.fake.chunk_delay
        )
        for position, (name, payload) in enumerate(events):
            if position == fault_at and self._fault(behaviour):
                return
            if name == "content_block_delta" and delay > 0:
                self._wait(delay)
            self._event(name, payload)
            if name == "content_block_delta":
                record.last_delta_at = time.monotonic()
        self._chunk(b"")

    def _fault(self, behaviour: Behaviour) -> bool:
        """Perform a mid-stream fault; True when the response is over."""
        if behaviour.kind == "sse_error":
            error_type = behaviour.error_type or "overloaded_error"
            message = behaviour.message or _message_for_type(error_type)
            self._event(
                "error", {"type": "error", "error": {"type": error_type, "message": message}}
            )
            self._chunk(b"")
            return True
        if behaviour.kind == "drop":
            if behaviour.abrupt:
                self._reset()
            self._chunk(b"")
            return True
        if behaviour.kind == "malformed":
            self._chunk(
                b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
                b'"delta": {"type": "text_delta", "text": "oops\n\n'
            )
            self._chunk(b"")
            self.close_connection = True
            return True
        # hang mid-stream (until the gate opens), then carry on as if nothing happened
        self._wait(behaviour.hang_seconds, behaviour.gate)
        return False


@dataclass
class _Reply:
    """The content of one successful (or faulted) reply."""

    message_id: str
    model: str
    text: str
    thinking: str | None
    tool: dict[str, Any] | None
    stop_reason: str
    usage: dict[str, Any]
    words_per_chunk: int
    compaction: dict[str, Any] | None = None
    stop_details: dict[str, Any] | None = None
    signature: str = ""
    web: list[dict[str, Any]] | None = None
    """Server tool blocks and cited text (``tests/fakes/fake_web.py``) replacing ``text``."""
    diagnostics: dict[str, Any] | None = None
    """Cache diagnostics against the request named (``tests/fakes/fake_diagnostics.py``)."""

    @classmethod
    def build(cls, fake: FakeAnthropic, body: dict[str, Any], behaviour: Behaviour) -> _Reply:
        source = behaviour.text
        if source is None:
            text = "" if behaviour.kind == "tool_use" else fake.default_reply(body)
        elif callable(source):
            text = source(body)
        else:
            text = source
        max_tokens = int(body.get("max_tokens") or 0) or 1_000_000
        stop_reason = "tool_use" if behaviour.kind == "tool_use" else "end_turn"
        tool: dict[str, Any] | None = None
        if behaviour.kind == "tool_use":
            tool = {
                "type": "tool_use",
                "id": behaviour.tool_id or fake._next_id("toolu"),
                "name": behaviour.tool_name,
                "input": behaviour.tool_input,
            }
        thinking = None
        web: list[dict[str, Any]] | None = None
        counts: dict[str, int] = {}
        if not is_compaction_request(body) and not fake.is_summary_request(body):
            prompt = _last_user_text(body)
            thinking = thinking_for(body, prompt, behaviour.thinking)
            if (
                tool is not None
                and text
                and _base_id(str(body.get("model"))) in TOOL_TEXT_AS_THINKING
            ):
                # The text before the call comes back as a thinking block (fake_web.py).
                thinking, text = progress_note(body, text, fake.signature)["thinking"], ""
            found = web_blocks(body, prompt, fake._next_id, fake.signature)
            # A reply the caller scripted (``behaviour.text``, or ``reply_text``: a replay's
            # next line) is what comes back; only a reply of the server's own making is
            # replaced by search results or cited recall.
            own = behaviour.kind == "reply" and behaviour.text is None and fake.reply_text is None
            if found is not None and own:
                web, counts = found
                text = "".join(b["text"] for b in web if b["type"] == "text")
            cited = recall_reply(body, prompt) if found is None else None
            if cited is not None and own:
                web = cited  # text citing the request's search results (tests/fakes/fake_recall.py)
                text = "".join(b["text"] for b in web)
        elif behaviour.thinking is not None:
            thinking = behaviour.thinking
        thought = fake_tokens(thinking) + 8 if thinking is not None else 0  # omitted text: 8
        output = fake_tokens(text) + thought
        if tool is not None:
            output += fake_tokens(json.dumps(tool["input"])) + fake_tokens(tool["name"])
        if output > max_tokens:
            text = text[: max_tokens * 4]
            tool = None
            stop_reason = "max_tokens"
            output = max_tokens
        compaction: dict[str, Any] | None = None
        if (
            is_compaction_request(body)
            and behaviour.kind == "reply"
            and not fake.compaction_ignored
        ):
            # Nothing is sampled after the block; max_tokens bounds the summary.
            compaction = {"type": "compaction", "content": text, "signature": fake.signature(text)}
            stop_reason = "compaction"
        if behaviour.stop_reason is not None:
            stop_reason = behaviour.stop_reason
        stop_details = behaviour.stop_details
        if MAGIC_REFUSAL in _last_user_text(body) and behaviour.stop_reason is None:
            # The docs' test string: a refusal (category and explanation may be null).
            text, stop_reason = "", "refusal"
            stop_details = {"type": "refusal", "category": None, "explanation": None}
        usage = fake._usage(body, output)
        if thinking is not None:
            usage["output_tokens_details"] = {"thinking_tokens": thought}
        if counts:
            usage["server_tool_use"] = counts
            usage["input_tokens"] += sum(
                fake_tokens(json.dumps(b)) for b in web or () if b["type"].endswith("_result")
            )
        if behaviour.usage:
            usage.update(behaviour.usage)
        message_id = fake._next_id("msg")
        return cls(
            message_id=message_id,
            diagnostics=fake.diagnoses.diagnose(body, message_id),
            model=str(body.get("model")),
            text=text,
            thinking=thinking,
            signature=fake.signature(thinking) if thinking is not None else "",
            web=web,
            tool=tool,
            stop_reason=stop_reason,
            usage=usage,
            words_per_chunk=max(1, behaviour.words_per_chunk or fake.words_per_chunk),
            compaction=compaction,
            stop_details=stop_details,
        )

    def content(self) -> list[dict[str, Any]]:
        if self.compaction is not None:
            return [dict(self.compaction)]
        blocks: list[dict[str, Any]] = []
        if self.thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": self.thinking, "signature": self.signature}
            )
        if self.web is not None:
            return blocks + copy.deepcopy(self.web)
        if self.text or self.tool is None:
            blocks.append({"type": "text", "text": self.text})
        if self.tool is not None:
            blocks.append(self.tool)
        return blocks

    def message(self, body: dict[str, Any], *, final: bool) -> dict[str, Any]:
        usage = dict(self.usage)
        if not final:
            usage["output_tokens"] = 1
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content() if final else [],
            "stop_reason": self.stop_reason if final else None,
            "stop_sequence": None,
            **({"stop_details": self.stop_details} if final and self.stop_details else {}),
            **({"diagnostics": self.diagnostics} if self.diagnostics is not None else {}),
            "usage": usage,
        }

    def _pieces(self, text: str) -> list[str]:
        words = re.findall(r"\s*\S+\s*", text) or [text]
        size = self.words_per_chunk
        return ["".join(words[i : i + size]) for i in range(0, len(words), size)]

    def events(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The SSE events of the reply, in the API's order."""
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": self.message(body, final=False)})
        ]
        index = 0
        if self.compaction is not None:
            start = {**self.compaction, "content": None}
            delta = {"type": "compaction_delta", "content": self.compaction["content"]}
            events.append(_block_start(0, start))
            events.append(_delta(0, delta))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        elif self.thinking is not None:
            events.append(
                _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
            )
            for piece in self._pieces(self.thinking) if self.thinking else []:
                events.append(_delta(index, {"type": "thinking_delta", "thinking": piece}))
            events.append(_delta(index, {"type": "signature_delta", "signature": self.signature}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        for block in self.web or ():
            events += block_events(index, block, self._pieces)
            index += 1
        if self.compaction is None and self.web is None and (self.text or self.tool is None):
            events.append(_block_start(index, {"type": "text", "text": ""}))
            if index == 0:
                events.append(("ping", {"type": "ping"}))
            for piece in self._pieces(self.text) if self.text else []:
                events.append(_delta(index, {"type": "text_delta", "text": piece}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        if self.tool is not None:
            start = {**self.tool, "input": {}}
            events.append(_block_start(index, start))
            payload = json.dumps(self.tool["input"])
            for i in range(0, len(payload), 12):
                events.append(
                    _delta(index, {"type": "input_json_delta", "partial_json": payload[i : i + 12]})
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": self.stop_reason,
                        "stop_sequence": None,
                        **({"stop_details": self.stop_details} if self.stop_details else {}),
                    },
                    "usage": dict(self.usage),
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events


def _block_start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _fault_position(events: list[tuple[str, dict[str, Any]]], after_chunks: int) -> int:
    """Index of the event before which a fault happens: right before the
    ``after_chunks + 1``-th delta, or before ``message_delta`` if there are fewer deltas."""
    if after_chunks < 0:
        return 0
    seen = 0
    for position, (name, _) in enumerate(events):
        if name == "content_block_delta":
            if seen == after_chunks:
                return position
            seen += 1
        if name == "message_delta":
            return position
    return len(events) - 1


def _message_for_type(error_type: str) -> str:
    status = _STATUS_FOR_TYPE.get(error_type)
    return _ERROR_TYPES[status][1] if status in _ERROR_TYPES else error_type


def _format_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


_EARLIER = re.compile(r"<earlier_summaries>.*?</earlier_summaries>", re.DOTALL)


def _ttl_is_hour(cache_control: dict[str, Any] | None) -> bool:
    return bool(cache_control) and cast(dict[str, Any], cache_control).get("ttl") == "1h"


def _default_window(model: str) -> int:
    """1M for Opus/Sonnet 4.6 and every 5.x model (models overview), 200k for the older ones."""
    return (
        1_000_000
        if re.search(r"(opus|sonnet)-4-[6-9]|(opus|sonnet|haiku)-5\b|fable", model)
        else 200_000
    )


def _default_cache_minimum(model: str) -> int:
    if re.search(r"opus-4-[56]|haiku-4-5", model):
        return 4096
    if "haiku" in model:
        return 2048
    return 1024


_CONTENT_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "container_upload",
        "compaction",
    }
)
"""Content block types the Messages API accepts (anything else is a 400)."""
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_MAX_IMAGE_BYTES = 5 * 1024 * 1024


def _check_source(block: dict[str, Any], where: str) -> None:
    """Refuse an image or document block whose base64 source the API would refuse."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise _InvalidRequest(f"{where}.source: a base64 source is expected")
    allowed = _IMAGE_TYPES if block["type"] == "image" else ("application/pdf",)
    if source.get("media_type") not in allowed:
        raise _InvalidRequest(f"{where}.source.media_type: must be one of {', '.join(allowed)}")
    try:
        data = base64.b64decode(str(source.get("data") or ""), validate=True)
    except ValueError:
        raise _InvalidRequest(f"{where}.source.data: invalid base64 data") from None
    if not data:
        raise _InvalidRequest(f"{where}.source.data: must not be empty")
    if block["type"] == "image" and len(data) > _MAX_IMAGE_BYTES:
        raise _InvalidRequest(f"{where}: image exceeds 5 MB maximum: {len(data)} bytes")
    if block["type"] == "document" and not data.startswith(b"%PDF-"):
        raise _InvalidRequest(f"{where}: the PDF specified was not valid")


def _base_id(model: str) -> str:
    """``model`` without a date suffix (``claude-haiku-4-5-20251001`` → ``claude-haiku-4-5``)."""
    return re.sub(r"-\d{8}$", "", model.strip().lower())


def model_entry(
    max_input_tokens: int,
    max_tokens: int,
    *,
    adaptive: bool = True,
    web_search: bool = True,
    dynamic_filtering: bool = False,
) -> dict[str, Any]:
    """The fields ``GET /v1/models`` gives a model beyond its id and name (Claude's Models API
    reference, "List Models": ``max_input_tokens``, ``max_tokens``, ``capabilities`` with
    every known capability as an object with ``supported``; SDK 2.15 ``ModelCapabilities``).
    ``dynamic_filtering``: ``capabilities.code_execution``, what the newest web tool versions
    (``web_search_20260318`` / ``web_fetch_20260318``) need; the list names no tool versions."""

    def yes(flag: bool = True) -> dict[str, bool]:
        return {"supported": flag}

    return {
        "max_input_tokens": max_input_tokens,
        "max_tokens": max_tokens,
        "capabilities": {
            "batch": yes(),
            "citations": yes(),
            "code_execution": yes(dynamic_filtering),
            "context_management": {
                "supported": True,
                "clear_thinking_20251015": yes(),
                "clear_tool_uses_20250919": yes(),
                "compact_20260112": yes(adaptive),
            },
            "effort": {
                "supported": adaptive,
                **{level: yes(adaptive) for level in ("low", "medium", "high", "max")},
            },
            "image_input": yes(),
            "pdf_input": yes(),
            "server_tools": {
                "supported": web_search,
                "web_search": yes(web_search),
                "code_execution": yes(False),
            },
            "structured_outputs": yes(),
            "thinking": {
                "supported": True,
                "types": {
                    "adaptive": yes(adaptive),
                    "enabled": yes(),
                    "disabled": yes(),
                    "between_tools": yes(False),
                },
            },
        },
    }


def _models_page(models: list[str], limits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One page of ``GET /v1/models`` listing ``models`` (with their limits where known)."""
    data = [
        {
            "type": "model",
            "id": m,
            "display_name": m,
            "created_at": "2026-01-01T00:00:00Z",
            "lifecycle": "active",
            **limits.get(m, {}),
        }
        for m in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": models[0] if models else None,
        "last_id": models[-1] if models else None,
    }


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


def _content_text(content: Any) -> str:
    """The text of a message's content: text blocks, tool results, tool inputs."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_content_text(block.get("content")))
        elif block.get("type") == "tool_use":
            parts.append(f"{block.get('name')} {json.dumps(block.get('input'))}")
        elif block.get("type") == "compaction":
            parts.append(str(block.get("content") or ""))
    return "\n".join(p for p in parts if p)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _tagged_sections(text: str) -> str:
    """The insides of ``<tag>…</tag>`` sections (``<messages>``, ``<previous_summary>`` …)
    when a prompt has any, so that the instructions around them are not summarised."""
    sections = [
        inner
        for tag, inner in re.findall(r"<([A-Za-z_][\w-]*)>(.*?)</\1>", text, re.DOTALL)
        if tag.lower() != "summary" and inner.strip()
    ]
    return "\n".join(sections) if sections else text


def _first_sentence(paragraph: str) -> str:
    text = " ".join(paragraph.split())
    if not text:
        return ""
    match = re.search(r"(?<=[.!?])\s", text)
    return text[: match.start()] if match else text


def _block_tokens(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return fake_tokens(str(block.get("text", "")))
    if kind == "tool_result":
        return fake_tokens(_content_text(block.get("content"))) + 1
    if kind == "tool_use":
        return fake_tokens(str(block.get("name", ""))) + fake_tokens(json.dumps(block.get("input")))
    if kind == "compaction":
        return fake_tokens(str(block.get("content") or ""))
    if kind == "image":
        return 1_600  # an image's documented ceiling, whatever its base64 length
    if kind == "document":
        return 2_250 * max(1, len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", _data(block))))
    if kind in ("thinking", "redacted_thinking"):
        return 0  # previous turns' thinking is not counted as input by the API
    return fake_tokens(json.dumps(_without_cache_control(block), sort_keys=True))


def _data(block: dict[str, Any]) -> bytes:
    source = block.get("source")
    try:
        return base64.b64decode(str(source.get("data") or "")) if isinstance(source, dict) else b""
    except ValueError:
        return b""


def _without_cache_control(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _segments(body: dict[str, Any]) -> list[_Segment]:
    """The request as the ordered blocks that prompt caching works on: tools, system,
    messages."""
    segments: list[_Segment] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            key = json.dumps(_without_cache_control(tool), sort_keys=True)
            segments.append(_Segment("tool:" + key, fake_tokens(key), tool.get("cache_control")))
    system = body.get("system")
    if isinstance(system, str) and system:
        segments.append(_Segment("system:" + system, fake_tokens(system), None))
    elif isinstance(system, list):
        for block in system:
            if isinstance(block, dict):
                key = json.dumps(_without_cache_control(block), sort_keys=True)
                text = str(block.get("text", ""))
                segments.append(
                    _Segment("system:" + key, fake_tokens(text), block.get("cache_control"))
                )
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                key = json.dumps(_without_cache_control(block), sort_keys=True)
                segments.append(
                    _Segment(f"{role}:{key}", _block_tokens(block), block.get("cache_control"))
                )
    top = body.get("cache_control")
    if isinstance(top, dict) and segments:
        segments[-1].cache_control = top
    return segments


try:
    import pytest
except ImportError:  # pragma: no cover - standalone use without pytest
    pass
else:
    # Registered under the name tests use; the function has another name so that a test
    # parameter ``fake_anthropic`` does not shadow an imported name (ruff F811).
    @pytest.fixture(name="fake_anthropic")
    def fake_anthropic_server() -> Iterator[FakeAnthropic]:
        """A fresh :class:`FakeAnthropic` server for one test (fixture ``fake_anthropic``)."""
        with FakeAnthropic() as server:
            yield server


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted, printing its URL on the first line."""
    parser = argparse.ArgumentParser(description="Anthropic-compatible fake API server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between deltas")
    parser.add_argument("--chunks-per-second", type=float, default=None)
    parser.add_argument("--words-per-chunk", type=int, default=3)
    parser.add_argument("--cache-min-tokens", type=int, default=None)
    parser.add_argument("--summary-marker", default="<summary>")
    parser.add_argument("--reply", default=None, help="answer every chat request with this text")
    args = parser.parse_args(argv)
    server = FakeAnthropic(args.host, args.port, summary_marker=args.summary_marker)
    server.chunk_delay = (
        1.0 / args.chunks_per_second if args.chunks_per_second else args.chunk_delay
    )
    server.words_per_chunk = args.words_per_chunk
    server.cache_min_tokens = args.cache_min_tokens
    server.reply_text = args.reply
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        done.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
