"""The held-keys benchmark reads which messages are on screen, and which one is highlighted,
from what a terminal shows (the app's header lines, the floor's alike)."""

from __future__ import annotations

from benchmarks.floor_app import header
from benchmarks.held_keys import HEADER, _headers, _selected
from benchmarks.terminal import TerminalModel


def _screen(rows: list[bytes]) -> TerminalModel:
    model = TerminalModel((60, 8))
    model.advance([(0.0, b"\r\n".join(rows))])
    return model


def test_the_headers_above_the_composer_are_read_with_their_background() -> None:
    model = _screen(
        [
            b"title",
            b"\x1b[48;2;27;27;27m You  2025-01-16 18:49  #10995\x1b[0m",
            b" some text #12",
            b"\x1b[48;2;41;32;20m Claude  2025-01-16 18:50  #10996  model\x1b[0m",
            b"\x1b[48;2;27;27;27m You  2025-01-16 18:51  #10997\x1b[0m",
            b"\xe2\x95\xad\xe2\x94\x80\xe2\x94\x80",  # the composer's top border
            b"You  2025-01-16 18:52  #10998 (below the composer: not the chat)",
        ]
    )
    headers = _headers(model)
    assert sorted(headers) == [10995, 10996, 10997]
    assert headers[10995] == headers[10997] != headers[10996]
    assert _selected(model, headers[10996]) == 10996
    assert _selected(model, headers[10995]) is None  # two headers on it: no one highlight


def test_the_floor_writes_the_apps_header() -> None:
    line = header("assistant", 42, "2025-01-16T18:50:00.000000+00:00")
    match = HEADER.search(line)
    assert match is not None and match.group(1) == "42"
    assert header("user", 7, "2025-01-16T18:50:00+00:00").startswith("You  ")
