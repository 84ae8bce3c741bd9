"""The request builder: what is sent to the model, exactly, and what each part costs.

:func:`build_request` turns a conversation's state (system prompt, active summary, pins,
recalled excerpts, unsummarised messages and the new message) into the keyword arguments of
``messages.create`` / ``messages.stream`` plus a token :class:`Breakdown` for the gauge
(DESIGN.md section 5). It is pure: same inputs, same request, byte for byte.

Layout of a request::

    system   = [base system prompt]
               [memory: summary + pinned messages older than the raw window]  <- cache breakpoint
    messages = raw turns after the summary's coverage    <- cache breakpoint on the last block
               + the new user message: [recalled excerpts] [its own content]

The memory block only changes when a compaction or a pin changes it, so between compactions the
whole prefix is read from the prompt cache. Recalled excerpts change with every message, so they
travel inside the new message, after the cached prefix: anywhere earlier (in ``system``) they
would invalidate the cached history on every turn. Without excerpts the breakpoint sits on the
new message itself, which the next request sends again unchanged.

With ``single_user_message`` (seed 000) everything goes into one user message with
``[CONVERSATION CONTEXT]``, ``[RECENT MESSAGES]`` and ``[CURRENT MESSAGE]`` sections instead.

Guarantees: the first message is a user message, roles alternate, every ``tool_use`` is
answered by a ``tool_result`` in the next message (anything else is sent as plain text),
thinking and empty text blocks are never sent, and the request fits the usable window
(window minus max output) whenever :attr:`BuiltRequest.fits` is true. When it would not fit,
recalled excerpts go first, then the oldest raw turns, then pins, then the summary — each with
a warning, never silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Literal

from tui_chat.core.models import Anchor, ContentBlock, Message, Role, Summary
from tui_chat.core.presets import Policy
from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter, calibrate
from tui_chat.core.turns import group_turns, message_tokens

SECTIONS: tuple[str, ...] = ("system", "anchors", "summary", "recall", "recent", "new_message")
"""The keys of :attr:`Breakdown.sections`, in request order."""

MEMORY_PREAMBLE = (
    "# Memory of this conversation\n"
    "The earlier part of this conversation is not repeated in the messages; "
    "this memory stands in for it."
)
RECALL_HEADER = (
    "# Recalled from the summarized part of this conversation\n"
    "Verbatim excerpts found by search for the current message; they may be cut."
)
PINNED_HEADER = "## Pinned messages (verbatim)"
CUT_NOTE = "[… cut {n} chars]"
CONTINUED_TEXT = "(continued from earlier in this conversation)"
SINGLE_CONTEXT_HEADER = (
    "[CONVERSATION CONTEXT]\nThe following is a summary of our earlier conversation:"
)

_Section = Literal["recent", "new_message"]
_SERVER_USE_TYPES = ("server_tool_use", "mcp_tool_use")


# -- rendering --------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render_block(block: Mapping[str, Any]) -> str:
    """Render one content block as plain text (anchors, excerpts, the single-message format).

    Args:
        block: One Anthropic content block.

    Returns:
        Its text; tool calls and results as bracketed lines; thinking as the empty string.
    """
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind in ("thinking", "redacted_thinking"):
        return ""
    if kind in ("tool_use", *_SERVER_USE_TYPES):
        return f"[tool call {block.get('name', '?')}: {_json(block.get('input', {}))}]"
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            body = render_content(inner)
        else:
            body = "" if inner is None else str(inner)
        flag = " (error)" if block.get("is_error") else ""
        return f"[tool result{flag}: {body}]"
    if kind == "image":
        return "[image]"
    if kind == "document":
        title = block.get("title")
        return f"[document: {title}]" if title else "[document]"
    rest = {key: value for key, value in block.items() if key != "type"}
    return f"[{kind}: {_json(rest)}]"


def render_content(content: Iterable[Mapping[str, Any]]) -> str:
    """Render content blocks as plain text, one non-empty block per paragraph.

    Args:
        content: Anthropic content blocks.

    Returns:
        The rendered text.
    """
    parts = (render_block(block) for block in content)
    return "\n\n".join(part for part in parts if part.strip())


def _message_text(message: Message) -> str:
    return render_content(message.content) or message.text


def summary_section(summary: Summary) -> str:
    """The summary part of the memory block, headed by its coverage and version.

    Args:
        summary: The active summary version.

    Returns:
        The section text; byte-identical for the same version.
    """
    return (
        f"## Summary of messages up to #{summary.covers_to_message_id} "
        f"({summary.covered_messages} messages, version {summary.version})\n"
        f"{summary.text.strip()}"
    )


def anchor_entry(anchor: Anchor, message: Message) -> str:
    """One pinned message as the memory block carries it: id, role, time, note, then text.

    Args:
        anchor: The pin.
        message: The pinned message.

    Returns:
        The entry text (empty when the message has nothing to send).
    """
    text = _message_text(message).strip()
    if not text:
        return ""
    note = anchor.note.strip()
    label = f"[#{message.id} {message.role}, {message.created_at}"
    label += f", note: {note}]" if note else "]"
    return f"{label}\n{text}"


def _anchors_section(entries: Sequence[str]) -> str:
    return "\n\n".join([PINNED_HEADER, *entries]) if entries else ""


def memory_text(summary: Summary | None, anchors: Sequence[tuple[Anchor, Message]]) -> str:
    """The memory block: the summary with its coverage, then the given pins in order.

    The caller chooses which pins go here (those older than the raw window, within budget);
    :func:`build_request` does. Same summary and pins give the same bytes, which is what keeps
    the prompt cache warm between compactions.

    Args:
        summary: The active summary version, or ``None``.
        anchors: Pinned messages to carry, in conversation order.

    Returns:
        The block's text, or the empty string when there is nothing to remember.
    """
    entries = [entry for entry in (anchor_entry(a, m) for a, m in anchors) if entry]
    summary_text = summary_section(summary) if summary is not None else ""
    return _memory_block(summary_text, _anchors_section(entries))


def _memory_block(summary_text: str, anchors_text: str) -> str:
    parts = [part for part in (summary_text, anchors_text) if part]
    return "\n\n".join([MEMORY_PREAMBLE, *parts]) if parts else ""


def _excerpt_entry(message: Message, text: str) -> str:
    return f"[#{message.id} {message.role}, {message.created_at}]\n{text}"


# -- public records ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextInputs:
    """Everything :func:`build_request` needs; the engine gathers it from the store."""

    model: str
    """Model id sent as ``model``."""
    context_window: int
    """The model's context window in tokens (after any policy override)."""
    max_output: int
    """``max_tokens`` of the reply; the usable window is ``context_window - max_output``."""
    system_prompt: str
    """The conversation's base system prompt (may be empty)."""
    policy: Policy
    """The resolved policy."""
    summary: Summary | None
    """The active completed summary version, or ``None``."""
    anchors: Sequence[tuple[Anchor, Message]]
    """Every pinned message of the conversation, in conversation order."""
    recalled: Sequence[Message]
    """Candidate excerpts from the compacted prefix, best first."""
    raw_messages: Sequence[Message]
    """Every message after the summary's coverage, in order."""
    new_message: list[ContentBlock] | None
    """The user's new message (``None``: preview or retry of what is stored)."""
    counter: TokenCounter
    """Counts what is not already counted (``Message.token_count`` is reused)."""
    calibration: float = 1.0
    """Real / estimated input ratio for the model (see ``tokens.update_calibration``)."""


@dataclass(frozen=True)
class Breakdown:
    """Where the tokens of a request go, for the gauge and ``tui-chat context``."""

    window: int
    """The context window."""
    max_output: int
    """Tokens reserved for the reply."""
    usable: int
    """``window - max_output``: what the request itself may take."""
    sections: dict[str, int]
    """Tokens per part, keys exactly :data:`SECTIONS`."""
    input_tokens: int
    """Sum of ``sections`` (local estimate)."""
    calibrated_tokens: int
    """``input_tokens`` scaled by the model's calibration ratio."""
    trigger_tokens: int | None
    """Request size at which the policy's trigger fires (``None`` for the turns trigger)."""
    warn_tokens: int
    """``policy.warn_ratio × usable``: where the gauge turns to the warning colour."""
    warnings: tuple[str, ...]
    """Visible notes: pins over budget, dropped turns, cut messages, a request that won't fit."""
    calibration: float = 1.0
    """The ratio ``calibrated_tokens`` was computed with."""

    def to_dict(self) -> dict[str, Any]:
        """Serialise for ``context --json`` and exports."""
        return {
            "window": self.window,
            "max_output": self.max_output,
            "usable": self.usable,
            "input_tokens": self.input_tokens,
            "calibrated_tokens": self.calibrated_tokens,
            "calibration": self.calibration,
            "trigger_tokens": self.trigger_tokens,
            "warn_tokens": self.warn_tokens,
            "sections": dict(self.sections),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class BuiltRequest:
    """The exact request the next send makes, and what it carries."""

    request: dict[str, Any]
    """Keyword arguments for ``messages.create`` / ``messages.stream``: ``model``, ``system``
    (a list of text blocks; absent when there is none), ``messages``, ``max_tokens``."""
    breakdown: Breakdown
    """Token breakdown of ``request``."""
    sent_message_ids: tuple[int, ...]
    """Stored messages sent as messages (raw), in order."""
    anchor_ids: tuple[int, ...]
    """Pinned messages carried in the memory block (pins inside the raw window are in
    ``sent_message_ids``)."""
    recalled_ids: tuple[int, ...]
    """Messages whose excerpts were recalled."""
    dropped_message_ids: tuple[int, ...]
    """Raw messages left out because the request would not fit the window."""
    fits: bool
    """False only when even the system prompt and the new message exceed the usable window."""


# -- raw message preparation ------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """One stored (or the new) message, cleaned for sending, with its token count."""

    source: Message | None
    role: Role
    content: list[ContentBlock]
    tokens: int
    section: _Section
    cut: bool = False


def _strip_cache_control(value: Any) -> Any:
    """Deep copy of a block without ``cache_control`` anywhere (we place our own)."""
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def _clean_blocks(content: Iterable[ContentBlock]) -> list[ContentBlock]:
    """Drop thinking and empty text blocks; copy the rest without ``cache_control``."""
    out: list[ContentBlock] = []
    for block in content:
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking"):
            continue
        if kind == "text" and not str(block.get("text") or "").strip():
            continue
        out.append(_strip_cache_control(block))
    return out


class _Cutter:
    """Cuts a message's text to ``limit`` characters across its text-bearing blocks."""

    def __init__(self, limit: int, total: int) -> None:
        self.remaining = limit
        self.note = CUT_NOTE.format(n=total - limit)
        self.noted = False

    def cut(self, text: str) -> str | None:
        """The kept part of ``text`` (with the note where the cut falls), or None to drop."""
        if len(text) <= self.remaining:
            self.remaining -= len(text)
            return text
        if self.noted:
            return None
        kept = text[: self.remaining]
        self.remaining = 0
        self.noted = True
        return f"{kept}\n{self.note}" if kept.strip() else self.note


def _text_chars(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text") or ""))
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return len(inner)
        if isinstance(inner, list):
            return sum(_text_chars(item) for item in inner)
    return 0


def _cut_content(blocks: list[ContentBlock], limit: int) -> tuple[list[ContentBlock], bool]:
    """Cut a message's text to ``limit`` characters; tool blocks keep their structure."""
    total = sum(_text_chars(block) for block in blocks)
    if total <= limit:
        return blocks, False
    cutter = _Cutter(limit, total)

    def cut_text_block(block: ContentBlock) -> ContentBlock | None:
        kept = cutter.cut(str(block.get("text") or ""))
        if kept is None:
            return None
        new = {k: v for k, v in block.items() if k != "citations"}
        new["text"] = kept
        return new

    out: list[ContentBlock] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            new_block = cut_text_block(block)
            if new_block is not None:
                out.append(new_block)
        elif kind == "tool_result":
            inner = block.get("content")
            new_result = dict(block)
            if isinstance(inner, str):
                new_result["content"] = cutter.cut(inner) or "[cut]"
            elif isinstance(inner, list):
                items: list[ContentBlock] = []
                for item in inner:
                    if item.get("type") == "text":
                        kept_item = cut_text_block(item)
                        if kept_item is not None:
                            items.append(kept_item)
                    else:
                        items.append(item)
                new_result["content"] = items or "[cut]"
            out.append(new_result)
        else:
            out.append(block)
    return out, True


def _superseded(messages: Sequence[Message]) -> set[int]:
    """Failed or cut-off replies directly followed by another reply (a retry replaced them)."""
    skipped: set[int] = set()
    for message, following in pairwise(messages):
        if (
            message.role == "assistant"
            and following.role == "assistant"
            and message.status in ("error", "incomplete", "streaming")
        ):
            skipped.add(message.id)
    return skipped


def _prepare(
    message: Message, counter: TokenCounter, limit: int | None, pinned: bool
) -> _Piece | None:
    """Clean one raw message for sending; ``None`` when nothing of it can be sent."""
    blocks = _clean_blocks(message.content)
    if not blocks:
        return None  # e.g. a reply that failed before any text ("error", no content)
    cut = False
    if limit is not None and not pinned:
        blocks, cut = _cut_content(blocks, limit)
    if not cut and blocks == message.content:
        tokens = message_tokens(message, counter)
    else:
        tokens = counter.count_message(message.role, blocks)
    return _Piece(message, message.role, blocks, tokens, "recent", cut)


# -- tool pairing -----------------------------------------------------------------------------


def _use_as_text(block: ContentBlock) -> ContentBlock:
    return {
        "type": "text",
        "text": f"[tool call {block.get('name', '?')} (its result was not recorded): "
        f"{_json(block.get('input', {}))}]",
    }


def _result_as_text(block: ContentBlock) -> ContentBlock:
    return {"type": "text", "text": f"[earlier tool output] {render_block(block)}"}


def _fix_piece(
    piece: _Piece, counter: TokenCounter, convert: Callable[[ContentBlock], ContentBlock | None]
) -> _Piece:
    """``piece`` with ``convert`` applied to each block (None keeps a block as it is)."""
    changed = False
    content: list[ContentBlock] = []
    for block in piece.content:
        new = convert(block)
        if new is None:
            content.append(block)
        else:
            content.append(new)
            changed = True
    if not changed:
        return piece
    return replace(piece, content=content, tokens=counter.count_message(piece.role, content))


def _is_server_result(block: Mapping[str, Any]) -> bool:
    kind = str(block.get("type", ""))
    return kind.endswith("_tool_result") and kind != "tool_result"


def _server_orphan(pieces: Sequence[_Piece]) -> Callable[[Mapping[str, Any]], bool]:
    """A test for server tool blocks whose partner is not in the same assistant message.

    Server tools (web search, MCP) are called and answered inside one assistant message; a
    reply cut off between the two leaves an unpaired block the API would reject.
    """
    blocks = [block for piece in pieces for block in piece.content]
    uses = {str(b.get("id")) for b in blocks if b.get("type") in _SERVER_USE_TYPES}
    results = {str(b.get("tool_use_id")) for b in blocks if _is_server_result(b)}

    def is_orphan(block: Mapping[str, Any]) -> bool:
        if block.get("type") in _SERVER_USE_TYPES:
            return str(block.get("id")) not in results
        return _is_server_result(block) and str(block.get("tool_use_id")) not in uses

    return is_orphan


def _pair_tools(groups: list[list[_Piece]], counter: TokenCounter) -> list[list[_Piece]]:
    """Send as text every ``tool_use`` / ``tool_result`` that the next / previous message
    does not answer, so the API never sees an unpaired call."""
    fixed: list[list[_Piece]] = []
    allowed: set[str] = set()
    for index, group in enumerate(groups):
        role = group[0].role
        if role == "assistant":
            following = groups[index + 1] if index + 1 < len(groups) else []
            answered = {
                str(b.get("tool_use_id"))
                for piece in following
                for b in piece.content
                if b.get("type") == "tool_result"
            }
            seen: set[str] = set()
            paired: set[str] = set()
            is_orphan = _server_orphan(group)

            def convert_use(
                block: ContentBlock,
                answered: set[str] = answered,
                seen: set[str] = seen,
                paired: set[str] = paired,
                is_orphan: Callable[[Mapping[str, Any]], bool] = is_orphan,
            ) -> ContentBlock | None:
                if is_orphan(block):
                    return {"type": "text", "text": f"[earlier tool output] {render_block(block)}"}
                if block.get("type") != "tool_use":
                    return None
                tool_id = str(block.get("id"))
                if tool_id in answered and tool_id not in seen:
                    seen.add(tool_id)
                    paired.add(tool_id)
                    return None
                return _use_as_text(block)

            fixed.append([_fix_piece(piece, counter, convert_use) for piece in group])
            allowed = paired
        else:
            used: set[str] = set()

            def convert_result(
                block: ContentBlock, allowed: set[str] = allowed, used: set[str] = used
            ) -> ContentBlock | None:
                if block.get("type") != "tool_result":
                    return None
                tool_id = str(block.get("tool_use_id"))
                if tool_id in allowed and tool_id not in used:
                    used.add(tool_id)
                    return None
                return _result_as_text(block)

            fixed.append([_fix_piece(piece, counter, convert_result) for piece in group])
            allowed = set()
    return fixed


def _group_roles(pieces: Sequence[_Piece]) -> list[list[_Piece]]:
    groups: list[list[_Piece]] = []
    for piece in pieces:
        if groups and groups[-1][0].role == piece.role:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups


def _trim_final_assistant(groups: list[list[_Piece]], counter: TokenCounter) -> None:
    """A request ending on an assistant message (a preview) must not end with whitespace."""
    while groups and groups[-1][0].role == "assistant":
        group = groups[-1]
        piece = group[-1]
        content = list(piece.content)
        while content and content[-1].get("type") == "text":
            text = str(content[-1].get("text") or "").rstrip()
            if text:
                if text != content[-1].get("text"):
                    content[-1] = {**content[-1], "text": text}
                break
            content.pop()
        if content == piece.content:
            return
        if content:
            tokens = counter.count_message(piece.role, content)
            group[-1] = replace(piece, content=content, tokens=tokens)
            return
        group.pop()
        if not group:
            groups.pop()


def _message_content(group: Sequence[_Piece]) -> list[ContentBlock]:
    blocks = [block for piece in group for block in piece.content]
    if group[0].role == "user":
        # Tool results must come first in a user message; text after them.
        blocks.sort(key=lambda block: block.get("type") != "tool_result")
    return blocks


# -- fitting ----------------------------------------------------------------------------------


@dataclass
class _Candidate:
    """One way of filling the request; the builder sheds parts until one fits."""

    system: list[ContentBlock]
    messages: list[dict[str, Any]]
    sections: dict[str, int]
    sent_ids: list[int]
    anchor_ids: list[int]
    recalled_ids: list[int]
    over_budget_anchors: int
    cut_messages: int
    recall_in_last: bool = False
    """The recalled excerpts open the last message (the cache breakpoint goes before it)."""

    @property
    def total(self) -> int:
        return sum(self.sections.values())


@dataclass(frozen=True)
class _Shed:
    """How much has been shed to fit the window."""

    turns: int = 0
    recall: int | None = None
    anchors: int | None = None
    summary: bool = True


class _Builder:
    """Holds the prepared inputs of one :func:`build_request` call."""

    def __init__(self, inputs: ContextInputs) -> None:
        self.inputs = inputs
        self.policy = inputs.policy
        self.counter = inputs.counter
        self.usable = max(0, inputs.context_window - inputs.max_output)
        pinned = {message.id for _, message in inputs.anchors}
        skipped = _superseded(inputs.raw_messages)
        self.turns = group_turns(inputs.raw_messages)
        self.pieces: dict[int, _Piece] = {}
        for message in inputs.raw_messages:
            if message.id in skipped:
                continue
            piece = _prepare(
                message, self.counter, self.policy.message_char_limit, message.id in pinned
            )
            if piece is not None:
                self.pieces[message.id] = piece
        self.new_piece = self._new_piece()
        self.max_drop = len(self.turns) if self.new_piece is not None else len(self.turns) - 1
        self.max_drop = max(0, self.max_drop)
        self.entry_cache: dict[int, tuple[str, int]] = {}
        self.system_tokens = self.counter.count(inputs.system_prompt.strip())
        self.summary_text = summary_section(inputs.summary) if inputs.summary else ""

    def _new_piece(self) -> _Piece | None:
        new = self.inputs.new_message
        if new is None:
            return None
        content = _clean_blocks(new)
        if not content:
            raise ValueError("the new message is empty")
        tokens = self.counter.count_message("user", content)
        return _Piece(None, "user", content, tokens, "new_message")

    # -- memory and recall ---------------------------------------------------------------

    def _anchor_entry(self, anchor: Anchor, message: Message) -> tuple[str, int]:
        cached = self.entry_cache.get(message.id)
        if cached is None:
            text = anchor_entry(anchor, message)
            cached = (text, self.counter.count(text) if text else 0)
            self.entry_cache[message.id] = cached
        return cached

    def _memory_anchors(self, kept_ids: set[int]) -> tuple[list[tuple[Anchor, Message]], int]:
        """Pins older than the raw window, oldest first, within the anchor budget."""
        budget = self.policy.anchor_budget_tokens
        limit = self.policy.max_anchors
        chosen: list[tuple[Anchor, Message]] = []
        spent = 0
        candidates = [
            (anchor, message)
            for anchor, message in self.inputs.anchors
            if message.id not in kept_ids and self._anchor_entry(anchor, message)[0]
        ]
        for anchor, message in candidates:
            tokens = self._anchor_entry(anchor, message)[1]
            if (limit is not None and len(chosen) >= limit) or spent + tokens > budget:
                break
            chosen.append((anchor, message))
            spent += tokens
        return chosen, len(candidates) - len(chosen)

    def _fit_text(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` (marked as cut) within ``budget`` tokens."""
        if self.counter.count(text) <= budget:
            return text
        marker = " […]"
        low, high = 0, min(len(text), budget * 8)
        while low < high:
            middle = (low + high + 1) // 2
            if self.counter.count(text[:middle] + marker) <= budget:
                low = middle
            else:
                high = middle - 1
        return text[:low].rstrip() + marker if low else ""

    def _recall(self, excluded: set[int]) -> list[tuple[Message, str, int]]:
        policy = self.policy
        if not policy.recall or policy.recall_max_excerpts <= 0:
            return []
        header_tokens = self.counter.count(RECALL_HEADER)
        budget = policy.recall_budget_tokens - header_tokens
        chosen: list[tuple[Message, str, int]] = []
        seen: set[int] = set()
        for message in self.inputs.recalled:
            if len(chosen) >= policy.recall_max_excerpts or budget <= 0:
                break
            if message.id in excluded or message.id in seen:
                continue
            seen.add(message.id)
            text = _message_text(message).strip()
            if not text:
                continue
            entry = _excerpt_entry(message, text)
            tokens = self.counter.count(entry)
            if tokens > budget:
                label_tokens = self.counter.count(_excerpt_entry(message, ""))
                short = self._fit_text(text, budget - label_tokens)
                if not short:
                    continue
                entry = _excerpt_entry(message, short)
                tokens = self.counter.count(entry)
                if tokens > budget:
                    continue
            chosen.append((message, entry, tokens))
            budget -= tokens
        # Entries were counted one by one; each join can add a token, which matters only
        # when the budget is nearly spent.
        if budget < 2 * len(chosen):
            limit = max(0, policy.recall_budget_tokens)
            while chosen:
                joined = "\n\n".join([RECALL_HEADER, *(entry for _, entry, _ in chosen)])
                if self.counter.count(joined) <= limit:
                    break
                chosen.pop()
        return chosen

    # -- composing -----------------------------------------------------------------------

    def compose(self, shed: _Shed) -> _Candidate:
        kept_messages = [m for turn in self.turns[shed.turns :] for m in turn]
        kept_ids = {m.id for m in kept_messages}
        anchors, over_budget = self._memory_anchors(kept_ids)
        if shed.anchors is not None:
            anchors = anchors[: shed.anchors]
        entries = [self._anchor_entry(a, m) for a, m in anchors]
        anchors_text = _anchors_section([text for text, _ in entries])
        summary_text = self.summary_text if shed.summary else ""
        excluded = kept_ids | {m.id for _, m in anchors}
        recall = self._recall(excluded)
        if shed.recall is not None:
            recall = recall[: shed.recall]
        recall_text = "\n\n".join([RECALL_HEADER, *(entry for _, entry, _ in recall)])
        recall_text = recall_text if recall else ""

        preamble = self.counter.count(MEMORY_PREAMBLE)
        sections = dict.fromkeys(SECTIONS, 0)
        sections["system"] = self.system_tokens
        if summary_text:
            sections["summary"] = preamble + self.counter.count(summary_text)
        if anchors_text:
            sections["anchors"] = self.counter.count(anchors_text) + (
                0 if summary_text else preamble
            )
        if recall_text:
            sections["recall"] = self.counter.count(recall_text)
        pieces = [self.pieces[m.id] for m in kept_messages if m.id in self.pieces]
        candidate = _Candidate(
            system=[],
            messages=[],
            sections=sections,
            sent_ids=[],
            anchor_ids=[m.id for _, m in anchors],
            recalled_ids=[m.id for m, _, _ in recall],
            over_budget_anchors=over_budget,
            cut_messages=sum(1 for piece in pieces if piece.cut),
        )
        if self.policy.single_user_message:
            self._compose_single(candidate, pieces, summary_text, anchors_text, recall_text)
        else:
            memory = _memory_block(summary_text, anchors_text)
            self._compose_messages(candidate, pieces, memory, recall_text)
        return candidate

    def _system_blocks(self, memory: str, recall_text: str = "") -> list[ContentBlock]:
        blocks: list[ContentBlock] = []
        base = self.inputs.system_prompt.strip()
        if base:
            blocks.append({"type": "text", "text": base})
        if memory:
            blocks.append({"type": "text", "text": memory})
        if blocks:
            # One breakpoint after the stable prefix: the memory block, else the base prompt.
            blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
        if recall_text:
            blocks.append({"type": "text", "text": recall_text})
        return blocks

    def _compose_messages(
        self, candidate: _Candidate, pieces: list[_Piece], memory: str, recall_text: str
    ) -> None:
        candidate.system = self._system_blocks(memory)
        all_pieces = [*pieces, self.new_piece] if self.new_piece is not None else list(pieces)
        if all_pieces and all_pieces[0].role == "assistant":
            text = CONTINUED_TEXT
            filler_content: list[ContentBlock] = [{"type": "text", "text": text}]
            filler = _Piece(
                None,
                "user",
                filler_content,
                self.counter.count_message("user", filler_content),
                "recent",
            )
            all_pieces.insert(0, filler)
        groups = _pair_tools(_group_roles(all_pieces), self.counter)
        if self.new_piece is None:
            _trim_final_assistant(groups, self.counter)
        for group in groups:
            for piece in group:
                candidate.sections[piece.section] += piece.tokens
                if piece.source is not None:
                    candidate.sent_ids.append(piece.source.id)
            candidate.messages.append({"role": group[0].role, "content": _message_content(group)})
        if not recall_text:
            return
        last = candidate.messages[-1] if candidate.messages else None
        if last is None or last["role"] != "user":
            # A preview ending on a reply: nothing is sent, the excerpts stay in the system.
            candidate.system = self._system_blocks(memory, recall_text)
            return
        content = list(last["content"])
        at = next(
            (i for i, b in enumerate(content) if b.get("type") != "tool_result"), len(content)
        )
        content.insert(at, {"type": "text", "text": recall_text})
        candidate.messages[-1] = {"role": "user", "content": content}
        candidate.recall_in_last = True

    def _compose_single(
        self,
        candidate: _Candidate,
        pieces: list[_Piece],
        summary_text: str,
        anchors_text: str,
        recall_text: str,
    ) -> None:
        """Seed 000: one user message with context, recent messages and the current one."""
        count = self.counter.count
        sections = candidate.sections
        base = self.inputs.system_prompt.strip()
        if base:
            candidate.system = [
                {"type": "text", "text": base, "cache_control": {"type": "ephemeral"}}
            ]
        current = self.new_piece
        if current is None and pieces and pieces[-1].role == "user":
            current, pieces = pieces[-1], pieces[:-1]
        text_parts: list[str] = []
        # Sections are counted part by part here: no memory preamble, one message overhead.
        sections["summary"] = count(summary_text)
        sections["anchors"] = count(anchors_text)
        sections["recall"] = count(recall_text)
        context_parts = [part for part in (summary_text, anchors_text, recall_text) if part]
        if context_parts:
            # Seed 000's header; the summary line only when there is a summary.
            header = SINGLE_CONTEXT_HEADER if summary_text else "[CONVERSATION CONTEXT]"
            text_parts.append("\n\n".join([header, *context_parts]))
            first = "summary" if summary_text else "anchors" if anchors_text else "recall"
            sections[first] += count(header)
        lines = [f"{piece.role.upper()}: {render_content(piece.content)}" for piece in pieces]
        candidate.sent_ids.extend(piece.source.id for piece in pieces if piece.source is not None)
        sections["recent"] = sum(count(line) for line in lines)
        if lines:
            text_parts.append("[RECENT MESSAGES]\n" + "\n".join(lines))
            sections["recent"] += count("[RECENT MESSAGES]")
        extra: list[ContentBlock] = []
        if current is not None:
            textual = [b for b in current.content if b.get("type") in ("text", "tool_result")]
            extra = [b for b in current.content if b.get("type") not in ("text", "tool_result")]
            current_text = render_content(textual)
            if text_parts or not current_text:
                current_text = f"[CURRENT MESSAGE]\n{current_text}".rstrip()
            text_parts.append(current_text)  # alone, seed 000's case A: the message as it is
            if current.source is not None:
                candidate.sent_ids.append(current.source.id)
            section: _Section = "new_message" if current.source is None else "recent"
            sections[section] += (
                MESSAGE_OVERHEAD_TOKENS + count(current_text) + self.counter.count_content(extra)
            )
        elif text_parts:
            sections["recent"] += MESSAGE_OVERHEAD_TOKENS
        if text_parts:
            content: list[ContentBlock] = [{"type": "text", "text": "\n\n".join(text_parts)}]
            candidate.messages = [{"role": "user", "content": [*content, *extra]}]

    # -- the fitting loop ----------------------------------------------------------------

    def fits(self, tokens: int) -> bool:
        calibrated = calibrate(tokens, self.inputs.calibration)
        return max(tokens, calibrated) <= self.usable

    def _turn_tokens(self, index: int) -> int:
        return sum(self.pieces[m.id].tokens for m in self.turns[index] if m.id in self.pieces)

    def build(self) -> tuple[_Candidate, _Shed]:
        shed = _Shed()
        candidate = self.compose(shed)
        while not self.fits(candidate.total):
            if candidate.recalled_ids and (shed.recall is None or shed.recall > 0):
                shed = replace(shed, recall=len(candidate.recalled_ids) - 1)
            elif shed.turns < self.max_drop:
                excess = candidate.total - self.usable
                turns = shed.turns
                freed = 0
                while turns < self.max_drop and (freed < excess or turns == shed.turns):
                    freed += self._turn_tokens(turns)
                    turns += 1
                shed = replace(shed, turns=turns)
            elif candidate.anchor_ids:
                shed = replace(shed, anchors=len(candidate.anchor_ids) - 1)
            elif shed.summary and self.summary_text:
                shed = replace(shed, summary=False)
            else:
                break
            candidate = self.compose(shed)
        return candidate, shed


def _warnings(builder: _Builder, candidate: _Candidate, shed: _Shed, fits: bool) -> list[str]:
    policy = builder.policy
    notes: list[str] = []
    if candidate.over_budget_anchors:
        limit = f", at most {policy.max_anchors} pins" if policy.max_anchors is not None else ""
        notes.append(
            f"{candidate.over_budget_anchors} pinned message(s) not sent: over the anchor "
            f"budget ({policy.anchor_budget_tokens} tokens{limit})"
        )
    if candidate.cut_messages:
        notes.append(
            f"{candidate.cut_messages} message(s) cut to {policy.message_char_limit} characters "
            "in the request"
        )
    if shed.recall is not None:
        notes.append("recalled excerpts reduced to fit the usable window")
    if shed.turns:
        count = sum(len(turn) for turn in builder.turns[: shed.turns])
        notes.append(
            f"{shed.turns} oldest turn(s) ({count} messages) left out to fit the usable window "
            f"of {builder.usable} tokens; compact the conversation to keep them in a summary"
        )
    if shed.anchors is not None:
        notes.append("pinned messages reduced to fit the usable window")
    if not shed.summary:
        notes.append("the summary was left out to fit the usable window")
    if not fits:
        notes.append(
            f"the request does not fit: {candidate.total} tokens for a usable window of "
            f"{builder.usable} even without older turns"
        )
    return notes


def _trigger_tokens(policy: Policy, usable: int, sections: Mapping[str, int]) -> int | None:
    if policy.trigger == "ratio":
        return int(policy.ratio * usable)
    if policy.trigger == "tokens":
        fixed = sections["system"] + sections["anchors"] + sections["summary"] + sections["recall"]
        return policy.threshold_tokens + fixed
    return None


def build_request(inputs: ContextInputs) -> BuiltRequest:
    """Build the exact next request and its token breakdown.

    Args:
        inputs: The conversation's state; ``raw_messages`` are reused with their stored
            ``token_count`` wherever they are sent unmodified.

    Returns:
        The request, its breakdown and what it carries.

    Raises:
        ValueError: when ``new_message`` is given but has nothing to send.
    """
    builder = _Builder(inputs)
    candidate, shed = builder.build()
    fits = builder.fits(candidate.total)
    messages = candidate.messages
    # The breakpoint ends the part the next request repeats: the whole request, or the
    # history before the new message when that message carries this request's excerpts.
    marked = len(messages) - (2 if candidate.recall_in_last else 1)
    if marked >= 0:
        last = messages[marked]
        content = list(last["content"])
        content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
        messages[marked] = {"role": last["role"], "content": content}
    request: dict[str, Any] = {"model": inputs.model}
    if candidate.system:
        request["system"] = candidate.system
    request["messages"] = messages
    request["max_tokens"] = inputs.max_output
    total = candidate.total
    breakdown = Breakdown(
        window=inputs.context_window,
        max_output=inputs.max_output,
        usable=builder.usable,
        sections=candidate.sections,
        input_tokens=total,
        calibrated_tokens=calibrate(total, inputs.calibration),
        trigger_tokens=_trigger_tokens(inputs.policy, builder.usable, candidate.sections),
        warn_tokens=int(inputs.policy.warn_ratio * builder.usable),
        warnings=tuple(_warnings(builder, candidate, shed, fits)),
        calibration=inputs.calibration,
    )
    dropped = [m.id for turn in builder.turns[: shed.turns] for m in turn]
    return BuiltRequest(
        request=request,
        breakdown=breakdown,
        sent_message_ids=tuple(candidate.sent_ids),
        anchor_ids=tuple(candidate.anchor_ids),
        recalled_ids=tuple(candidate.recalled_ids),
        dropped_message_ids=tuple(dropped),
        fits=fits,
    )


def draft_breakdown(base: BuiltRequest, draft_tokens: int) -> Breakdown:
    """The gauge's fast path: ``base``'s breakdown with a draft counted as the new message.

    ``base`` is built once per conversation change (usually with ``new_message=None``); per
    keystroke only the draft is counted (``TokenCounter.count``, sub-millisecond for a
    2,000-character draft) and this recomputes the totals.

    Args:
        base: The request built without the draft.
        draft_tokens: ``TokenCounter.count`` of the draft text (0 for no draft); the
            per-message overhead is added here.

    Returns:
        The breakdown with ``sections["new_message"]`` replaced by the draft.
    """
    old = base.breakdown
    sections = dict(old.sections)
    sections["new_message"] = draft_tokens + MESSAGE_OVERHEAD_TOKENS if draft_tokens > 0 else 0
    total = sum(sections.values())
    calibrated = calibrate(total, old.calibration)
    warnings = [w for w in old.warnings if not w.startswith("the draft ")]
    if max(total, calibrated) > old.usable:
        warnings.append(
            f"the draft brings the request to {calibrated} of {old.usable} usable tokens: "
            "older turns will be compacted or left out before sending"
        )
    return replace(
        old,
        sections=sections,
        input_tokens=total,
        calibrated_tokens=calibrated,
        warnings=tuple(warnings),
    )
