"""The Anthropic layer: streaming replies, summary calls, token counts, errors, model table.

Import the submodules directly (``tui_chat.llm.client``, ``.errors``, ``.models``); this
package imports nothing so that start-up stays fast. The ``anthropic`` SDK itself is only
loaded when the first request is made.
"""
