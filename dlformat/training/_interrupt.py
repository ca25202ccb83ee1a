"""Ctrl+C during training: MATLAB's Stop button.

MATLAB's training-progress window has a Stop button that ends training and keeps the network as
it is; issue 16 asks that a keyboard interrupt do the same. While a training loop runs (in the
main thread), the first Ctrl+C is only noted: the iteration under way finishes, so the network is
never left half-updated, and the loop then stops with :data:`STOPPED_MANUALLY` and returns the
network as it is, like any other stop. A second Ctrl+C interrupts at once, as Python does. The
previous handler is put back when training ends, however it ends.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["STOPPED_MANUALLY", "StopRequests"]

# the stop reason MATLAB's training-progress window shows after its Stop button (docs/training.md:
# its TrainingInfo page's list of reasons could not be read in full)
STOPPED_MANUALLY = "Stopped manually"


class StopRequests:
    """Notes Ctrl+C inside a ``with`` block; :attr:`asked` says whether one came."""

    def __init__(self) -> None:
        self.asked = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> StopRequests:
        # signal handlers can only be set from the main thread; elsewhere Ctrl+C stays Python's
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return self

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.asked:  # the second Ctrl+C: interrupt now
            self._restore()
            raise KeyboardInterrupt
        self.asked = True

    def _restore(self) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._restore()
