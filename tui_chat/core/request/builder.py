"""The request builder: what is sent to the model, exactly, and what each part costs.

:func:`build_request` turns a conversation's state (system prompt, active summary, pins,
recalled excerpts, unsummarised messages and the new message) into the keyword arguments of
``messages.create`` / ``messages.stream`` plus a token :class:`Breakdown` for the gauge
(docs/design.md, "What is sent"). It is pure: same inputs, same request, byte for byte.

The layouts are in :mod:`~tui_chat.core.request.compose`: system prompt and memory block in
``system``, the raw turns and the new message (recalled excerpts last) in ``messages``, with a
cache breakpoint after the memory block and one on the last block the next request repeats.

The memory block only changes when a compaction or a pin changes it, so between compactions the
whole prefix is read from the prompt cache. Recalled excerpts change with every message, so they
close the new message, after everything the next request sends again: anywhere earlier (in
``system``, or before the message's own text) they would invalidate the cached history, or
leave the new message uncached, on every turn. The breakpoint sits on the new message's own
last block, excerpts or not: the next request sends that message again unchanged, and reads it
from the cache (with the excerpts before it, it was sent uncached and written again by the next
turn: 2.25x its input price instead of 1.25x).

With ``single_user_message`` (seed 000) everything goes into one user message instead.

Guarantees: the first message is a user message, roles alternate, every ``tool_use`` is
answered by a ``tool_result`` in the next message (anything else is sent as plain text),
thinking and empty text blocks are never sent, and the request fits the usable window
(window minus max output) whenever :attr:`BuiltRequest.fits` is true. When it would not fit,
parts give way in the order of :data:`~tui_chat.core.request.budget.GIVE_WAY` (the large tool
results of older turns cut, recall to its floor, the ledger, the oldest turns, the rest of
recall, pins, the summary) — each with a
warning, never silently. A summary over its budget is cut to it, never allowed to push the
turns and recall out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tui_chat.core import ledger
from tui_chat.core.attachments import is_ref
from tui_chat.core.cache_ttl import CacheTtl, choose_ttl
from tui_chat.core.request.budget import (
    RECALL_FLOOR,
    budgets,
    ledger_budget,
    trigger_tokens,
    within_budget,
)
from tui_chat.core.request.clip import fit_text
from tui_chat.core.request.compose import EPHEMERAL, Candidate, MemoryTexts, RequestLayout
from tui_chat.core.request.pieces import new_piece
from tui_chat.core.request.recall_cost import matching, recall_cap
from tui_chat.core.request.recall_need import needed_cap, question_ceiling
from tui_chat.core.request.render import (
    MEMORY_PREAMBLE,
    PARAGRAPH,
    anchors_section,
    recall_blocks,
    summary_section,
    summary_section_header,
)
from tui_chat.core.request.runs import (
    Chain,
    Composed,
    Unit,
    chain,
    compose_run,
    independent,
    spans,
)
from tui_chat.core.request.selection import Selector, recall_text
from tui_chat.core.request.shed import Shed, shed_notes
from tui_chat.core.request.timeline import Timeline
from tui_chat.core.request.tool_defs import tools_tokens
from tui_chat.core.request.types import (
    SECTIONS,
    Breakdown,
    BuiltRequest,
    ContextInputs,
    Layout,
)
from tui_chat.core.tokens import calibrate


class _Kept:
    """The ids of the raw messages kept from ``start`` on, made a set only when asked."""

    def __init__(self, ids: list[int], start: int) -> None:
        self.ids = ids
        self.start = start
        self.found: set[int] | None = None

    def __contains__(self, value: object) -> bool:
        if self.found is None:
            self.found = set(self.ids[self.start :])
        return value in self.found


WIDE = 16
"""Grid cells per wide run (see :meth:`_Builder._units`)."""

FILL_RESERVE = 16
"""Tokens a filling recall leaves free: joins and message overheads it does not count."""


class _Builder:
    """Holds the prepared inputs of one :func:`build_request` call and finds a fitting layout."""

    def __init__(self, inputs: ContextInputs, timeline: Timeline) -> None:
        self.inputs = inputs
        self.policy = inputs.policy
        self.counter = inputs.counter
        # The model's limit, and the window the request is kept within (the working budget).
        self.limit = max(0, inputs.context_window - inputs.max_output)
        self.usable = within_budget(self.policy, self.limit)
        self.timeline = timeline
        """Only read: what this build lays out goes to :attr:`runs` and :attr:`chains`."""
        self.runs: dict[tuple[int, int], Composed] = {}
        """Runs this build composed that the timeline did not hold."""
        self.chains: list[Chain] | None = None
        """The chains of runs, newest first, once this build joined one."""
        self.turn_count = self.timeline.turn_count()
        fresh = new_piece(inputs.new_message, self.counter)
        # Without a new message the last turn is what is sent: it is never dropped.
        self.max_drop = max(0, self.turn_count - (0 if fresh is not None else 1))
        self.max_cut = max(0, self.turn_count - 1)  # the newest turn's results stay whole
        at = (inputs.pauses, self.policy.cache_ttl, inputs.covered_tokens, self.policy.prices)
        self.recall_cap = recall_cap(
            inputs.summary, self.timeline, self.limit, *at, replies=inputs.replies
        )
        recalled = inputs.recalled
        # A message the recent turns say little about may take what the cap holds back, up
        # to the recall share of the budget.
        policy = self.policy
        ceiling = question_ceiling(
            policy.recall_max_tokens, policy.recall_share, self.usable, inputs.recall_need
        )
        self.recall_ceiling = ceiling if self.recall_cap is not None else policy.recall_max_tokens
        if self.recall_cap is not None:
            self.recall_cap = needed_cap(self.recall_cap, inputs.recall_need, ceiling)
            # Where the history could be carried, recall sends only what matches the message.
            recalled = matching(recalled, inputs.recall_need, inputs.recall_asks)
        self.selector = Selector(self.policy, self.counter, inputs.anchors, recalled)
        self.layout = RequestLayout(inputs.system_prompt, fresh, self.counter)
        self.system_tokens = self.counter.count(inputs.system_prompt.strip())
        self.tools_tokens = tools_tokens(inputs.tools, self.counter)
        summary = inputs.summary
        self.block = summary.compaction_block if summary is not None else None
        self.summary_text = summary_section(summary) if summary and self.block is None else ""
        self.summary_cut = False
        cap = self.policy.summary_max_tokens + self.counter.count(summary_section_header(summary))
        if self.summary_text and self.counter.count(self.summary_text) > cap:
            # A summary over its budget never pushes the turns and recall out: it is cut.
            self.summary_text = fit_text(self.summary_text, cap, self.counter)
            self.summary_cut = True
        pinned_ids = [message.id for _, message in inputs.anchors]
        self.ledger_budget = ledger_budget(self.policy, self.usable)
        if self.summary_text:  # the ledger may take what the summary leaves of its budget
            summary_tokens = self.counter.count(self.summary_text)
            self.ledger_budget = ledger.room(self.ledger_budget, cap, summary_tokens)
        self.ledger_text, self.ledger_sent = ledger.render(
            inputs.ledger,
            self.ledger_budget,
            self.counter,
            pinned_ids,
            already=self.summary_text,
        )
        self.ledger_tokens = self.counter.count(self.ledger_text) + 1 if self.ledger_text else 0
        self.counts: dict[str, int] = {}

    def _count(self, text: str) -> int:
        """Token count of a text this build counts again and again (memory parts)."""
        cached = self.counts.get(text)
        if cached is None:
            cached = self.counts[text] = self.counter.count(text)
        return cached

    def _recall_limit(self, start: int, texts: tuple[str, str, str], saved: int) -> int:
        """The recall budget: the policy's, or with ``recall_fill`` the room the other parts
        leave of the usable window (up to ``recall_max_tokens``), whichever is larger."""
        policy = self.policy
        limit = max(0, policy.recall_budget_tokens)
        cap = self.recall_cap
        if cap is not None:
            limit = min(limit, cap)
        if not policy.recall_fill:
            return limit
        count = self._count
        others = self.system_tokens + count(MEMORY_PREAMBLE) + sum(count(t) for t in texts)
        others += self.timeline.span_tokens(start, len(self.timeline)) - saved
        others += self.layout.new_piece.tokens if self.layout.new_piece is not None else 0
        room = int(self.usable / max(1.0, self.inputs.calibration)) - others - FILL_RESERVE
        filled = max(limit, min(self.recall_ceiling, room))
        return filled if cap is None else min(filled, cap)

    def compose(self, shed: Shed) -> Candidate:
        """The request with what ``shed`` says left out."""
        count = self.counter.count
        timeline = self.timeline
        start = timeline.turn_start(shed.turns)
        cut = max(start, timeline.turn_start(shed.results))
        kept_ids = _Kept(timeline.ids, start)
        anchors, over_budget = self.selector.memory_anchors(kept_ids)
        if shed.anchors is not None:
            anchors = anchors[: shed.anchors]
        summary_text = self.summary_text if shed.summary else ""
        ledger_text = self.ledger_text if shed.summary and shed.ledger else ""
        anchors_text = anchors_section([entry.text for entry in anchors])
        saved = timeline.span_saved(start, cut)
        limit = self._recall_limit(start, (summary_text, ledger_text, anchors_text), saved)
        if shed.recall is not None:
            limit = min(limit, shed.recall)
        recall = []
        if self.inputs.recalled:
            excluded = set(timeline.ids[start:]) | {entry.message.id for entry in anchors}
            recall = self.selector.recall(excluded, limit, summary_text)
        texts = MemoryTexts(
            summary=PARAGRAPH.join(t for t in (summary_text, ledger_text) if t),
            anchors=anchors_text,
            recall=recall_text(recall),
            recall_blocks=recall_blocks([(entry.passage, entry.text) for entry in recall]),
            block=self.block if shed.summary else None,
        )
        preamble = count(MEMORY_PREAMBLE)
        sections = dict.fromkeys(SECTIONS, 0)
        sections["system"] = self.system_tokens
        sections["tools"] = self.tools_tokens
        if texts.summary:
            sections["summary"] = preamble + count(texts.summary)
        if texts.anchors:
            sections["anchors"] = count(texts.anchors) + (0 if texts.summary else preamble)
        if texts.recall:
            sections["recall"] = count(texts.recall)
        candidate = Candidate(
            sections=sections,
            anchor_ids=[entry.message.id for entry in anchors],
            recalled_ids=list(dict.fromkeys(entry.message.id for entry in recall)),
            over_budget_anchors=over_budget,
            cut_messages=timeline.span_cuts(start, len(timeline)),
        )
        candidate = self.layout.compose(
            candidate, self._units(start, cut), texts, single=self.policy.single_user_message
        )
        if ledger_text:
            # The ledger travels with the summary in the memory block but has its own budget.
            moved = min(candidate.sections["summary"], self.counter.count(ledger_text) + 1)
            candidate.sections["summary"] -= moved
            candidate.sections["ledger"] += moved
        candidate.recall_tokens = candidate.sections["recall"]
        return candidate

    def holds_refs(self, shed: Shed) -> bool:
        """Whether the request may carry attachment references (the kept raw messages or
        the new message hold one)."""
        timeline = self.timeline
        start = timeline.turn_start(shed.turns)
        fresh = self.layout.new_piece
        return bool(timeline.span_refs(start, len(timeline))) or (
            fresh is not None and any(is_ref(block) for block in fresh.content)
        )

    def fits(self, tokens: int, limit: int | None = None) -> bool:
        """Whether ``tokens`` (and their calibrated count) fit the usable window (or the
        budget it is kept within, by default)."""
        calibrated = calibrate(tokens, self.inputs.calibration)
        return max(tokens, calibrated) <= (self.usable if limit is None else limit)

    def _units(self, start: int, cut: int) -> list[Unit]:
        """The kept raw messages from ``start``: runs kept by the timeline (laid out once,
        reused by later builds) and fresh pieces before and after them; those before ``cut``
        with their large tool results cut, laid out afresh.

        Runs between grid lines near both ends, runs :data:`WIDE` and ``WIDE²`` times wider
        further in (so that few runs are looked up and few messages laid out per build);
        neighbouring runs that are independent of each other are joined in a chain, which the
        next build slices instead of joining again (:func:`~.runs.chain`).
        """
        timeline = self.timeline
        end = len(timeline)
        head = timeline.span_shrunk(start, cut)
        bounds = timeline.run_bounds(cut) if not self.policy.single_user_message else []
        if not bounds:
            return [[*head, *timeline.span_pieces(cut, end)]]
        levels = [bounds, timeline.wide_bounds(cut, WIDE), timeline.wide_bounds(cut, WIDE**2)]
        groups: list[list[Composed]] = []
        for first, last in spans(levels):
            run = self._run(first, last)
            if groups and independent(groups[-1][-1], run):
                groups[-1].append(run)
            else:
                groups.append([run])
        origin = timeline.origin
        units: list[Unit] = [[*head, *timeline.span_pieces(cut, bounds[0] - origin)]]
        longest = max(groups, key=len, default=[])
        for group in groups:
            if group is longest:
                made_before = timeline.chains if self.chains is None else self.chains
                made = chain(group, made_before)
                # One chain per compose of a build (the window's front moves between them).
                self.chains = [made, *(c for c in made_before if c is not made)][:3]
                units.append(made)
            else:
                units.extend(group)
        units.append(timeline.span_pieces(bounds[-1] - origin, end))
        return units

    def _run(self, start: int, end: int) -> Composed:
        """The composed run of the messages at absolute positions ``start`` to ``end``: the
        timeline's (an earlier build laid it out), else composed once for this build."""
        span = (start, end)
        found: Composed | None = self.timeline.runs.get(span) or self.runs.get(span)
        if found is None:
            origin = self.timeline.origin
            pieces = self.timeline.span_pieces(start - origin, end - origin)
            found = self.runs[span] = compose_run(pieces, self.counter)
        return found

    def laid_out(self) -> Layout:
        """What this build laid out, for the caller to keep in its timeline."""
        chains = None if self.chains is None else tuple(self.chains)
        return Layout(runs=self.runs, chains=chains)

    def build(self) -> tuple[Candidate, Shed]:
        """Give way in :data:`~.budget.GIVE_WAY` order until the request fits."""
        shed = Shed()
        candidate = self.compose(shed)
        floor = int(RECALL_FLOOR * self.policy.recall_budget_tokens)
        while not self.fits(candidate.total):
            excess = max(1, self._excess(candidate.total))
            recall = candidate.recall_tokens
            # Each step gives way by something: a recall limit only ever goes down (the
            # recalled text can count a few tokens over its limit, which must not hold it).
            limit = recall if shed.recall is None else shed.recall
            results = self.timeline.turn_start(shed.results), self.timeline.turn_start(self.max_cut)
            if self.timeline.span_saved(*results):  # large tool results of older turns first
                reach = self.timeline.first_turn_reaching(
                    shed.results, self.max_cut, excess, saved=True
                )
                shed = replace(shed, results=reach)
            elif recall > floor and candidate.recalled_ids and limit > floor:
                shed = replace(shed, recall=max(floor, min(limit - 1, recall - excess)))
            elif shed.ledger and shed.summary and self.ledger_text:
                shed = replace(shed, ledger=False)
            elif shed.turns < self.max_drop:
                # The fewest oldest turns (one at least) whose tokens cover the excess.
                turns = self.timeline.first_turn_reaching(shed.turns, self.max_drop, excess)
                shed = replace(shed, turns=turns)
            elif candidate.recalled_ids and limit > 0:
                shed = replace(shed, recall=max(0, min(limit - 1, recall - excess)))
            elif candidate.anchor_ids:
                shed = replace(shed, anchors=len(candidate.anchor_ids) - 1)
            elif shed.summary and (self.summary_text or self.block is not None):
                shed = replace(shed, summary=False)
            else:
                break
            candidate = self.compose(shed)
        return candidate, shed

    def _excess(self, tokens: int) -> int:
        """Tokens over the usable window, in local tokens."""
        used = max(tokens, calibrate(tokens, self.inputs.calibration))
        return int((used - self.usable) / max(1.0, self.inputs.calibration)) + 1


def _ttl(builder: _Builder, candidate: Candidate) -> CacheTtl:
    """The lifetime the breakpoints ask for: the policy's, or chosen by the pauses."""
    asked = builder.policy.cache_ttl
    if asked in ("5m", "1h"):
        return "1h" if asked == "1h" else "5m"
    sections = candidate.sections
    turn = sections["recent"] // max(1, builder.turn_count) + sections["new_message"]
    return choose_ttl(builder.inputs.pauses, candidate.total, turn, builder.policy.prices)


def build_request(inputs: ContextInputs, timeline: Timeline) -> BuiltRequest:
    """Build the exact next request and its token breakdown. Pure: nothing it is given is
    changed, the timeline included.

    Args:
        inputs: The conversation's state; ``raw_messages`` are reused with their stored
            ``token_count`` wherever they are sent unmodified.
        timeline: The messages to send, prepared: :func:`~.timeline.prepared` aligns a kept
            timeline to them (the engine keeps one per conversation, so only new messages are
            prepared), :func:`~.timeline.fresh_timeline` makes one for a build alone. Runs
            laid out by earlier builds and kept in it are reused.

    Returns:
        The request, its breakdown and what it carries, with what this build laid out
        (:attr:`BuiltRequest.layout`: give it to :meth:`~.timeline.Timeline.keep` to reuse it).

    Raises:
        ValueError: when ``new_message`` is given but has nothing to send.
    """
    builder = _Builder(inputs, timeline)
    candidate, shed = builder.build()
    # Kept within the budget where it can be; sendable as long as the model can take it.
    fits = builder.fits(candidate.total, builder.limit)
    messages = candidate.messages
    # The breakpoint ends the part the next request repeats: the whole request, or the
    # new message without the excerpts that close it (the next request sends it without).
    marked, block = len(messages) - 1, -1
    if candidate.recall_at is not None:
        marked, block = (
            (marked, candidate.recall_at - 1) if candidate.recall_at else (marked - 1, -1)
        )
    # A compaction block is sent back exactly as received: no breakpoint is put on it.
    opens_with_block = bool(messages) and messages[0]["content"][0].get("type") == "compaction"
    ttl = _ttl(builder, candidate)
    mark = EPHEMERAL if ttl == "5m" else {**EPHEMERAL, "ttl": "1h"}
    if marked >= 0 and not (marked == 0 and opens_with_block):
        last = messages[marked]
        content = list(last["content"])
        content[block] = {**content[block], "cache_control": mark}
        messages[marked] = {"role": last["role"], "content": content}
    request: dict[str, Any] = {"model": inputs.model}
    if inputs.tools:  # first in the API's cache prefix: tools, system, messages
        request["tools"] = [dict(tool) for tool in inputs.tools]
    if candidate.system:
        request["system"] = [
            {**block, "cache_control": mark} if "cache_control" in block else block
            for block in candidate.system
        ]
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
        trigger_tokens=trigger_tokens(inputs.policy, builder.usable, candidate.sections),
        warn_tokens=int(inputs.policy.warn_ratio * builder.usable),
        warnings=tuple(shed_notes(builder, candidate, shed, fits)),
        calibration=inputs.calibration,
        budgets={**budgets(inputs.policy, builder.usable), "ledger": builder.ledger_budget},
        elastic=max(0, candidate.sections["recall"] - inputs.policy.recall_budget_tokens),
        budget=builder.usable if builder.usable < builder.limit else None,
        cache_ttl=ttl,
        results_cuttable=builder.timeline.span_saved(
            0, builder.timeline.turn_start(builder.max_cut)
        ),
    )
    dropped = builder.timeline.ids[: builder.timeline.turn_start(shed.turns)]
    return BuiltRequest(
        request=request,
        breakdown=breakdown,
        sent_message_ids=tuple(candidate.sent_ids),
        anchor_ids=tuple(candidate.anchor_ids),
        recalled_ids=tuple(candidate.recalled_ids),
        dropped_message_ids=tuple(dropped),
        fits=fits,
        attachments=builder.holds_refs(shed),
        layout=builder.laid_out(),
    )
