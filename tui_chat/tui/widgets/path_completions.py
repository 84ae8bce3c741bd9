"""``@path`` completion for the composer: the paths under the working directory that start with
what follows an ``@``, listed in a small dropdown above the composer (``tab``/``enter`` accepts).

:func:`complete_paths` reads one folder (blocking: call it in a thread); hidden entries are left
out unless the typed name starts with a dot, and a huge folder is read only so far.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from textual.widgets import OptionList
from textual.widgets.option_list import Option

MAX_SCANNED = 20_000
"""Entries of one folder read at most (a huge folder is never listed whole)."""
MAX_SHOWN = 50
"""Completions offered at most (typing more narrows them)."""

_TOKEN = re.compile(r"(?:^|\s)@(\S*)$")


def at_token(before_cursor: str) -> str | None:
    """What follows the ``@`` of the word ending at the cursor (``None``: no such word)."""
    found = _TOKEN.search(before_cursor)
    return None if found is None else found.group(1)


@dataclass(frozen=True, slots=True)
class Completions:
    """The paths that complete a typed ``@`` word.

    Attributes:
        partial: What was typed after the ``@``.
        paths: The completions as they are typed (folders end with ``/``), folders first.
        cut: More entries matched (or the folder is larger) than were listed.
    """

    partial: str
    paths: list[str] = field(default_factory=list)
    cut: bool = False


def complete_paths(partial: str, root: Path) -> Completions:
    """The entries of the folder ``partial`` names whose names start with its last part.

    Args:
        partial: A path as typed after ``@``: relative to ``root``, absolute, or ``~/…``.
        root: The working directory.
    """
    head, sep, name = partial.rpartition("/")
    folder = Path(head or ("/" if sep else ".")).expanduser()
    folder = folder if folder.is_absolute() else root / folder
    prefix = f"{head}{sep}"
    folders: list[str] = []
    files: list[str] = []
    cut = False
    wanted = name.casefold()
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_SCANNED:
                    cut = True
                    break
                if entry.name.startswith(".") and not name.startswith("."):
                    continue
                if not entry.name.casefold().startswith(wanted):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                (folders if is_dir else files).append(entry.name)
    except OSError:
        return Completions(partial)
    found = [f"{prefix}{n}/" for n in sorted(folders)] + [f"{prefix}{n}" for n in sorted(files)]
    return Completions(partial, found[:MAX_SHOWN], cut or len(found) > MAX_SHOWN)


class PathCompletions(OptionList):
    """The dropdown of ``@path`` completions (never focused: the composer keeps the keys)."""

    DEFAULT_CSS = """
    PathCompletions {
        height: auto;
        max-height: 8;
        display: none;
        border: none;
        padding: 0 1;
        background: $surface;
    }
    """

    can_focus: ClassVar[bool] = False  # type: ignore[misc]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.completions = Completions("")

    def offer(self, completions: Completions) -> None:
        """Show these completions (hidden when there is none)."""
        self.completions = completions
        self.clear_options()
        self.add_options(completions.paths)
        if completions.cut:
            more = f"… more: keep typing (first {len(completions.paths)} shown)"
            self.add_option(Option(more, disabled=True))
        self.highlighted = 0 if completions.paths else None
        self.display = bool(completions.paths)

    def hide(self, *, forget: bool = False) -> None:
        """Hide the dropdown (``forget``: the ``@`` word is gone; the same word typed again
        lists again, while one closed with ``escape`` stays closed)."""
        self.display = False
        if forget:
            self.completions = Completions("\n")  # no typed word has a line break

    @property
    def choice(self) -> str | None:
        """The highlighted completion."""
        index = self.highlighted
        paths = self.completions.paths
        return paths[index] if self.display and index is not None and index < len(paths) else None
