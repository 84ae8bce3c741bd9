"""Fenced code blocks of a message, for copying one at a time.

Follows CommonMark's fences: a line of at least three backticks or tildes (indented by at most
three spaces) opens a block, optionally followed by an info string (the language); a line of the
same character, at least as long, closes it. A block left open runs to the end of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced code block.

    Attributes:
        code: Its lines, without the fences.
        language: The first word of the info string ('' when none).
    """

    code: str
    language: str


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced code blocks of a Markdown text, in order.

    Args:
        text: Markdown.

    Returns:
        Every fenced block (a backtick fence whose info string holds a backtick is not one).
    """
    blocks: list[CodeBlock] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opened = _OPEN.match(lines[index])
        index += 1
        if opened is None:
            continue
        fence, info = opened.group(1), opened.group(2).strip()
        if fence[0] == "`" and "`" in info:
            continue
        indent = len(lines[index - 1]) - len(lines[index - 1].lstrip(" "))
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        while index < len(lines) and not closing.match(lines[index]):
            line = lines[index]
            # Content lines lose up to the opening fence's indentation (CommonMark).
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            index += 1
        index += 1  # past the closing fence (or the end)
        blocks.append(CodeBlock("\n".join(body), info.split()[0] if info else ""))
    return blocks
