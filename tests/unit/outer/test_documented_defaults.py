"""The settings table of docs/configuration.md names every setting, marks those ``tui-chat set``
takes, and gives each key's real default: the value a conversation gets from ``Policy()`` when
neither a preset nor config sets it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from tui_chat.core.policy import Policy
from tui_chat.core.presets import MODEL_FIELDS, SETTING_KEYS

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
ROW = re.compile(r"^\| `(?P<key>\w+)` \| (?P<set>✓?) *\| `(?P<default>[^`]*)` \|", re.MULTILINE)


def test_every_setting_is_documented_with_its_real_default() -> None:
    rows = list(ROW.finditer(DOC.read_text(encoding="utf-8")))
    documented = {m["key"]: m["default"] for m in rows}
    settings = {f.name for f in dataclasses.fields(Policy)} - set(MODEL_FIELDS) - {"preset"}
    assert set(documented) == settings
    real = Policy()
    wrong = {
        key: (given, repr(getattr(real, key)))
        for key, given in documented.items()
        if given != repr(getattr(real, key))
    }
    assert wrong == {}, "docs/configuration.md: (documented, real) " + repr(wrong)
    marked = {m["key"] for m in rows if m["set"]}
    assert marked == set(SETTING_KEYS) - {"preset"}
