"""Turn every failure of an API call into a :class:`ChatError` with a clear reason.

The SDK raises typed ``anthropic`` exceptions for HTTP errors, ``APIStatusError`` with the
HTTP 200 response for an SSE ``error`` event, and raw ``httpx2`` transport exceptions when
the connection fails *while a stream is being read*. :func:`map_error` handles all of them
and never lets an API key through into the text the user (or a log) will see.

``anthropic`` and ``httpx2`` are only imported inside :func:`map_error`, which is only called
once the SDK has been loaded, so importing this module stays cheap.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

if TYPE_CHECKING:
    import httpx2

__all__ = ["KINDS", "ChatError", "ErrorKind", "map_error", "name_refused_file", "scrub"]

ErrorKind = Literal[
    "no_key",
    "auth",
    "permission",
    "not_found",
    "too_large",
    "rate_limit",
    "server",
    "overloaded",
    "timeout",
    "connection",
    "stream_error",
    "bad_request",
    "incomplete",
    "unsupported",
    "refused",
]

KINDS: Final[tuple[str, ...]] = get_args(ErrorKind)

_RETRYABLE: Final = frozenset(
    {"rate_limit", "server", "overloaded", "timeout", "connection", "stream_error", "incomplete"}
)

_SECRET_PATTERNS: Final = (
    # Anthropic keys (sk-ant-api03-…) and any other sk-… style secret.
    re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9][A-Za-z0-9_\-]{6,}"),
    # Header values echoed back by proxies and gateways.
    re.compile(
        r"(?i)((?:x-api-key|authorization|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',}]+"
    ),
)
_REDACTED: Final = "[redacted]"
_MAX_DETAIL: Final = 300
_BAD_ENDPOINT_HINT: Final = (
    "retry; if it keeps happening, check that `base_url` points to an Anthropic-compatible API"
)


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove API keys and other secrets from a text.

    Args:
        text: Any text that may end up on screen, in the database or in a log.
        secrets: Exact values to remove as well (e.g. the configured API key).

    Returns:
        The text with every secret replaced by ``[redacted]``.
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, _REDACTED)
    text = _SECRET_PATTERNS[0].sub(_REDACTED, text)
    return _SECRET_PATTERNS[1].sub(lambda m: m.group(1) + _REDACTED, text)


class ChatError(Exception):
    """A failed API call, explained for the user.

    ``str(error)`` is the ``message``. Secrets are scrubbed from ``message`` and ``hint``
    on construction.

    Attributes:
        kind: The broad reason, one of :data:`KINDS`.
        message: What happened, as a one-line sentence.
        hint: What the user can do about it.
        status: The HTTP status of the failed response, when there was one.
        retry_after: Seconds the API asked to wait before retrying, when it said.
    """

    kind: ErrorKind
    message: str
    hint: str
    status: int | None
    retry_after: float | None

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        hint: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        message = scrub(message)
        hint = scrub(hint)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True when trying the same request again later may succeed."""
        return self.kind in _RETRYABLE

    @property
    def display(self) -> str:
        """The message followed by the hint, for a status line or an error record."""
        return f"{self.message} — {self.hint}" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        """Serialise for logs, JSON output and the failed-summary record."""
        return {
            "kind": self.kind,
            "message": self.message,
            "hint": self.hint,
            "status": self.status,
            "retry_after": self.retry_after,
        }

    def __repr__(self) -> str:
        return f"ChatError({self.kind!r}, {self.message!r}, status={self.status!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's default reduction would call ChatError(message) and lose the kind.
        state = {"status": self.status, "retry_after": self.retry_after}
        return (type(self), (self.kind, self.message, self.hint), state)


def map_error(exc: BaseException, *, secrets: Iterable[str | None] = ()) -> ChatError:
    """Explain any exception raised by an SDK call.

    Args:
        exc: The exception (an ``anthropic`` error, an ``httpx2`` transport error raised while
            reading a stream, a decoding error from a malformed stream, or a ``ChatError``,
            which is returned unchanged).
        secrets: Values that must not appear in the result (the configured API key).

    Returns:
        A :class:`ChatError` whose text contains no secret.
    """
    if isinstance(exc, ChatError):
        return exc
    secret_list = [s for s in secrets if s]
    error = _classify(exc, secret_list)
    if secret_list:
        error.message = scrub(error.message, secret_list)
        error.hint = scrub(error.hint, secret_list)
        error.args = (error.message,)
    return error


def _lost_midway(cause: httpx2.TransportError) -> bool:
    """Whether a transport error is a dropped connection rather than one never made."""
    import httpx2

    never_made = httpx2.ConnectError | httpx2.ProxyError | httpx2.UnsupportedProtocol
    return not isinstance(cause, never_made | httpx2.TimeoutException)


def _classify(exc: BaseException, secrets: list[str]) -> ChatError:
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        return _from_status_error(exc, secrets)
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return ChatError(
            "timeout",
            "the API did not answer in time",
            "check your connection and retry; raise `timeout` in config.toml for long replies",
        )
    cause = exc.__cause__ if isinstance(exc, anthropic.APIConnectionError) else None
    if isinstance(cause, httpx2.TransportError) and _lost_midway(cause):
        # anthropic 2.17 wraps a failed read of the reply's body in APIConnectionError too: the
        # server was reached, so say the connection dropped, not that it was never made.
        exc = cause
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({_detail(str(cause), secrets)})" if cause is not None and str(cause) else ""
        return ChatError(
            "connection",
            f"could not reach the API at {_host(exc.request)}{detail}",
            "check your network connection, proxy and `base_url` (ANTHROPIC_BASE_URL)",
        )
    if isinstance(exc, httpx2.TransportError):
        reason = _detail(str(exc), secrets) or type(exc).__name__
        return ChatError(
            "connection",
            f"the connection was lost during the reply ({reason})",
            "retry; the partial reply was kept",
        )
    if isinstance(exc, anthropic.CredentialsError):
        return ChatError(
            "auth",
            f"the API credentials could not be loaded: {_detail(str(exc), secrets)}",
            "set ANTHROPIC_API_KEY or `api_key` in config.toml",
        )
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ChatError(
            "stream_error",
            "the API sent a response tui-chat could not understand",
            _BAD_ENDPOINT_HINT,
            status=exc.status_code,
        )
    # A malformed SSE stream surfaces as a JSON decoding error or an SDK accumulation error
    # (unexpected event order, unknown block index).
    name = type(exc).__name__
    text = _detail(str(exc), secrets)
    return ChatError(
        "stream_error",
        f"the reply stream was malformed ({name}: {text})"
        if text
        else f"the reply stream was malformed ({name})",
        _BAD_ENDPOINT_HINT,
    )


def _from_status_error(exc: Any, secrets: list[str]) -> ChatError:
    status: int = int(exc.status_code)
    error_type: str | None = exc.type if isinstance(exc.type, str) else None
    api_message = exc.api_message if isinstance(exc.api_message, str) else None
    if api_message is None and isinstance(exc.body, str) and exc.body.strip():
        api_message = exc.body
    detail = _detail(api_message, secrets) if api_message else ""
    suffix = f": {detail}" if detail else ""
    retry_after = _retry_after(exc.response.headers) if status != 200 else None

    # An SSE `error` event arrives on the HTTP 200 stream: classify by the error type.
    if status < 400:
        return _from_stream_error_event(error_type, detail)

    if error_type == "overloaded_error" or status == 529:
        return ChatError(
            "overloaded",
            f"the API is overloaded ({status})",
            "retry in a few seconds, or switch to another model",
            status=status,
            retry_after=retry_after,
        )
    if status == 401:
        return ChatError(
            "auth",
            f"the API key was rejected (401){suffix}",
            "check ANTHROPIC_API_KEY or `api_key` in config.toml",
            status=status,
        )
    if status in (402, 403):
        return ChatError(
            "permission",
            f"this API key is not allowed to make this request ({status}){suffix}",
            "check the key's workspace, plan and billing, or choose another model",
            status=status,
        )
    if status == 404 and _request_path(exc).endswith("/count_tokens"):
        return ChatError(
            "not_found",
            f"this endpoint does not support token counting (404){suffix}",
            "local estimates are used instead; check `base_url` if you expected support",
            status=status,
        )
    if status == 404:
        return ChatError(
            "not_found",
            f"model not found: check the model name (404){suffix}",
            "set a valid model id (e.g. claude-sonnet-5-5); with a gateway, also check `base_url`",
            status=status,
        )
    if status == 413 or _is_prompt_too_long(api_message):
        return ChatError(
            "too_large",
            f"the request is too large for the model ({status}){suffix}",
            "compact the conversation (or unpin large messages) and send again",
            status=status,
        )
    if status == 429 or error_type == "rate_limit_error":
        wait = (
            f"wait {_seconds(retry_after)} and retry" if retry_after else "wait a moment and retry"
        )
        return ChatError(
            "rate_limit",
            f"rate limited by the API (429){suffix}",
            wait,
            status=status,
            retry_after=retry_after,
        )
    if status == 408 or status == 504 or error_type == "timeout_error":
        return ChatError(
            "timeout",
            f"the API timed out ({status}){suffix}",
            "retry; long requests may need a smaller context",
            status=status,
            retry_after=retry_after,
        )
    if status >= 500:
        return ChatError(
            "server",
            f"the API had an internal error ({status}){suffix}",
            "retry in a moment; see https://status.anthropic.com if it persists",
            status=status,
            retry_after=retry_after,
        )
    return ChatError(
        "bad_request",
        f"the API rejected the request ({status}){suffix}",
        "this is probably a bug in how tui-chat built the request; `tui-chat context` shows it",
        status=status,
    )


def _from_stream_error_event(error_type: str | None, detail: str) -> ChatError:
    suffix = f": {detail}" if detail else ""
    if error_type == "overloaded_error":
        return ChatError(
            "overloaded",
            f"the API became overloaded during the reply{suffix}",
            "retry in a few seconds; the partial reply was kept",
        )
    if error_type == "rate_limit_error":
        return ChatError(
            "rate_limit",
            f"rate limited during the reply{suffix}",
            "wait a moment and retry; the partial reply was kept",
        )
    if error_type == "api_error":
        return ChatError(
            "server",
            f"the API had an internal error during the reply{suffix}",
            "retry in a moment; the partial reply was kept",
        )
    kind = f" ({error_type})" if error_type else ""
    return ChatError(
        "stream_error",
        f"the API reported an error during the reply{kind}{suffix}",
        "retry; the partial reply was kept",
    )


def _is_prompt_too_long(api_message: str | None) -> bool:
    if not api_message:
        return False
    lowered = api_message.lower()
    return "prompt is too long" in lowered or "exceed context limit" in lowered


def _detail(text: str | None, secrets: list[str]) -> str:
    """One line of an API or exception message, scrubbed and shortened."""
    if not text:
        return ""
    text = _unwrap_json_message(text)
    line = " ".join(scrub(text, secrets).split())
    if len(line) > _MAX_DETAIL:
        line = line[: _MAX_DETAIL - 1] + "…"
    return line


def _unwrap_json_message(text: str) -> str:
    """Extract ``error.message`` from a JSON error body sent with a non-JSON content type."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        body = json.loads(stripped)
    except ValueError:
        return text
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return text


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 1 else f"{value:.1f} s"


def _request_path(exc: Any) -> str:
    try:
        return str(exc.request.url.path)
    except Exception:
        return ""


def _host(request: Any) -> str:
    try:
        return str(request.url.host) or "the configured endpoint"
    except Exception:
        return "the configured endpoint"


_BLOCK_PATH = re.compile(r"messages\.(\d+)\.content\.(\d+)[\w.]*:?\s*(.*)")


def name_refused_file(error: ChatError, request: Mapping[str, Any]) -> ChatError:
    """A request the API refused at an attached file says which file, and why.

    The API names the refused block by its path (``messages.3.content.0…: image exceeds 5 MB
    maximum``); ``request`` is the built request, whose blocks at those places are still
    the attachment references, with their names.

    Args:
        error: The mapped error (:func:`map_error`).
        request: The request before its attachments were expanded.

    Returns:
        ``error`` itself unless it is a refused attachment; then the file's name, the API's
        reason and what to do.
    """
    match = _BLOCK_PATH.search(error.message)
    if error.kind != "bad_request" or match is None:
        return error
    try:
        block = request["messages"][int(match.group(1))]["content"][int(match.group(2))]
    except (KeyError, IndexError, TypeError):
        return error
    if not isinstance(block, Mapping) or block.get("type") != "attachment":
        return error
    name = str(block.get("name") or "a file")
    reason = match.group(3) or error.message
    return ChatError(
        "bad_request",
        f"the API refused the attached file {name} ({error.status}): {reason}",
        f"{name} is sent again with every request of this conversation: edit the prompt "
        "that attached it (a fork without the file) or fork before it",
        status=error.status,
    )
