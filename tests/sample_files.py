"""Small, valid files of every kind tui-chat attaches, made in memory (no image library)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 4, height: int = 3, filler: int = 0) -> bytes:
    """A valid RGB PNG of ``width`` × ``height`` pixels (``filler`` extra bytes make it larger
    without changing its size in pixels: an ancillary ``tEXt`` chunk)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x7f\x10\x20" * width for _ in range(height))
    extra = chunk(b"tEXt", b"Comment\x00" + b"x" * filler) if filler else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + extra
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def gif(width: int = 5, height: int = 2) -> bytes:
    """A GIF header with a size (enough for tui-chat, which never decodes pixels)."""
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg(width: int = 640, height: int = 480) -> bytes:
    """A JPEG with an APP0 segment and a baseline SOF0 frame header."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp(width: int = 300, height: int = 200) -> bytes:
    """An extended (VP8X) WebP header with a size."""
    body = b"WEBP" + b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pdf(pages: int = 2) -> bytes:
    """A small PDF with ``pages`` page objects."""
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects = [
        "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
        f"2 0 obj << /Type /Pages /Kids [{kids}] /Count {pages} >> endobj",
        *(
            f"{3 + i} 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj"
            for i in range(pages)
        ),
    ]
    return ("%PDF-1.4\n" + "\n".join(objects) + "\ntrailer << /Root 1 0 R >>\n%%EOF\n").encode()
