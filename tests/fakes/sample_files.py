"""Small, valid files of every kind tui-chat attaches, made in memory (PDFs written by pypdf or
by hand with object streams)."""

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


def pdf(pages: int = 2, *, password: str | None = None) -> bytes:
    """A real PDF of ``pages`` blank pages written by pypdf (encrypted with ``password``)."""
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    if password is not None:
        writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_object_streams(pages: int) -> bytes:
    """A PDF 1.5 whose catalog, page tree and pages all sit in one compressed object stream,
    found through a cross-reference stream (no ``/Type /Page`` in the file's plain bytes)."""
    inner = [
        "<< /Type /Catalog /Pages 3 0 R >>",
        "<< /Type /Pages /Kids ["
        + " ".join(f"{4 + i} 0 R" for i in range(pages))
        + f"] /Count {pages} >>",
        *("<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] >>" for _ in range(pages)),
    ]
    numbers = list(range(2, 2 + len(inner)))
    bodies = [body.encode() for body in inner]
    offsets, at = [], 0
    for body in bodies:
        offsets.append(at)
        at += len(body) + 1
    header = " ".join(f"{n} {o}" for n, o in zip(numbers, offsets, strict=True)).encode() + b" "
    raw = header + b"\n".join(bodies) + b"\n"
    packed = zlib.compress(raw)
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    stream_at = len(out)
    out += (
        f"1 0 obj << /Type /ObjStm /N {len(inner)} /First {len(header)} "
        f"/Filter /FlateDecode /Length {len(packed)} >> stream\n"
    ).encode()
    out += packed + b"\nendstream endobj\n"
    xref_number = 2 + len(inner)
    xref_at = len(out)
    rows = [struct.pack(">BIH", 0, 0, 0xFFFF), struct.pack(">BIH", 1, stream_at, 0)]
    rows += [struct.pack(">BIH", 2, 1, index) for index in range(len(inner))]
    rows.append(struct.pack(">BIH", 1, xref_at, 0))
    table = zlib.compress(b"".join(rows))
    out += (
        f"{xref_number} 0 obj << /Type /XRef /Size {xref_number + 1} /W [1 4 2] /Root 2 0 R "
        f"/Filter /FlateDecode /Length {len(table)} >> stream\n"
    ).encode()
    out += table + b"\nendstream endobj\n"
    out += f"startxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)
