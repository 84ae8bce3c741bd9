"""Moving conversations in and out: export (JSON, Markdown, HTML) and import.

The front door is :class:`Transfer` (``service.transfer``, ``exports.py``) and the Markdown of
one message (``message_markdown``). Inside: the export format and the import that checks it
(``transfer.py``), summaries and fork points carried along (``restore.py``), attached files
carried along (``attachment_transfer.py``), the streamed JSON and Markdown writers
(``export_stream.py``) and the HTML page (``export_html.py``, ``export_web.py``).
"""

from tui_chat.engine.transfer.exports import FORMATS, Transfer, UnknownFormat
from tui_chat.engine.transfer.transfer import ImportError_, message_markdown

__all__ = ["FORMATS", "ImportError_", "Transfer", "UnknownFormat", "message_markdown"]
