"""Compaction: folding a conversation's older turns into versioned summaries, in the background.

The front door is :class:`CompactionWorker` (:mod:`.worker`: scheduling, leases, one version at a
time) and its errors; inside are the summarizers (:mod:`.summarizers`, :mod:`.server_summary`),
folding a long span in chunks (:mod:`.fold`), the summary gate (:mod:`.gate`), what is due
(:mod:`.due`) and the stored result of a version (:mod:`.version_result`).
"""

from tui_chat.engine.compaction.errors import NothingToCompact
from tui_chat.engine.compaction.worker import (
    BACKLOG_STEP_MESSAGES,
    CompactionError,
    CompactionWorker,
)

__all__ = ["BACKLOG_STEP_MESSAGES", "CompactionError", "CompactionWorker", "NothingToCompact"]
