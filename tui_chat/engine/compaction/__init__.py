"""Compaction: folding a conversation's older turns into versioned summaries, in the background.

The front door is :class:`CompactionWorker` (:mod:`.worker`: scheduling, leases, one version at a
time) and its errors; inside are the summarizers (:mod:`.summarizers`, :mod:`.server_summary`),
folding a long span in chunks (:mod:`.fold`), the summary gate (:mod:`.gate`), what is due
(:mod:`.due`), the stored result of a version (:mod:`.version_result`) and the compact preview
(:mod:`.preview`: what a compact would fold and what the next request would lose by it).
"""

from tui_chat.engine.compaction.errors import NothingToCompact
from tui_chat.engine.compaction.preview import CompactPreview, LostMessage
from tui_chat.engine.compaction.worker import (
    BACKLOG_STEP_MESSAGES,
    CompactionError,
    CompactionWorker,
)

__all__ = [
    "BACKLOG_STEP_MESSAGES",
    "CompactPreview",
    "CompactionError",
    "CompactionWorker",
    "LostMessage",
    "NothingToCompact",
]
