"""Building requests: what the next request to the model holds, and what it costs.

Inside ChatService (the front ends never import this package; import-linter): the engine
context every use case shares (``context.py``: store, counter, policies, event bus), the raw
tail read only where it changed (``tail.py``), recall over the compacted prefix
(``recall.py``), the window a request sends (``assemble.py``) and the request builder with its
one cache (``requests.py``). The front door names what the rest of the engine and the
benchmarks use.
"""

from tui_chat.engine.build.assemble import Window, window_for
from tui_chat.engine.build.context import EngineContext, EventBus
from tui_chat.engine.build.recall import need, recall
from tui_chat.engine.build.requests import Requests
from tui_chat.engine.build.tail import TailCache

__all__ = [
    "EngineContext",
    "EventBus",
    "Requests",
    "TailCache",
    "Window",
    "need",
    "recall",
    "window_for",
]
