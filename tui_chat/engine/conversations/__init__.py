"""Conversations and what they hold: the use-case services ``service.conversations``,
``.branches``, ``.drafts``, ``.messages`` and ``.summaries``.

Inside: create, list, configure (``conversations.py``); forks, edited prompts and "compact up
to here" (``branches.py``); each conversation's unsent draft (``drafts.py``); pages of
messages, pins and search (``message_log.py``); deleting a message (``message_deletion.py``);
compaction and summary versions (``versions.py``).
"""

from tui_chat.engine.conversations.branches import (
    BranchError,
    Branches,
    BranchPath,
    BranchPoint,
    EditError,
)
from tui_chat.engine.conversations.conversations import NEW_TITLE, Conversations, SettingError
from tui_chat.engine.conversations.drafts import Drafts
from tui_chat.engine.conversations.message_deletion import CannotDelete, Deleted
from tui_chat.engine.conversations.message_log import MessageLog
from tui_chat.engine.conversations.versions import KeptFigures, Summaries

__all__ = [
    "NEW_TITLE",
    "BranchError",
    "BranchPath",
    "BranchPoint",
    "Branches",
    "CannotDelete",
    "Conversations",
    "Deleted",
    "Drafts",
    "EditError",
    "KeptFigures",
    "MessageLog",
    "SettingError",
    "Summaries",
]
