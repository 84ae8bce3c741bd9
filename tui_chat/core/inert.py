"""Making untrusted text (model output, imported files) inert for a terminal.

Terminal escape sequences (ESC, CSI, OSC), other C0/C1 control characters and lone
surrogates are replaced by visible stand-ins, so text can be printed or rendered without
moving the cursor, changing colours, setting the window title or writing hyperlinks.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block
    if code == 0x7F:
        return "␡"
    return "�"


def inert(text: str) -> str:
    """``text`` with every control character except newline and tab made visible."""
    text = _CONTROLS.sub(_visible, text.replace("\r\n", "\n"))
    return _SURROGATES.sub("�", text)
