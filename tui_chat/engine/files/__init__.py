"""Attached files: reading one from disk, storing its bytes once, and the Files API copies.

Inside: reading, storing and expanding attachments into request blocks (``attachments.py``)
and the uploads to the endpoint's Files API that stand in for large ones (``remote_files.py``).
"""

from tui_chat.engine.files.attachments import AttachmentError, read_attachment
from tui_chat.engine.files.remote_files import RemoteFiles

__all__ = ["AttachmentError", "RemoteFiles", "read_attachment"]
