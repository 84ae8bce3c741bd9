"""Files attached to a message: what they are, the limits Claude documents, what they cost.

A message keeps an attachment as a small *reference block* in its content::

    {"type": "attachment", "kind": "image", "name": "plot.png", "media_type": "image/png",
     "size": 48213, "sha256": "…", "tokens": 1120, "width": 1024, "height": 768}

The bytes live once in the store, keyed by ``sha256``; a text file's reference also carries its
decoded ``text`` (it is sent, searched, recalled and summarised as text). Just before a request
leaves, :func:`api_block` turns each reference into what the Messages API takes: an ``image``
block (base64), a ``document`` block (PDF, base64) or a ``text`` block with the file's name.

Limits and costs, from Claude's documentation (vision and PDF support pages, 2026):

- images: JPEG, PNG, GIF or WebP; at most 5 MB each *as base64*, which is how the API counts
  (a file of about 3.75 MB), at least 1×1 and at most 8000×8000 px (2000×2000 px when a
  request holds more than 20 images); at most 100 images per request;
- PDFs: at most 100 pages per request (counted by a real parser, pypdf), no password or
  encryption, readable;
- a whole request: at most 32 MB;
- an image costs about ``width × height / 750`` tokens once scaled to fit 1568 px on its long
  edge (and ~1,600 tokens at most); a PDF page costs 1,500–3,000 tokens of text plus the page as
  an image (:data:`PDF_PAGE_TOKENS` per page here; calibration corrects the rest).

Nothing here reads a file: :func:`describe` takes bytes (the engine reads them).
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tui_chat.core.filetypes import PdfProblem, image_type, pdf_pages, utf8_text
from tui_chat.core.models import ContentBlock, Message

AttachmentKind = Literal["image", "document", "text"]

ATTACHMENT_TYPE = "attachment"
"""The ``type`` of a reference block in stored content."""

PDF_MEDIA_TYPE = "application/pdf"
TEXT_MEDIA_TYPE = "text/plain"

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Largest image the API accepts (5 MB)."""
MAX_IMAGE_SIDE = 8000
"""Largest image side in pixels."""
MAX_IMAGE_SIDE_MANY = 2000
"""Largest image side when a request holds more than :data:`MANY_IMAGES` images."""
MANY_IMAGES = 20
MAX_IMAGES_PER_REQUEST = 100
MAX_PDF_PAGES = 100
"""Most PDF pages in one request."""
MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""Largest request body (32 MB), everything included."""
MAX_TEXT_BYTES = 1024 * 1024
"""Largest text file tui-chat attaches (its own limit: it is sent again every turn)."""

IMAGE_LONG_EDGE = 1568
"""The API scales an image down to this long edge before reading it."""
IMAGE_MAX_TOKENS = 1600
"""About the most an image costs once scaled."""
PDF_PAGE_TOKENS = 2250
"""Tokens counted per PDF page: the middle of the documented 1,500–3,000 of text per page."""


class AttachmentError(ValueError):
    """A file that cannot be attached (the message says which file and why)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file ready to attach: its bytes and what they are.

    Attributes:
        name: The file name shown on the chip and sent with text files and PDFs.
        kind: ``image``, ``document`` (PDF) or ``text``.
        media_type: The MIME type sent to the API.
        data: The file's bytes.
        width: Image width in pixels (0 otherwise).
        height: Image height in pixels (0 otherwise).
        pages: PDF pages (0 when unknown or not a PDF).
        text: A text file's content (empty otherwise).
    """

    name: str
    kind: AttachmentKind
    media_type: str
    data: bytes
    width: int = 0
    height: int = 0
    pages: int = 0
    text: str = ""

    @property
    def size(self) -> int:
        """Bytes."""
        return len(self.data)

    @property
    def sha256(self) -> str:
        """The content hash the store keys the bytes by."""
        return hashlib.sha256(self.data).hexdigest()

    @property
    def tokens(self) -> int:
        """Estimated input tokens of the attachment itself (text files: see :func:`ref_tokens`)."""
        if self.kind == "image":
            return image_tokens(self.width, self.height)
        if self.kind == "document":
            return max(1, self.pages) * PDF_PAGE_TOKENS
        return 0

    def ref(self) -> ContentBlock:
        """The reference block a stored message keeps."""
        block: ContentBlock = {
            "type": ATTACHMENT_TYPE,
            "kind": self.kind,
            "name": self.name,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.kind == "image":
            block.update(width=self.width, height=self.height, tokens=self.tokens)
        elif self.kind == "document":
            block.update(pages=self.pages, tokens=self.tokens)
        else:
            block["text"] = self.text
        return block


def image_tokens(width: int, height: int) -> int:
    """Claude's documented cost of an image: ``width × height / 750`` once scaled to fit.

    Args:
        width: Pixels.
        height: Pixels.

    Returns:
        The estimated tokens (at most :data:`IMAGE_MAX_TOKENS`).
    """
    if width <= 0 or height <= 0:
        return IMAGE_MAX_TOKENS
    scale = min(1.0, IMAGE_LONG_EDGE / max(width, height))
    pixels = (width * scale) * (height * scale)
    return max(1, min(IMAGE_MAX_TOKENS, math.ceil(pixels / 750)))


def human_size(size: int) -> str:
    """``12.3 KB``, ``1.5 MB``, ``512 B``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def describe(name: str, data: bytes) -> Attachment:
    """Recognise a file by its bytes and check it against the documented per-file limits.

    Args:
        name: The file name (shown and sent; its extension is not trusted).
        data: The file's bytes.

    Returns:
        The attachment.

    Raises:
        AttachmentError: the format is not supported or a limit is exceeded.
    """
    if not data:
        raise AttachmentError(f"{name} is empty")
    image = image_type(data)
    if image is not None:
        return _image(name, image[0], data, image[1])
    if data.startswith(b"%PDF-"):
        return _pdf(name, data)
    text = utf8_text(data)
    if text is None:
        raise AttachmentError(
            f"{name}: not an image (PNG, JPEG, GIF, WebP), a PDF or a UTF-8 text file"
        )
    if len(data) > MAX_TEXT_BYTES:
        raise AttachmentError(
            f"{name} is {human_size(len(data))}; text files can be at most "
            f"{human_size(MAX_TEXT_BYTES)}"
        )
    return Attachment(name, "text", TEXT_MEDIA_TYPE, data, text=text)


def encoded_size(size: int) -> int:
    """Bytes of ``size`` bytes once base64-encoded, as the API receives and counts them."""
    return math.ceil(size / 3) * 4


def _image(name: str, media_type: str, data: bytes, size: tuple[int, int] | None) -> Attachment:
    # The API's 5 MB is counted on the base64 it receives, a third more than the file.
    if encoded_size(len(data)) > MAX_IMAGE_BYTES:
        raise AttachmentError(
            f"{name} is {human_size(len(data))}, {human_size(encoded_size(len(data)))} once "
            f"encoded for the API; Claude accepts images of at most "
            f"{human_size(MAX_IMAGE_BYTES)} encoded (a file of about "
            f"{human_size(MAX_IMAGE_BYTES * 3 // 4)})"
        )
    kind = media_type.split("/")[1].upper()
    if size is None:
        raise AttachmentError(f"{name}: a damaged {kind} image")
    width, height = size
    if width <= 0 or height <= 0:
        raise AttachmentError(f"{name}: a {kind} image of {width}×{height} px has no pixels")
    if max(width, height) > MAX_IMAGE_SIDE:
        raise AttachmentError(
            f"{name} is {width}×{height} px; Claude accepts at most "
            f"{MAX_IMAGE_SIDE}×{MAX_IMAGE_SIDE} px"
        )
    return Attachment(name, "image", media_type, data, width=width, height=height)


def _pdf(name: str, data: bytes) -> Attachment:
    if len(data) > MAX_REQUEST_BYTES:
        raise AttachmentError(
            f"{name} is {human_size(len(data))}; a request can be at most "
            f"{human_size(MAX_REQUEST_BYTES)}"
        )
    try:
        pages = pdf_pages(data)
    except PdfProblem as exc:
        raise AttachmentError(f"{name}: {exc}") from None
    if pages > MAX_PDF_PAGES:
        raise AttachmentError(
            f"{name} has {pages} pages; Claude reads at most {MAX_PDF_PAGES} per request"
        )
    return Attachment(name, "document", PDF_MEDIA_TYPE, data, pages=pages)


def check_request(attachments: Iterable[Mapping[str, Any]]) -> None:
    """Check what one request holds against the per-request limits.

    Args:
        attachments: The reference blocks of every attachment the request sends.

    Raises:
        AttachmentError: too many images, too many PDF pages, or too many bytes.
    """
    refs = list(attachments)
    images = [r for r in refs if r.get("kind") == "image"]
    if len(images) > MAX_IMAGES_PER_REQUEST:
        raise AttachmentError(
            f"{len(images)} images; Claude accepts at most {MAX_IMAGES_PER_REQUEST} per request"
        )
    if len(images) > MANY_IMAGES:
        for ref in images:
            side = max(int(ref.get("width") or 0), int(ref.get("height") or 0))
            if side > MAX_IMAGE_SIDE_MANY:
                raise AttachmentError(
                    f"{ref.get('name')} is {side} px on its long edge; with more than "
                    f"{MANY_IMAGES} images in a request Claude accepts at most "
                    f"{MAX_IMAGE_SIDE_MANY} px"
                )
    pages = sum(int(r.get("pages") or 0) for r in refs if r.get("kind") == "document")
    if pages > MAX_PDF_PAGES:
        raise AttachmentError(
            f"{pages} PDF pages; Claude reads at most {MAX_PDF_PAGES} per request"
        )
    # base64 makes binary data a third larger.
    total = sum(encoded_size(int(r.get("size") or 0)) for r in refs if r.get("kind") != "text")
    if total > MAX_REQUEST_BYTES:
        raise AttachmentError(
            f"the attachments make a {human_size(total)} request; Claude accepts at most "
            f"{human_size(MAX_REQUEST_BYTES)}"
        )


# -- reference blocks ----------------------------------------------------------------------


def is_ref(block: Mapping[str, Any]) -> bool:
    """True for an attachment reference block."""
    return block.get("type") == ATTACHMENT_TYPE


def refs(content: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The attachment references of a message's content, in order."""
    return [block for block in content if is_ref(block)]


def text_file(ref: Mapping[str, Any]) -> str:
    """A text file as the model reads it: its name, then its content."""
    name = str(ref.get("name") or "file").replace('"', "'")
    return f'<file name="{name}">\n{ref.get("text") or ""}\n</file>'


def ref_label(ref: Mapping[str, Any]) -> str:
    """How a reference reads in plain text (search, summaries, Markdown, the readable preview).

    Args:
        ref: An attachment reference block.

    Returns:
        ``[image attached: plot.png, 1024×768]``, ``[document attached: a.pdf, 3 pages]``,
        or for a text file its name and content.
    """
    name = ref.get("name") or "file"
    kind = ref.get("kind")
    if kind == "image":
        return f"[image attached: {name}, {ref.get('width')}×{ref.get('height')}]"
    if kind == "document":
        pages = int(ref.get("pages") or 0)
        return f"[document attached: {name}" + (f", {pages} pages]" if pages else "]")
    return text_file(ref)


def message_text(typed: str, attached: Iterable[Mapping[str, Any]]) -> str:
    """The plain text a message with attachments is searched and recalled by.

    Args:
        typed: What the user typed.
        attached: The message's reference blocks.

    Returns:
        The typed text, then each attachment as :func:`ref_label` renders it.
    """
    labels = [ref_label(ref) for ref in attached]
    if not labels:
        return typed  # exactly as typed: a message without files is stored unchanged
    return "\n\n".join([typed, *labels] if typed.strip() else labels)


def attachment_note(summary: str, messages: Iterable[Message]) -> str:
    """A summary that says which images and documents were attached in its span.

    Text files are summarised from their text; an image or a PDF cannot be, so the summary at
    least keeps that it was there (and under which name).

    Args:
        summary: The summary text.
        messages: The summarised messages.

    Returns:
        ``summary``, followed by an ``Attached:`` line naming what it does not mention yet.
    """
    missing = [
        f"{ref.get('name')} ({ref.get('kind')})"
        for message in messages
        for ref in refs(message.content)
        if ref.get("kind") in ("image", "document") and str(ref.get("name")) not in summary
    ]
    if not missing:
        return summary
    return summary.rstrip() + "\nAttached: " + ", ".join(dict.fromkeys(missing)) + "."


def typed_text(content: Iterable[Mapping[str, Any]], fallback: str) -> str:
    """What the user typed in a message that may carry attachments.

    Args:
        content: The message's blocks.
        fallback: Its stored plain text, returned when it carries no attachment.

    Returns:
        The text blocks joined by blank lines (without the attached files' contents).
    """
    blocks = list(content)
    if not any(is_ref(b) for b in blocks):
        return fallback
    return "\n\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")


def chip(ref: Mapping[str, Any]) -> str:
    """The short label of a chip: ``📎 plot.png · 47.1 KB``."""
    return f"📎 {ref.get('name') or 'file'} · {human_size(int(ref.get('size') or 0))}"


def ref_tokens(ref: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """Estimated tokens of one reference once sent.

    Args:
        ref: An attachment reference block.
        count: Counts text (the token counter's ``count``).

    Returns:
        Image and PDF estimates as stored on the reference; a text file's counted text.
    """
    if ref.get("kind") == "text":
        return count(text_file(ref))
    return int(ref.get("tokens") or IMAGE_MAX_TOKENS)


def api_block(ref: Mapping[str, Any], data: bytes | None) -> ContentBlock:
    """The block the Messages API takes for a reference.

    Args:
        ref: An attachment reference block (its ``cache_control``, if any, is kept).
        data: The attachment's bytes (not needed for a text file).

    Returns:
        An ``image``, ``document`` or ``text`` block.

    Raises:
        AttachmentError: the bytes of an image or PDF are missing.
    """
    kind = ref.get("kind")
    block: ContentBlock
    if kind == "text":
        block = {"type": "text", "text": text_file(ref)}
    else:
        if data is None:
            raise AttachmentError(f"the data of {ref.get('name')} is missing from the database")
        source = {
            "type": "base64",
            "media_type": str(ref.get("media_type")),
            "data": base64.b64encode(data).decode("ascii"),
        }
        if kind == "image":
            block = {"type": "image", "source": source}
        else:
            block = {"type": "document", "source": source, "title": str(ref.get("name"))}
    if "cache_control" in ref:
        block["cache_control"] = ref["cache_control"]
    return block
