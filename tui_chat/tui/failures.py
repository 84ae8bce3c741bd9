"""Turn a failed worker into a visible notification: the one rule for every screen and widget.

Textual's ``Worker.StateChanged`` does not bubble, so each node that runs workers forwards its
own to :func:`report_failure`; the application does the same for its long-lived work.
"""

from __future__ import annotations

from textual.dom import DOMNode
from textual.worker import Worker, WorkerState


def report_failure(node: DOMNode, worker: Worker[object]) -> None:
    """Notify the user when ``worker`` ended with an error (anything else is ignored).

    Args:
        node: The app, screen or widget that ran the worker.
        worker: The worker whose state changed.
    """
    if worker.state == WorkerState.ERROR:
        node.app.notify(
            f"{worker.name or 'task'} failed: {worker.error}",
            title="Error",
            severity="error",
            markup=False,
        )
