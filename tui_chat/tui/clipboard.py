"""Read and write the system clipboard through the platform's own tools (terminals cannot
paste image bytes, so ``ctrl+v`` asks ``wl-paste``, ``xclip``, ``pngpaste`` or PowerShell; a copy
goes through ``wl-copy``, ``xclip``, ``xsel``, ``pbcopy`` or ``clip.exe`` as well as OSC 52,
which some terminals ignore).

:func:`read_clipboard` and :func:`write_clipboard` are blocking (they run a subprocess): call
them in a worker thread.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.child_env import child_env

TIMEOUT = 5.0
"""Seconds a clipboard tool may take (a clipboard owner that never answers must not hang)."""

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class NoClipboardTool(Exception):
    """No clipboard tool is installed; the message names the one to install."""


@dataclass(frozen=True, slots=True)
class Clipboard:
    """What the clipboard holds: an image's bytes, or else its text (either may be empty)."""

    tool: str
    image: bytes = b""
    text: str = ""


def _run(argv: Sequence[str]) -> bytes:
    """A tool's output (empty when it fails: an empty clipboard is an error for most)."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            env=child_env(),  # never the API key
        )
    except (OSError, subprocess.TimeoutExpired):
        return b""
    return done.stdout if done.returncode == 0 else b""


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _pick_type(types: bytes) -> str | None:
    offered = {line.strip().lower() for line in _text(types).splitlines()}
    return next((t for t in _IMAGE_TYPES if t in offered), None)


def _wayland() -> Clipboard:
    image_type = _pick_type(_run(["wl-paste", "--list-types"]))
    if image_type is not None:
        return Clipboard("wl-paste", image=_run(["wl-paste", "--type", image_type]))
    return Clipboard("wl-paste", text=_text(_run(["wl-paste", "--no-newline"])))


def _x11() -> Clipboard:
    base = ["xclip", "-selection", "clipboard"]
    image_type = _pick_type(_run([*base, "-t", "TARGETS", "-o"]))
    if image_type is not None:
        return Clipboard("xclip", image=_run([*base, "-t", image_type, "-o"]))
    return Clipboard("xclip", text=_text(_run([*base, "-o"])))


def _macos() -> Clipboard:
    image = _run(["pngpaste", "-"])
    return Clipboard("pngpaste", image=image, text="" if image else _text(_run(["pbpaste"])))


_POWERSHELL_IMAGE = (
    "$i = Get-Clipboard -Format Image; if ($i) { $m = New-Object System.IO.MemoryStream; "
    "$i.Save($m, [System.Drawing.Imaging.ImageFormat]::Png); "
    "[Console]::OpenStandardOutput().Write($m.ToArray(), 0, $m.Length) }"
)


def _windows() -> Clipboard:
    shell = ["powershell.exe", "-NoProfile", "-Command"]
    image = _run([*shell, _POWERSHELL_IMAGE])
    text = "" if image else _text(_run([*shell, "Get-Clipboard -Raw"])).rstrip("\r\n")
    return Clipboard("powershell.exe", image=image, text=text)


def install_hint() -> str:
    """The tool to install on this platform."""
    if sys.platform == "darwin":
        return "pngpaste (brew install pngpaste)"
    if os.environ.get("WAYLAND_DISPLAY"):
        return "wl-clipboard (wl-paste)"
    return "xclip"


def read_clipboard() -> Clipboard:
    """The clipboard's image (PNG, JPEG, GIF or WebP) if it holds one, else its text.

    The first available tool of the platform is used: ``wl-paste`` under Wayland, ``xclip``
    under X11, ``pngpaste`` (and ``pbpaste``) on macOS, ``powershell.exe`` on Windows and WSL.

    Raises:
        NoClipboardTool: none is installed (the message names the one to install).
    """
    readers = []
    if sys.platform == "darwin" and shutil.which("pngpaste"):
        readers.append(_macos)
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        readers.append(_wayland)
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        readers.append(_x11)
    if shutil.which("powershell.exe"):
        readers.append(_windows)
    if not readers:
        raise NoClipboardTool(
            f"No clipboard tool found: install {install_hint()} to paste images with ctrl+v."
        )
    return readers[0]()


def _writer() -> tuple[list[str], str] | None:
    """The first clipboard writer of this platform and the encoding it reads (``None``: none)."""
    if sys.platform == "darwin" and shutil.which("pbcopy"):
        return ["pbcopy"], "utf-8"
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-copy"):
        return ["wl-copy"], "utf-8"
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        return ["xclip", "-selection", "clipboard", "-in"], "utf-8"
    if os.environ.get("DISPLAY") and shutil.which("xsel"):
        return ["xsel", "--clipboard", "--input"], "utf-8"
    if shutil.which("clip.exe"):
        return ["clip.exe"], "utf-16"  # with its BOM: clip.exe reads Unicode only so
    return None


def write_clipboard(text: str) -> str | None:
    """Put ``text`` on the system clipboard through the platform's tool; its name, or ``None``
    when there is none or it failed (the copy by OSC 52 is made anyway).

    The tool's output goes nowhere: ``xclip`` and ``wl-copy`` stay in the background to serve
    the clipboard, and a pipe they kept open would hold this call until the timeout.
    """
    found = _writer()
    if found is None:
        return None
    argv, encoding = found
    try:
        done = subprocess.run(
            argv,
            input=text.encode(encoding),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=TIMEOUT,
            check=False,
            env=child_env(),  # never the API key
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return argv[0] if done.returncode == 0 else None
