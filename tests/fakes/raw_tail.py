"""The raw tail read the plain way: the oracle of the engine's incremental reader.

:class:`tui_chat.engine.build.tail.TailWindow` reads only what changed since the last build; this
reads every message after the coverage and walks back from the newest, which is obviously
right and too slow to ship (it parses the whole unsummarised history on every build).
"""

from __future__ import annotations

from tui_chat.core.models import Message
from tui_chat.core.turns import starts_turn
from tui_chat.store.repository import Store


async def raw_tail(
    store: Store, conversation_id: str, after_id: int, budget: int, *, cap: int | None = None
) -> list[Message]:
    """The newest whole turns after ``after_id`` whose stored counts fit ``budget`` tokens.

    The newest message over the budget is kept; each message counts at most ``cap``; a leading
    partial turn (its start lies before what was read) is left out unless nothing else is left.
    """
    messages = await store.messages.history(conversation_id, after_id=after_id)
    spent = 0
    start = len(messages)
    while start > 0:
        start -= 1
        tokens = messages[start].token_count
        spent += tokens if cap is None else min(tokens, cap)
        if spent > budget:
            break
    tail = messages[start:]
    if tail and not starts_turn(tail[0].role, tail[0].content):
        index = 0
        while index < len(tail) and tail[index].turn == tail[0].turn:
            index += 1
        if index < len(tail):
            tail = tail[index:]
    return tail
