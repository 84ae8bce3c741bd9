"""The gauge's fast path: a built request's breakdown with a draft counted as its new message."""

from __future__ import annotations

from dataclasses import replace

from tui_chat.core.request.types import Breakdown, BuiltRequest
from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, calibrate


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
    # Recall that filled the room left yields to the draft first, as the real build does.
    grown = sections["new_message"] - old.sections.get("new_message", 0)
    yielded = min(old.elastic, max(0, grown))
    sections["recall"] -= yielded
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
        elastic=old.elastic - yielded,
    )
