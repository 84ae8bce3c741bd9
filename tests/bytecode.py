"""Imported first by ``tests/conftest.py``: where the suite's compiled bytecode is kept."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def _keep_bytecode_outside_the_checkout() -> None:
    """Where the shell says not to write bytecode (``PYTHONDONTWRITEBYTECODE``), every process
    of the suite compiled every module it imported, each time: a worker's collection took 6 s
    of which 4 were compiling and rewriting the tests' asserts, and each ``tui-chat`` process a
    test starts compiled the app again. The bytecode is kept instead in a directory of the
    system's temporary files (``PYTHONPYCACHEPREFIX``), never beside the sources, so the
    checkout stays as clean as the shell asked; the xdist workers and every process a test
    starts inherit it. A prefix the shell set is kept."""
    if not sys.dont_write_bytecode:
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(
        Path(tempfile.gettempdir()) / f"tui-chat-tests-bytecode-{os.getuid()}"
    )
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_keep_bytecode_outside_the_checkout()
