"""Claude's thinking above a reply: one dimmed line while folded, the whole text when opened.

The block streams with the reply (a word count grows on its one line, so a long think does not
push the answer down) and is folded by default, as Claude Code and claude.ai show thinking.
``t`` in navigation mode (``f5``) or a click opens and closes it. The text is shown inert:
markup and escape sequences in it are displayed, never interpreted.
"""

from __future__ import annotations

from textual.content import Content

from tui_chat.tui.text import inert_content
from tui_chat.tui.widgets.folding import Folding

__all__ = ["ThinkingBlock"]


class ThinkingBlock(Folding):
    """The thinking of one reply (possibly still streaming).

    Args:
        text: The thinking received so far (empty when the API omitted it).
        streaming: True while the reply is streaming.
        tokens: The output tokens the reply spent thinking, as the API billed them (0:
            not known); more than the text shows when the API summarized it.
    """

    DEFAULT_CSS = """
    ThinkingBlock {
        height: auto;
        color: $text-muted;
        margin: 0 0 1 0;
        &.-expanded { border-left: vkey $foreground 25%; padding-left: 1; }
    }
    """

    def __init__(self, text: str = "", *, streaming: bool = False, tokens: int = 0) -> None:
        super().__init__(classes="thinking")
        self.text = text
        self.streaming = streaming
        self.tokens = tokens
        self._words = len(text.split())

    def append(self, delta: str) -> None:
        """Add a streamed piece of thinking."""
        # Words split across two deltas are counted twice at most: the count is a gauge.
        self._words += len(delta.split())
        self.text += delta
        self.show_fold()

    def finish(self, text: str, tokens: int = 0) -> None:
        """The stored thinking of the finished reply and the tokens it was billed."""
        self.text, self.streaming, self.tokens = text, False, tokens
        self._words = len(text.split())
        self.show_fold()

    def show_fold(self) -> None:
        """The folded line or the whole text."""
        self.update(self.line())

    def line(self) -> Content:
        """What the block shows now."""
        billed = f" · {self.tokens:,} tokens" if self.tokens else ""
        if not self.text.strip():
            state = "thinking…" if self.streaming else "thinking not shown (omitted or redacted)"
            return Content.styled(f"✻ {state}{billed}", "italic")
        count = f"{self._words:,} word{'s' if self._words != 1 else ''}{billed}"
        if self.expanded:
            head = Content.styled(f"▾ Thinking · {count}  (t folds)\n", "italic")
            return Content.assemble(head, inert_content(self.text.strip()))
        state = "Thinking…" if self.streaming else "Thinking"
        return Content.styled(f"▸ {state} · {count}  (t or click to open)", "italic")
