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


@pytest.mark.slow  # real processes
@pytest.mark.parametrize(("env_fps", "expected"), [(None, 120), ("30", 30)])
def test_the_tui_draws_up_to_120_frames_a_second_unless_the_user_says(
    tmp_path: Path, env_fps: str | None, expected: int
) -> None:
    # A key's echo waits for the next frame; Textual's default is 60.
    code = (
        "import tui_chat.tui\n"
        "def run_app(*args, **kwargs):\n"
        "    import textual.constants, textual.screen\n"
        "    print(textual.constants.MAX_FPS, round(1 / textual.screen.UPDATE_PERIOD))\n"
        "    return 0\n"
        "tui_chat.tui.run_app = run_app\n"
        "from tui_chat.cli import main\n"
        "raise SystemExit(main([]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TEXTUAL"))}
    env["TUI_CHAT_HOME"] = str(tmp_path)
    if env_fps is not None:
        env["TEXTUAL_FPS"] = env_fps
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(expected), str(expected)]
