"""The request builder: what is sent to the model, exactly, and what each part costs.

:func:`build_request` is the entry point; the modules hold one concept each: the records
(:mod:`.types`), the fixed texts (:mod:`.render`), cutting to limits (:mod:`.clip`), messages as
pieces (:mod:`.pieces`), what the API accepts (:mod:`.wellformed`), choosing pins and excerpts
(:mod:`.selection`), the layouts (:mod:`.compose`) and fitting the window (:mod:`.builder`).
"""

from tui_chat.core.request.builder import build_request
from tui_chat.core.request.clip import CUT_NOTE
from tui_chat.core.request.draft import draft_breakdown
from tui_chat.core.request.render import (
    CONTINUED_TEXT,
    MEMORY_PREAMBLE,
    PINNED_HEADER,
    RECALL_HEADER,
    SINGLE_CONTEXT_HEADER,
    anchor_entry,
    memory_text,
    summary_section,
)
from tui_chat.core.request.timeline import Timeline, fresh_timeline, prepared
from tui_chat.core.request.types import SECTIONS, Breakdown, BuiltRequest, ContextInputs, Layout

__all__ = [
    "CONTINUED_TEXT",
    "CUT_NOTE",
    "MEMORY_PREAMBLE",
    "PINNED_HEADER",
    "RECALL_HEADER",
    "SECTIONS",
    "SINGLE_CONTEXT_HEADER",
    "Breakdown",
    "BuiltRequest",
    "ContextInputs",
    "Layout",
    "Timeline",
    "anchor_entry",
    "build_request",
    "draft_breakdown",
    "fresh_timeline",
    "memory_text",
    "prepared",
    "summary_section",
]
