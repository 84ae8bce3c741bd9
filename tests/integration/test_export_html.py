"""`export --format html`: one self-contained, inert page, written a page at a time."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Awaitable, Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tests.seam import engine_of
from tui_chat.engine.files import read_attachment
from tui_chat.engine.service import ChatService
from tui_chat.engine.transfer.export_html import write_html_export

Make = Callable[..., Awaitable[ChatService]]

HOSTILE = (
    "Here:\n\n<script>alert('x')</script>\n\n<img src=x onerror=alert(1)>\n\n"
    "[click](javascript:alert(1)) ![track](https://tracker.example/p.png)\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n"
)


class Page(HTMLParser):
    """Every element of a page with its attributes, and the text of each ``<article>``."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def having(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [
            a
            for t, a in self.elements
            if t == tag and all(v in a.get(_name(k), "").split() for k, v in attrs.items())
        ]


def _name(keyword: str) -> str:
    """``class_`` → ``class``, ``http_equiv`` → ``http-equiv``."""
    return keyword.rstrip("_").replace("_", "-")


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


async def _conversation(service: ChatService, fake: FakeAnthropic, tmp_path: Path) -> str:
    conv = await service.conversations.new()
    image = tmp_path / "plot.png"
    image.write_bytes(sample_files.png(40, 30))
    fake.push_reply(HOSTILE)
    await service.send(conv.id, "show me code", attachments=[read_attachment(image)])
    for n in range(6):
        await service.send(conv.id, f"question {n} about the deploy")
    history = await service.messages.history(conv.id)
    await service.messages.pin(history[1].id, "the code")
    await service.summaries.compact(conv.id)
    return conv.id


async def test_the_page_is_inert_self_contained_and_marks_pins_and_summaries(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    cid = await _conversation(service, fake_anthropic, tmp_path)
    text = await service.transfer.export(cid, "html")
    page = parse(text)
    tags = {tag for tag, _ in page.elements}
    # Model output is text: no script, no event handler, no raw <img> it wrote, no fetch.
    assert "script" not in tags and "iframe" not in tags
    assert not any(k.startswith("on") for _, attrs in page.elements for k in attrs)
    assert "&lt;script&gt;alert" in text
    for _, attrs in page.elements:  # nothing loads by itself; a link is only followed
        assert attrs.get("src", "data:image/png;base64,").startswith("data:image/png;base64,")
        assert attrs.get("href", "#").startswith(("#", "https://")), attrs
    assert '<a href="https://tracker.example/p.png">track</a>' in text
    policy = page.having("meta", http_equiv="Content-Security-Policy")
    assert policy and "default-src 'none'" in policy[0]["content"]
    # The attached image is embedded; code is highlighted by Pygments.
    assert len(page.having("img", class_="attached")) == 1
    assert page.having("span", class_="k")  # the `def`/`return` keywords
    # Every message is there, in order; the pin and the summary are marked.
    history = await service.messages.history(cid)
    articles = page.having("article", class_="msg")
    assert [a["id"] for a in articles] == [f"m{m.id}" for m in history]
    pinned = page.having("article", class_="pinned")
    assert [a["id"] for a in pinned] == [f"m{history[1].id}"] and "pinned: the code" in text
    versions = await engine_of(service).store.summaries.versions(cid)
    active = [s for s in versions if s.status == "completed"][-1]
    folded = [a["id"] for a in page.having("article", class_="folded")]
    assert folded == [f"m{m.id}" for m in history if m.id <= active.covers_to_message_id]
    assert folded and len(folded) < len(history)
    assert page.having("details", class_="summary") and "· active" in text


async def test_the_page_written_in_small_pieces_is_the_page(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    cid = await _conversation(service, fake_anthropic, tmp_path)
    whole: list[str] = []
    paged: list[str] = []
    await write_html_export(engine_of(service).store, cid, whole.append)
    await write_html_export(engine_of(service).store, cid, paged.append, page=2)
    assert "".join(paged) == "".join(whole)
    assert "".join(paged).count("<article") == len(await service.messages.history(cid)) == 14


@pytest.mark.slow  # real tui-chat processes
def test_the_cli_writes_html_by_suffix_and_to_stdout(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.push_reply("use `uv` <b>now</b>")
    assert run(isolated_env, "send", "--new", "which tool?", fake=fake_anthropic).returncode == 0
    out = tmp_path / "chat.html"
    result = run(isolated_env, "export", "last", "-o", str(out))
    assert result.returncode == 0, result.stderr
    saved = out.read_text(encoding="utf-8")
    assert saved.startswith("<!doctype html>") and "&lt;b&gt;now&lt;/b&gt;" in saved
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    again = run(isolated_env, "export", "last", "-o", str(out))
    assert again.returncode != 0 and out.read_text(encoding="utf-8") == saved
    shown = run(isolated_env, "export", "last", "--format", "html")
    assert shown.returncode == 0 and len(parse(shown.stdout).having("article")) == 2


BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow  # a real process
@pytest.mark.skipif(BROWSER is None, reason="no headless Chromium (Debian: apt install chromium)")
async def test_a_headless_browser_shows_the_page_offline(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    cid = await _conversation(service, fake_anthropic, tmp_path)
    page = tmp_path / "chat.html"
    await service.transfer.export_to(cid, page)
    shot = tmp_path / "shot.png"
    base = [str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=900,1400", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dom = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert dom.count('<article class="msg') == len(await service.messages.history(cid))
    assert "<script>" not in dom
