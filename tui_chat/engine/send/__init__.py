"""Sending a turn: the user's message stored first, the reply streamed and stored honestly.

The front door of the package: :class:`ChatSession` sends a turn (``session.py``), holding the
conversation's send lease across processes (``lock.py``), keeping the partial reply's blocks
as they stream (``partial.py``) and continuing a reply its server tools paused
(``paused.py``). What a send produced is a :class:`SendOutcome`; :class:`EmptyMessage` and
:class:`MessageTooLarge` are the refusals that store nothing. The requests it sends are built
by :class:`~tui_chat.engine.build.requests.Requests`, shared with the compaction worker.
"""

from tui_chat.engine.send.session import ChatSession, EmptyMessage, MessageTooLarge, SendOutcome

__all__ = ["ChatSession", "EmptyMessage", "MessageTooLarge", "SendOutcome"]
