"""The pure rules of attachments, code blocks and "compact up to here" (no I/O)."""

from __future__ import annotations

import base64

import pytest

from tests.fakes import sample_files
from tui_chat.core import attachments as att
from tui_chat.core.blocks import block_text, message_body
from tui_chat.core.codeblocks import code_blocks
from tui_chat.core.models import Message
from tui_chat.core.tokens import BLOCK_OVERHEAD_TOKENS, get_counter
from tui_chat.core.upto import BoundaryError, boundary_upto


@pytest.mark.parametrize(
    ("data", "media_type", "size"),
    [
        (sample_files.png(4, 3), "image/png", (4, 3)),
        (sample_files.gif(5, 2), "image/gif", (5, 2)),
        (sample_files.jpeg(640, 480), "image/jpeg", (640, 480)),
        (sample_files.webp(300, 200), "image/webp", (300, 200)),
    ],
)
def test_images_are_recognised_by_their_bytes(
    data: bytes, media_type: str, size: tuple[int, int]
) -> None:
    # The extension is not trusted: a PNG named .txt is still a PNG.
    found = att.describe("picture.txt", data)
    assert (found.kind, found.media_type, (found.width, found.height)) == (
        "image",
        media_type,
        size,
    )


def test_image_tokens_follow_the_documented_formula() -> None:
    assert att.image_tokens(200, 200) == 54  # the docs' table: ~54 for 200x200
    assert att.image_tokens(1000, 1000) == 1334  # ~1334 for 1000x1000
    # Scaled to 1568 px on the long edge, and never above ~1,600.
    assert att.image_tokens(4000, 4000) == att.IMAGE_MAX_TOKENS


def test_pdf_pages_and_text_files() -> None:
    document = att.describe("report.pdf", sample_files.pdf(3))
    assert (document.kind, document.pages, document.tokens) == ("document", 3, 3 * 2250)
    text = att.describe("notes.md", b"# Notes\nport 8443\n")
    assert text.kind == "text" and text.text == "# Notes\nport 8443\n"


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("big.png", sample_files.png(2, 2, filler=att.MAX_IMAGE_BYTES), "at most 5.0 MB"),
        ("wide.png", sample_files.png(9000, 10), "at most 8000×8000 px"),
        ("long.pdf", sample_files.pdf(101), "at most 100 per request"),
        (
            "secret.pdf",
            sample_files.pdf(1, password="s3cret"),
            "encrypted",
        ),
        ("blob.bin", b"\x00\x01\x02binary", "not an image"),
        ("empty.txt", b"", "empty"),
    ],
)
def test_documented_limits_refuse_a_file_with_its_reason(
    name: str, data: bytes, reason: str
) -> None:
    with pytest.raises(att.AttachmentError, match=reason) as caught:
        att.describe(name, data)
    assert name in str(caught.value)


def test_request_limits() -> None:
    image = att.describe("a.png", sample_files.png(2100, 10)).ref()
    att.check_request([image] * 20)
    with pytest.raises(att.AttachmentError, match="more than 20 images"):
        att.check_request([image] * 21)
    small = att.describe("b.png", sample_files.png(4, 4)).ref()
    with pytest.raises(att.AttachmentError, match="at most 100 per request"):
        att.check_request([small] * 101)
    pdf = att.describe("c.pdf", sample_files.pdf(60)).ref()
    with pytest.raises(att.AttachmentError, match="120 PDF pages"):
        att.check_request([pdf, pdf])


def test_reference_blocks_render_count_and_become_api_blocks() -> None:
    data = sample_files.png(800, 600)
    ref = att.describe("plot.png", data).ref()
    assert ref["sha256"] and ref["tokens"] == att.image_tokens(800, 600)
    assert block_text(ref) == "[image attached: plot.png, 800×600]"
    assert get_counter().count_block(ref) == BLOCK_OVERHEAD_TOKENS + ref["tokens"]
    block = att.api_block({**ref, "cache_control": {"type": "ephemeral"}}, data)
    assert block["type"] == "image" and block["cache_control"] == {"type": "ephemeral"}
    assert base64.b64decode(block["source"]["data"]) == data
    document = att.describe("r.pdf", sample_files.pdf(1))
    sent = att.api_block(document.ref(), document.data)
    assert sent["type"] == "document" and sent["source"]["media_type"] == "application/pdf"
    assert sent["title"] == "r.pdf"
    text = att.describe("conf.toml", b"port = 8443\n").ref()
    assert att.api_block(text, None) == {
        "type": "text",
        "text": '<file name="conf.toml">\nport = 8443\n\n</file>',
    }
    with pytest.raises(att.AttachmentError, match="missing"):
        att.api_block(ref, None)
    assert att.chip(ref) == f"📎 plot.png · {att.human_size(len(data))}"


def _message(mid: int, role: str, turn: int, text: str = "x", **kw: object) -> Message:
    return Message(
        id=mid,
        conversation_id="c",
        role=role,  # type: ignore[arg-type]
        content=[{"type": "text", "text": text}],
        text=text,
        turn=turn,
        token_count=3,
        status=kw.get("status", "complete"),  # type: ignore[arg-type]
        created_at="2026-01-01T00:00:00+00:00",
    )


def test_summaries_and_search_read_a_text_attachment_and_note_an_image() -> None:
    message = Message(
        id=1,
        conversation_id="c",
        role="user",
        content=[
            att.describe("deploy.txt", b"deploy to eu-west-3").ref(),
            att.describe("shot.png", sample_files.png(4, 3)).ref(),
            {"type": "text", "text": "Look"},
        ],
        text="Look",
        turn=1,
        token_count=9,
        status="complete",
        created_at="2026-01-01T00:00:00+00:00",
    )
    body = message_body(message)
    assert "deploy to eu-west-3" in body and "[image attached: shot.png, 4×3]" in body


def test_compact_up_to_here_takes_whole_turns() -> None:
    messages = [
        _message(1, "user", 1),
        _message(2, "assistant", 1),
        _message(3, "user", 2),
        _message(4, "assistant", 2),
        _message(5, "user", 3),
    ]
    assert boundary_upto(messages, 1) == 2  # the user message's turn ends with its answer
    assert boundary_upto(messages, 4) == 4
    with pytest.raises(BoundaryError, match="no final answer"):
        boundary_upto(messages, 5)
    with pytest.raises(BoundaryError, match="already summarized"):
        boundary_upto(messages[2:], 2, covered_to=2)
    with pytest.raises(BoundaryError, match="not in this conversation"):
        boundary_upto(messages, 99)


def test_code_blocks_are_found_in_order() -> None:
    text = (
        "Intro\n```python\nprint('a')\n```\ntext\n~~~\nplain\n~~~\n"
        "````md\n```\nnested\n```\n````\n  ```sh\n  ls -l\n   cd /\n  ```\n```\nunclosed"
    )
    blocks = code_blocks(text)
    assert [b.code for b in blocks] == [
        "print('a')",
        "plain",
        "```\nnested\n```",
        "ls -l\n cd /",
        "unclosed",
    ]
    assert [b.language for b in blocks] == ["python", "", "md", "sh", ""]
    assert code_blocks("no code here") == []


def test_a_summary_notes_images_and_documents_it_does_not_mention() -> None:
    image = att.describe("wiring.png", sample_files.png(4, 3)).ref()
    pdf = att.describe("spec.pdf", sample_files.pdf(2)).ref()
    text = att.describe("notes.txt", b"plain").ref()
    first = Message(1, "c", "user", [image, pdf], "", 1, 9, "complete", "2026-01-01")
    second = Message(2, "c", "user", [text, image], "", 2, 9, "complete", "2026-01-01")
    noted = att.attachment_note("We chose SQLite.", [first, second])
    assert noted == "We chose SQLite.\nAttached: wiring.png (image), spec.pdf (document)."
    assert att.attachment_note("See wiring.png and spec.pdf.", [first]) == (
        "See wiring.png and spec.pdf."
    )


def test_a_message_without_files_keeps_its_text_exactly() -> None:
    assert att.message_text("x ", []) == "x "
    ref = att.describe("a.txt", b"body").ref()
    assert att.message_text(" ", [ref]) == att.ref_label(ref)
    assert att.message_text("look", [ref]) == "look\n\n" + att.ref_label(ref)
