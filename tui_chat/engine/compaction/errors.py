"""Why a compaction did not run: the errors of :mod:`tui_chat.engine.compaction.worker`."""

from __future__ import annotations


class CompactionError(Exception):
    """A compaction that could not run (nothing to fold, already running, failed)."""


class NothingToCompact(CompactionError):
    """Too few complete turns to fold yet: not a failure, nothing was started."""
