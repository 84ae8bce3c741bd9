"""Where tui-chat's log records and Python warnings go: a private file, never the terminal.

Without a handler Python prints a warning record, and :mod:`warnings` prints a warning, to
stderr, which is the TUI's screen (a pydantic warning about a malformed web-search result was
printed over it). :func:`send_logs_to_file` sends both to :func:`tui_chat.paths.log_path`,
created 0600 in 0700 folders when the first record comes.
"""

from __future__ import annotations

import io
import logging
import os
import warnings
from pathlib import Path
from typing import TextIO

from tui_chat.files import make_private_dirs


class _PrivateFile(logging.FileHandler):
    """A log file opened on the first record, 0600, its folders 0700."""

    def _open(self) -> io.TextIOWrapper:
        path = Path(self.baseFilename)
        make_private_dirs(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return open(fd, "a", encoding="utf-8", errors="backslashreplace")


def send_logs_to_file(path: Path) -> None:
    """Send warnings and the records at WARNING and above to ``path`` (replacing an earlier
    call's handler)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _PrivateFile)]:
        root.removeHandler(handler)
        handler.close()
    handler = _PrivateFile(path, delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    warnings.showwarning = _log_warning


def _log_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as a record of the ``py.warnings`` logger (as ``logging.captureWarnings``
    does, but set again on every call, where that one is set once a process)."""
    text = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
    logging.getLogger("py.warnings").warning("%s", text)
