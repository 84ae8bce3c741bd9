"""What a file is, told from its bytes (never its extension): the image formats Claude reads
with their size in pixels, PDFs with their page count, and UTF-8 text.

Images: only the headers are read (no image library): PNG's IHDR, GIF's screen descriptor,
JPEG's start-of-frame segment, WebP's VP8/VP8L/VP8X chunk. PDFs are parsed with pypdf (imported
when a PDF is first attached), which reads compressed object streams and refuses junk.
"""

from __future__ import annotations

import struct
from collections.abc import Callable


def _png_size(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return None


def _gif_size(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    return None


_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            index += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return int(width & 0x3FFF), int(height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        (bits,) = struct.unpack("<I", data[21:25])
        return int((bits & 0x3FFF) + 1), int(((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


_IMAGE_SIGNATURES: tuple[
    tuple[Callable[[bytes], bool], str, Callable[[bytes], tuple[int, int] | None]], ...
] = (
    (lambda d: d.startswith(b"\x89PNG\r\n\x1a\n"), "image/png", _png_size),
    (lambda d: d.startswith(b"\xff\xd8\xff"), "image/jpeg", _jpeg_size),
    (lambda d: d[:6] in (b"GIF87a", b"GIF89a"), "image/gif", _gif_size),
    (lambda d: d[:4] == b"RIFF" and d[8:12] == b"WEBP", "image/webp", _webp_size),
)


class PdfProblem(ValueError):
    """A file that starts like a PDF but cannot be read as one (the reason is the message)."""


def pdf_pages(data: bytes) -> int:
    """The page count of a PDF, read with a real PDF parser (pypdf), as the API reads it:
    page trees in compressed object streams count too.

    Args:
        data: The PDF's bytes.

    Returns:
        The number of pages (at least 1).

    Raises:
        PdfProblem: the file is not a readable PDF, is encrypted, or has no pages.
    """
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # its repair notes are not ours
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise PdfProblem("it is encrypted; Claude reads PDFs without a password only")
        pages = len(reader.pages)
    except PdfProblem:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise PdfProblem(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    if pages < 1:
        raise PdfProblem("a PDF with no pages")
    return pages


def image_type(data: bytes) -> tuple[str, tuple[int, int] | None] | None:
    """The media type and pixel size of an image Claude reads.

    Args:
        data: A file's bytes.

    Returns:
        ``(media_type, (width, height))`` — the size ``None`` when the header is damaged — or
        ``None`` when the bytes are not a PNG, JPEG, GIF or WebP image.
    """
    for matches, media_type, size_of in _IMAGE_SIGNATURES:
        if matches(data):
            return media_type, size_of(data)
    return None


def utf8_text(data: bytes) -> str | None:
    """The text of a UTF-8 file (a BOM dropped); ``None`` for binary data."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
