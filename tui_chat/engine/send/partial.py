"""What a streaming reply has received so far, in the shape it is stored in.

The session flushes it to the reply row a few times a second and keeps it when the reply is
cancelled or breaks: text and thinking in the order they arrived, and the server tool blocks
(a web search's call and results) finished so far. Thinking cut short has no signature; it is
shown and exported, never sent back (thinking is never sent back, see
:func:`tui_chat.core.request.clip.clean_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tui_chat.core.models import ContentBlock


@dataclass
class PartialReply:
    """The blocks of a reply received so far."""

    runs: list[tuple[str, list[str]]] = field(default_factory=list)
    """Text and thinking runs in arrival order: ``(kind, pieces)``."""
    blocks: list[ContentBlock] = field(default_factory=list)
    """Finished server tool blocks, in arrival order."""
    _order: list[tuple[str, int]] = field(default_factory=list)

    def add(self, delta: str, kind: Literal["text", "thinking"]) -> None:
        """Append a delta to the current run of its kind (a new run after anything else)."""
        if self._order and self._order[-1][0] == kind:
            self.runs[self._order[-1][1]][1].append(delta)
            return
        self.runs.append((kind, [delta]))
        self._order.append((kind, len(self.runs) - 1))

    def add_block(self, block: ContentBlock) -> None:
        """A finished server tool block."""
        self.blocks.append(block)
        self._order.append(("block", len(self.blocks) - 1))

    def content(self) -> list[ContentBlock]:
        """The blocks so far, as they would be stored."""
        out: list[ContentBlock] = []
        for kind, index in self._order:
            if kind == "block":
                out.append(self.blocks[index])
                continue
            text = "".join(self.runs[index][1])
            if not text:
                continue
            out.append(
                {"type": "text", "text": text}
                if kind == "text"
                else {"type": "thinking", "thinking": text}
            )
        return out
