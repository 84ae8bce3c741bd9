"""What a command that neither recalls nor writes HTML loads: not numpy (the recall vectors'),
not Markdown or Pygments (the HTML export's). Each took about 0.1 s of every ``tui-chat``
process's start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow  # a real process
def test_list_loads_neither_numpy_nor_the_html_export(tmp_path: Path) -> None:
    code = (
        "import contextlib, io, json, sys\n"
        "from tui_chat.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['list'])\n"
        "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TUI_CHAT_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0
    assert not set(loaded) & {"numpy", "markdown_it", "pygments"}
    assert "aiosqlite" in loaded  # the command did open the database
