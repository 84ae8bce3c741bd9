"""Attachments the API would refuse are refused first, on what it counts.

Real files: images drawn by Pillow (noise, so PNG cannot shrink them), PDFs written by pypdf
and one whose page tree sits in a compressed object stream. The API counts an image's 5 MB on
its base64; a 0×0 image, a junk PDF and an encrypted one are refused with the file's name; a
150-page PDF is 150 pages however it is stored; an import's claims about a file (size, pages,
tokens, a text file's text) are replaced by what the file measures.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import sample_files
from tests.reliability.helpers import rows, run_main
from tui_chat.core import attachments as att
from tui_chat.engine.transfer.transfer import EXPORT_FORMAT

Image = pytest.importorskip("PIL.Image")


def _noise_png(side: int) -> bytes:
    """A PNG of random pixels (incompressible: its file is about ``3 × side²`` bytes)."""
    rng = random.Random(side)
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def test_the_image_limit_is_counted_on_base64_as_the_api_counts_it() -> None:
    big = _noise_png(1250)  # about 4.7 MB: under 5 MB raw, 6.3 MB as base64
    assert 4 * 1024 * 1024 < len(big) < att.MAX_IMAGE_BYTES
    with pytest.raises(att.AttachmentError, match="once encoded") as refused:
        att.describe("photo.png", big)
    assert "photo.png" in str(refused.value)
    fits = _noise_png(1000)  # about 3 MB: 4 MB as base64
    assert att.encoded_size(len(fits)) <= att.MAX_IMAGE_BYTES
    image = att.describe("fits.png", fits)
    assert (image.width, image.height) == (1000, 1000)


@pytest.mark.parametrize(("width", "height"), [(0, 0), (0, 10), (10, 0)])
def test_an_image_without_pixels_is_refused(width: int, height: int) -> None:
    with pytest.raises(att.AttachmentError, match="has no pixels") as refused:
        att.describe("empty.png", sample_files.png(width, height))
    assert "empty.png" in str(refused.value)


def test_pdf_pages_in_a_compressed_object_stream_are_counted() -> None:
    document = att.describe("packed.pdf", sample_files.pdf_object_streams(60))
    assert document.pages == 60 and document.tokens == 60 * att.PDF_PAGE_TOKENS
    with pytest.raises(att.AttachmentError, match="150 pages") as refused:
        att.describe("long.pdf", sample_files.pdf_object_streams(150))
    assert "long.pdf" in str(refused.value)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"%PDF-1.4\nthis is not a PDF at all\n", "not a readable PDF"),
        (b"%PDF-1.7\n" + bytes(range(256)) * 64, "not a readable PDF"),
        (sample_files.pdf(2, password="s3cret"), "encrypted"),
    ],
    ids=["junk", "binary-junk", "encrypted"],
)
def test_a_pdf_the_api_cannot_read_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(att.AttachmentError, match=reason) as refused:
        att.describe("bad.pdf", data)
    assert "bad.pdf" in str(refused.value)


def _export_with(ref: dict[str, Any], data: bytes) -> dict[str, Any]:
    sha = hashlib.sha256(data).hexdigest()
    return {
        "format": EXPORT_FORMAT,
        "conversation": {"title": "claims"},
        "messages": [
            {"role": "user", "content": [{**ref, "sha256": sha}, {"type": "text", "text": "?"}]},
            {"role": "assistant", "content": "an answer"},
        ],
        "attachments": [
            {
                "sha256": sha,
                "media_type": ref["media_type"],
                "size": len(data),
                "data": base64.b64encode(data).decode("ascii"),
            }
        ],
    }


def _stored_ref(home: Path) -> dict[str, Any]:
    content = rows(
        home / "data" / "tui-chat.db",
        "SELECT content FROM messages WHERE role = 'user' ORDER BY id DESC LIMIT 1",
    )[0]["content"]
    blocks = [b for b in json.loads(content) if b.get("type") == "attachment"]
    assert len(blocks) == 1
    result: dict[str, Any] = blocks[0]
    return result


@pytest.mark.parametrize("kind", ["pdf", "image", "text"])
def test_an_import_is_trusted_with_nothing_that_can_be_measured(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    if kind == "pdf":
        data = sample_files.pdf_object_streams(40)
        claims = {"kind": "document", "media_type": "application/pdf", "pages": -500}
    elif kind == "image":
        data = sample_files.png(1500, 1000)
        claims = {"kind": "image", "media_type": "image/png", "width": 1, "height": 1}
    else:
        data = b"the real text\n"
        claims = {"kind": "text", "media_type": "text/plain", "text": "x" * 2_800_000}
    ref = {"type": "attachment", "name": f"claimed.{kind}", "size": 1, "tokens": 1, **claims}
    source = tmp_path / "export.json"
    source.write_text(json.dumps(_export_with(ref, data)))
    done = run_main(capsys, "import", str(source))
    assert done.code == 0, done.err
    stored = _stored_ref(cli_home)
    measured = att.describe(f"claimed.{kind}", data).ref()
    assert stored == measured
    assert stored["size"] == len(data)
    if kind == "pdf":
        assert stored["pages"] == 40 and stored["tokens"] == 40 * att.PDF_PAGE_TOKENS
    elif kind == "image":
        assert (stored["width"], stored["height"]) == (1500, 1000) and stored["tokens"] > 1000
    else:
        assert stored["text"] == "the real text\n"


def test_an_import_carrying_a_file_the_api_would_refuse_is_refused(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_files.pdf_object_streams(150)
    ref = {
        "type": "attachment",
        "name": "huge.pdf",
        "kind": "document",
        "media_type": "application/pdf",
        "size": len(data),
        "pages": 1,
        "tokens": 1,
    }
    source = tmp_path / "export.json"
    source.write_text(json.dumps(_export_with(ref, data)))
    done = run_main(capsys, "import", str(source))
    assert done.code == 1
    assert "150 pages" in done.err


async def test_a_file_the_api_still_refuses_is_named_with_the_reason(
    make_service: Any, fake_anthropic: Any
) -> None:
    service = await make_service()
    conversation = await service.conversations.new()
    image = att.describe("wiring.png", sample_files.png(40, 30))
    fake_anthropic.push(
        kind="error",
        status=400,
        message="messages.0.content.0.image.source.base64: image exceeds 5 MB maximum",
    )
    outcome = await service.send(conversation.id, "what is this?", attachments=[image])
    assert outcome.error is not None
    assert "wiring.png" in outcome.error.message
    assert "image exceeds 5 MB maximum" in outcome.error.message
    assert "probably a bug" not in outcome.error.hint
    assert "wiring.png" in str(outcome.reply.error)  # stored with the reply, as shown later
