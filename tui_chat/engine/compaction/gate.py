"""Apply :func:`tui_chat.core.summary_check.check_summary` to a summarizer's output."""

from __future__ import annotations

from dataclasses import replace

from tui_chat.core.policy import Policy
from tui_chat.core.summarize import SummaryError, SummaryOutput
from tui_chat.core.summary_check import MAX_OVERSHOOT, SummaryRejected, check_summary
from tui_chat.core.tokens import TokenCounter


def gate_summary(output: SummaryOutput, policy: Policy, counter: TokenCounter) -> SummaryOutput:
    """The output to store, cut to the summary budget, or :class:`SummaryError` with the reason.

    A server compaction block is signed and sent back exactly as received, so it is never cut:
    it is refused when empty or more than :data:`MAX_OVERSHOOT` times the budget.

    Args:
        output: What the summarizer returned.
        policy: The conversation's policy (``summary_max_tokens`` is the budget).
        counter: The token counter.

    Returns:
        ``output``, its text cut to the budget when it was over it.

    Raises:
        SummaryError: the summary must not become active (recorded as the failure reason).
    """
    budget = max(1, policy.summary_max_tokens)
    try:
        if output.compaction_block is not None:
            check_summary(output.text, int(MAX_OVERSHOOT * budget), counter)
            return output
        checked = check_summary(output.text, budget, counter)
    except SummaryRejected as exc:
        raise SummaryError(str(exc)) from None
    if checked.cut_from is None:
        return output
    return replace(output, text=checked.text)
