"""trainingOptions' ``PreprocessingEnvironment`` (and the legacy ``DispatchInBackground``): where
the mini-batches are prepared.

``"serial"`` cuts each mini-batch when the iteration needs it. ``"background"`` cuts the next
one in a background thread while the current one trains; ``"parallel"`` keeps one mini-batch
in preparation per CPU core, in a pool of threads. Every mode yields the same mini-batches in the
same order (the data is in memory: a data source was read before training), so the trained
network does not depend on the mode; only where the cutting and padding time goes does. torch's
operations release Python's lock, so a thread overlaps with training.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["prefetched"]

T = TypeVar("T")


def prefetched(environment: str, cut: Callable[[int], T], count: int) -> Iterator[T]:
    """``cut(0)``, ..., ``cut(count - 1)`` in order, prepared ahead for ``"background"`` (one
    ahead) and ``"parallel"`` (one per core ahead). Leaving the loop early (a stop) cancels what
    was not started."""
    if environment == "serial":
        yield from (cut(position) for position in range(count))
        return
    workers = 1 if environment == "background" else max(1, os.cpu_count() or 1)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="dlformat-minibatch")
    try:
        pending: deque[Future[T]] = deque(pool.submit(cut, p) for p in range(min(workers, count)))
        following = len(pending)
        while pending:
            ready = pending.popleft()
            if following < count:
                pending.append(pool.submit(cut, following))
                following += 1
            yield ready.result()  # a thread's error is raised here, in training's thread
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
