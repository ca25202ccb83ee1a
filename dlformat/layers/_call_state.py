"""The state of the network call running in this thread: local to the call, never on the shared layers.

A network call (``DLNetwork.forward``: ``predict``, ``forward``, ``minibatchpredict``, ...) runs
with a *call state*: a dict from each layer to the values its state has in this call, filled with
the network's ``State`` as the call starts. While the call runs, a layer reads its state from
there and assigns new values there (:meth:`Layer._state_value`, :meth:`Layer._store_state`, and
``self.<name>`` in a custom layer), so that a call in another thread, with its own call state,
never sees them: one network serves any number of threads, as a torch module does. When the call
ends, the network keeps the new values of layers whose updates persist (batch normalization's
running statistics) and drops the others (MATLAB's rule for recurrent state). Outside a network
call there is no call state, and a layer used on its own reads and assigns its own buffers.

The call state is per thread (``threading.local``): a network call runs from start to end in the
thread that made it. A network called inside another's call (a network layer) starts its own
call state from the outer one's values and hands its kept updates to the outer call.
"""

from __future__ import annotations

import threading
from typing import Any

import torch

__all__ = ["CURRENT", "STATE_LOCK", "CallValues"]

# the values of each layer's state in one call: layer -> {state name: value}
CallValues = dict[Any, dict[str, torch.Tensor]]

# Taken while a network reads its State at the start of a call, keeps a call's updates at its end
# and while net.State is assigned: each call starts from a whole State, never from half of
# another call's update. Held for a few dict operations only, never while layers compute; left
# out under torch.compile, which cannot trace a lock.
STATE_LOCK = threading.RLock()


class _Current(threading.local):
    """The call state of this thread's running network call; ``None`` outside one."""

    values: CallValues | None = None


CURRENT = _Current()
