"""Checkpoints: the network written during training to ``CheckpointPath``.

MATLAB saves ``net_checkpoint__<iteration>__<yyyy_mm_dd__HH_MM_SS>.mat`` holding the network
as ``net``, every ``CheckpointFrequency`` epochs (after the epoch's last iteration) or
iterations, per ``CheckpointFrequencyUnit``. dlformat cannot write MATLAB's network objects, so
it writes its own network file (the ``.pt`` of ``dlformat convert``, read back by
:func:`dlformat.io.load_network`) under MATLAB's name with ``.pt`` in place of ``.mat``,
replaced whole (a temporary file renamed over it). Training resumes as in MATLAB: give the
loaded network to ``trainnet`` (or its ``Layers`` to ``trainNetwork``).

Under distributed training only one process should write: :func:`is_main_process` is the one
place that decides (rank 0 of an initialized ``torch.distributed`` group; every process when
there is no group), also used for the ``Plots`` file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

__all__ = ["Checkpoints", "checkpoint_name", "is_main_process"]


def is_main_process() -> bool:
    """Whether this process writes files (checkpoints, the progress figure): rank 0, or the only one."""
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return int(distributed.get_rank()) == 0
    return True


def checkpoint_name(iteration: int, when: time.struct_time | None = None) -> str:
    """MATLAB's checkpoint file name with dlformat's ``.pt`` extension."""
    stamp = time.strftime("%Y_%m_%d__%H_%M_%S", when or time.localtime())
    return f"net_checkpoint__{iteration}__{stamp}.pt"


class Checkpoints:
    """Writes the network at the iterations or epochs ``CheckpointFrequency`` picks; ``network``
    turns the network being trained into the one the file holds (trainNetwork's output layer)."""

    def __init__(self, options: Any, network: Callable[[Any], Any]) -> None:
        self.folder = Path(options.CheckpointPath) if options.CheckpointPath else None
        self.every, self.unit = options.CheckpointFrequency, options.CheckpointFrequencyUnit
        self.network = network
        self.written: list[Path] = []

    def due(self, iteration: int, epoch: int, epoch_end: bool) -> bool:
        if self.folder is None:
            return False
        if self.unit == "iteration":
            return bool(iteration % self.every == 0)
        return bool(epoch_end and epoch % self.every == 0)

    def write(self, net: Any, iteration: int) -> None:
        if self.folder is None or not is_main_process():
            return
        from ..io._atomic import replace
        from ..io._network_file import write_network_file

        path = self.folder / checkpoint_name(iteration)
        saved = self.network(net)
        replace(path, lambda temporary: write_network_file(saved, temporary))
        self.written.append(path)
