"""What a compact would fold, and what the next request would lose by it (before it happens).

A compact the user asks for folds the oldest turns into a summary; the request after it carries
that summary, its identifier ledger, the pinned messages, the raw tail and what recall brings
back for the new message. :func:`preview` lays that request out before anything is written: the
version the compact would make is made offline (the extractive summarizer, at the budget the
real one gets: a stand-in of the same size; its ledger is the one the version would store),
and the next request is built twice, as it is now and as it would be after the compact, for
the draft (else the newest user message: what the chat is about now).

The two requests are compared: a message of the span whose text the request carries now and
would carry no more after the compact (in neither the raw tail, the pins, the recalled passages
nor the stand-in summary) *drops out*; the preview counts them. One that drops out is *lost*
when the text needs it — it holds :data:`NEEDED_RELEVANCE` of the weight of the text's searched
words (their idf over the conversation, as recall weighs them), by itself, whether or not it is
among recall's candidates — and the summary and ledger as sent do not keep every identifier it
names. The preview names the lost messages in one line (:attr:`CompactPreview.warning`), so a
user can pin them, compact up to an earlier message, or go on.

What a draft needs is found by its words, and a draft that *gathers* its answer from many turns
(a list, a comparison, a count, a judgement about someone:
:func:`~tui_chat.core.request.recall_need.gathers`) needs turns that share no word with it. When
such a draft would see at least :data:`GATHER_DROPPED` of the folded messages it reads now
leave its request, the warning says so (a risk, not a named loss: which turns hold the answer
is not known before the model reads them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tui_chat.core.blocks import message_body
from tui_chat.core.identifiers import retention
from tui_chat.core.models import Conversation, Message, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request.budget import gist
from tui_chat.core.request.recall import idf, relevance
from tui_chat.core.request.recall_need import gathers
from tui_chat.core.request.render import request_text
from tui_chat.core.summarize import SummaryInput
from tui_chat.core.summarize.extractive import ExtractiveSummarizer
from tui_chat.core.triggers import plan_boundary
from tui_chat.core.upto import BoundaryError, boundary_upto
from tui_chat.engine.build.assemble import assemble, window_for
from tui_chat.engine.build.context import EngineContext
from tui_chat.engine.compaction.errors import CompactionError
from tui_chat.engine.compaction.fold import blank_summary
from tui_chat.engine.compaction.gate import gate_summary
from tui_chat.engine.compaction.version_result import version_result
from tui_chat.store import fts

__all__ = ["GATHER_DROPPED", "NEEDED_RELEVANCE", "CompactPreview", "LostMessage", "preview"]

NEEDED_RELEVANCE = 0.5
"""A message the next request needs holds at least this share of the idf weight of the
text's searched words (:attr:`~tui_chat.core.request.recall.Passage.relevance`): the names,
places and rare words it asks about, not one common word."""

GATHER_DROPPED = 0.5
"""A draft that gathers is warned about when at least this share of the folded messages its
request carries now would leave it (on the dev LoCoMo chats at the model's own window a
compact takes 63-85 % of them out of a question's request)."""

NAMED = 3
"""At most this many lost messages are named in the warning line (the count says the rest)."""

SNIPPET_CHARS = 48
"""A lost message is named by its id and the start of its text, cut to this many characters."""


@dataclass(frozen=True, slots=True)
class LostMessage:
    """A message the next request needs that would leave it after the compact."""

    id: int
    role: str
    snippet: str
    """The start of its text, on one line."""


@dataclass(frozen=True, slots=True)
class CompactPreview:
    """What a compact would do, worked out without doing it."""

    messages: int
    """Messages the version would fold (0: nothing to compact)."""
    tokens: int
    """Their stored token count."""
    covers_to: int | None
    """The id of the last message folded."""
    query: str | None
    """The text the next request was built for (the draft, else the newest user message)."""
    before_tokens: int = 0
    """The next request's input tokens now."""
    after_tokens: int = 0
    """…and after the compact (with the stand-in summary)."""
    carried: int = 0
    """Messages of the span whose text the next request carries now…"""
    dropped: int = 0
    """…and how many of them it would carry no more (in neither the raw tail, the pins, the
    recalled passages nor the summary), needed or not."""
    lost: tuple[LostMessage, ...] = ()
    gathering: bool = False
    """The draft gathers its answer from many turns (:func:`~tui_chat.core.request.
    recall_need.gathers`)."""

    @property
    def at_risk(self) -> bool:
        """A draft that gathers would see :data:`GATHER_DROPPED` or more of the folded
        messages it reads now leave its request."""
        return self.gathering and self.dropped > 0 and self.dropped >= GATHER_DROPPED * self.carried

    @property
    def warning(self) -> str | None:
        """One line naming what the next request would lose (or, for a draft that gathers,
        how much of what it reads now it would lose), or ``None``."""
        if not self.lost:
            if not self.at_risk:
                return None
            return (
                f"Compacting would take {self.dropped:,} of the {self.carried:,} folded messages "
                "it reads now out of the next request, and the draft gathers its answer from many "
                "turns (a list, a comparison, a count or a judgement): what it needs from them may "
                "be lost (send it first, or compact up to an earlier message)."
            )
        named = ", ".join(f'#{m.id} "{m.snippet}"' for m in self.lost[:NAMED])
        more = f" and {len(self.lost) - NAMED} more" if len(self.lost) > NAMED else ""
        count = len(self.lost)
        noun = "message" if count == 1 else "messages"
        return (
            f"Compacting would drop {count} {noun} the next request needs: {named}{more} "
            "(pin them, or compact up to an earlier message)."
        )

    def lines(self) -> list[str]:
        """The preview as lines of text (the warning last)."""
        if not self.messages:
            return ["Nothing to compact yet: too few complete turns."]
        out = [
            f"Would fold {self.messages} messages ({self.tokens:,} tokens) up to "
            f"#{self.covers_to} into a summary.",
        ]
        if self.query is not None:
            out.append(
                f"Next request: {self.before_tokens:,} -> {self.after_tokens:,} tokens "
                f"(for: {_snippet(self.query)}); {self.dropped:,} of the {self.carried:,} "
                "folded messages it carries now drop out."
            )
        if (warning := self.warning) is not None:
            out.append(warning)
        return out

    def to_json(self) -> dict[str, object]:
        """The preview as ``compact --dry-run --json`` prints it."""
        return {
            "messages": self.messages,
            "tokens": self.tokens,
            "covers_to_message_id": self.covers_to,
            "query": self.query,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "carried": self.carried,
            "dropped": self.dropped,
            "lost": [{"id": m.id, "role": m.role, "snippet": m.snippet} for m in self.lost],
            "gathering": self.gathering,
            "warning": self.warning,
        }


def _snippet(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1].rstrip() + "…"


async def preview(
    context: EngineContext,
    conversation_id: str,
    draft: str | None = None,
    upto: int | None = None,
    planning: Sequence[Message] | None = None,
) -> CompactPreview:
    """What ``compact`` (``upto``: compact up to that message's turn) would fold, and which
    messages the next request needs that it would lose.

    Args:
        context: The engine's store, counter and policies.
        conversation_id: The conversation.
        draft: The message about to be sent (``None``: the newest user message stands for it).
        upto: Fold every whole turn up to this message's turn instead of what is due.
        planning: The messages a manual compact plans on (the worker's planning window); read
            here when not given.

    Raises:
        CompactionError: ``upto`` names a message the compact cannot end on.
    """
    store = context.store
    conversation = await store.conversations.get(conversation_id)
    policy = context.policy_for(conversation)
    parent = await store.summaries.active(conversation_id)
    after = parent.covers_to_message_id if parent else 0
    raw = list(planning) if planning is not None else []
    if upto is not None or planning is None:
        raw = await store.messages.history(conversation_id, after_id=after)
    if upto is not None:
        try:
            count = boundary_upto(raw, upto, after)
        except BoundaryError as exc:
            raise CompactionError(str(exc)) from None
    else:
        count = plan_boundary(policy, raw, manual=True)
    if count <= 0:
        return CompactPreview(0, 0, None, None)
    span = raw[:count]
    folded = CompactPreview(count, sum(m.token_count for m in span), span[-1].id, None)
    query = draft if draft is not None and draft.strip() else _newest_user_text(raw)
    if query is None:
        return folded
    version = await _stand_in(context, conversation, policy, parent, span)
    now = await _build(context, conversation, policy, parent, query)
    then = await _build(context, conversation, policy, version, query)
    carried, dropped = _dropped(span, now[0], then[0])
    lost = await _lost(context, conversation_id, query, span, dropped, then[0])
    return replace(
        folded,
        gathering=query == draft and gathers(query),
        query=query,
        before_tokens=now[1],
        after_tokens=then[1],
        carried=len(carried),
        dropped=len(dropped),
        lost=tuple(lost),
    )


def _newest_user_text(messages: Sequence[Message]) -> str | None:
    for message in reversed(messages):
        if message.role == "user" and message.text.strip():
            return message.text
    return None


async def _stand_in(
    context: EngineContext,
    conversation: Conversation,
    policy: Policy,
    parent: Summary | None,
    span: Sequence[Message],
) -> Summary:
    """The version the compact would make, made offline at the budget the real one gets."""
    usable = window_for(context.info_for(conversation.model), policy).usable
    made = gist(policy, usable)
    pinned = frozenset(await context.store.anchors.pinned_ids(conversation.id))
    output = await ExtractiveSummarizer().summarize(
        SummaryInput(policy=made, previous=parent, messages=span, pinned_ids=pinned)
    )
    output = gate_summary(output, made, context.counter)
    result = version_result(output, span, parent, context.counter, context.info_for)
    base = parent or blank_summary(conversation.id, policy, trigger="manual")
    return replace(
        base,
        parent_id=parent.id if parent else None,
        text=result.text,
        segments=list(result.segments),
        fields=dict(result.fields),
        covers_to_message_id=span[-1].id,
        covered_messages=result.covered_messages,
        source_tokens=result.source_tokens,
        summary_tokens=result.summary_tokens,
        trigger="manual",
        ledger=list(result.ledger),
        compaction_block=None,
    )


async def _build(
    context: EngineContext,
    conversation: Conversation,
    policy: Policy,
    summary: Summary | None,
    query: str,
) -> tuple[str, int]:
    """The text and input tokens of the next request for ``query`` with ``summary`` in force
    (built apart from the conversation's kept build state: nothing of it is kept)."""
    ratio, _ = await context.count_basis(conversation.model)
    built = await assemble(
        context.store,
        conversation,
        policy=policy,
        info=context.info_for(conversation.model),
        counter=context.counter,
        new_text=query,
        summary=summary,
        calibration=ratio,
    )
    request = built.request
    parts = [b.get("text", "") for b in request.get("system", []) if isinstance(b, dict)]
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content or []:
            parts.append(_block_text(block))
    return _flat("\n".join(parts)), built.breakdown.input_tokens


def _block_text(block: object) -> str:
    """The text a request block carries (search results' passages included)."""
    if not isinstance(block, dict):
        return ""
    if isinstance(block.get("text"), str):
        return str(block["text"])
    inner = block.get("content")
    if isinstance(inner, list):
        return "\n".join(_block_text(b) for b in inner)
    return ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def _dropped(span: Sequence[Message], now: str, then: str) -> tuple[dict[int, str], dict[int, str]]:
    """The messages of ``span`` the request carries ``now`` (id -> their text as sent, on one
    line), and those of them it carries no more ``then``: the two requests compared, whether
    recall would look at a message or not."""
    carried: dict[int, str] = {}
    for message in span:
        text = _flat(request_text(message))
        if text and text in now:
            carried[message.id] = text
    return carried, {i: t for i, t in carried.items() if t not in then}


async def _lost(
    context: EngineContext,
    conversation_id: str,
    query: str,
    span: Sequence[Message],
    dropped: dict[int, str],
    then: str,
) -> list[LostMessage]:
    """The messages that drop out of the request for ``query`` that it needs.

    Every dropped message is weighed against ``query`` by itself (its
    :func:`~tui_chat.core.request.recall.relevance`, the words' idf counted over the
    conversation up to the span's end), not only those among recall's candidates: a message
    recall's pool or its budget leaves out is lost as well.
    """
    words = fts.recall_terms(query)
    if not words or not dropped:
        return []
    store = context.store
    counts, total = await store.search.recall_counts(conversation_id, words, span[-1].id)
    weights: dict[str, float] = {}
    for word, count in zip(words, counts, strict=True):
        stem = fts.stem_prefix(word) or word
        weights[stem] = max(weights.get(stem, 0.0), idf(count, total))
    pinned = await store.anchors.pinned_ids(conversation_id)
    lost: list[LostMessage] = []
    for message in span:
        text = dropped.get(message.id)
        if text is None or message.id in pinned or relevance(text, weights) < NEEDED_RELEVANCE:
            continue
        kept, total_ids = retention([message_body(message)], then)
        if total_ids and kept == total_ids:
            continue  # the summary or its ledger, as sent, keeps every identifier it names
        lost.append(LostMessage(message.id, message.role, _snippet(message.text)))
    return lost
