"""Data-parallel training for ``trainnet`` / ``trainNetwork``: ``ExecutionEnvironment`` ``"parallel"``
and ``"multi-gpu"``.

Every rank holds a copy of the network and takes a disjoint share of each mini-batch (the
``MiniBatchSize`` observations are divided among the ranks, the first ranks taking one more when
the division leaves a remainder). Each rank's gradients are weighted by its share of the
mini-batch and summed over the ranks with ``torch.distributed.all_reduce``: the gradient of the
whole mini-batch's mean loss, so that L2 regularization, gradient thresholding and the solver
then see the same gradients as one process training on the whole mini-batch. The network's
State (batch normalization's running statistics) is averaged over the ranks, weighted by their
shares, after every iteration, so that every rank keeps the same State.

Two ways in:

- under ``torchrun`` (``RANK`` and ``WORLD_SIZE`` set) or inside an initialized process group:
  every rank calls ``trainnet`` and joins the group (``nccl`` with CUDA, ``gloo`` otherwise);
  every rank gets the trained network back;
- from one process: ``trainnet`` starts the workers itself (``torch.multiprocessing``, ``spawn``),
  one per CUDA device, or for ``"parallel"`` without CUDA ``DLFORMAT_NUM_WORKERS`` CPU processes
  (default: the number of CPU cores, as MATLAB's local pool), and returns rank 0's network.

``WorkerLoad`` (see :func:`training_workers`) picks how many of those workers train (a fraction or
a count of them) or gives each worker its own load (a vector: worker ``i`` takes
``W(i)/sum(W)`` of each mini-batch).
  Spawned workers import the caller's functions by name: a loss or schedule function must be
  defined at module level, and a script must start training under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import pickle
import socket
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from .._errors import DLFormatError

__all__ = ["SINGLE", "Group", "fingerprint", "group_for", "spawned"]

T = TypeVar("T")
# trainingOptions' WorkerLoad: None ([]), a fraction of the workers, a count of them, or one load per worker
WorkerLoad = float | int | tuple[float, ...] | None
DISTRIBUTED = ("parallel", "multi-gpu")
WORKERS_VARIABLE = "DLFORMAT_NUM_WORKERS"
_SPAWNED = "DLFORMAT_SPAWNED_WORKER"  # set in the workers spawned() starts: WorkerLoad already chose them


class Group:
    """The ranks training together; one process alone is the group of one (every method a no-op)."""

    def __init__(
        self,
        rank: int = 0,
        size: int = 1,
        device: torch.device | None = None,
        loads: tuple[float, ...] | None = None,
    ) -> None:
        self.rank, self.size, self.device, self.loads = rank, size, device, loads

    @property
    def leads(self) -> bool:
        """Rank 0 prints (``Verbose``), plots and writes checkpoints."""
        return self.rank == 0

    def shares(self, count: int) -> list[int]:
        """How many of a mini-batch's ``count`` observations each rank takes: ``count // size``,
        one more for the first ``count % size`` ranks; with ``WorkerLoad`` loads ``W``, rank ``i``
        ends at ``round(count * (W(1) + ... + W(i)) / sum(W))``."""
        if self.loads is None:
            whole, extra = divmod(count, self.size)
            return [whole + (rank < extra) for rank in range(self.size)]
        total = sum(self.loads)
        ends = [math.floor(count * part / total + 0.5) for part in itertools.accumulate(self.loads)]
        return [end - begin for begin, end in zip([0, *ends], ends, strict=False)]

    def share(self, indices: torch.Tensor) -> torch.Tensor:
        """This rank's part of a mini-batch (:meth:`shares`), in order."""
        if self.size == 1:
            return indices
        sizes = self.shares(len(indices))
        begin = sum(sizes[: self.rank])
        return indices[begin : begin + sizes[self.rank]]

    def order(self, order: torch.Tensor) -> torch.Tensor:
        """Rank 0's observation order, so that every rank cuts the same mini-batches."""
        if self.size == 1:
            return order
        moved = order.to(self.device) if self.device is not None else order  # nccl sends CUDA tensors only
        dist.broadcast(moved, 0)
        return moved.cpu()

    def gradients(self, gradients: list[torch.Tensor], weight: float) -> list[torch.Tensor]:
        """The whole mini-batch's gradients: each rank's weighted by its share, summed over ranks."""
        if self.size == 1:
            return gradients
        flat = torch.cat([g.reshape(-1) for g in gradients]) * weight
        dist.all_reduce(flat)
        parts = flat.split([g.numel() for g in gradients])
        return [part.view_as(g) for part, g in zip(parts, gradients, strict=True)]

    def average(self, record: dict[str, Any], names: Sequence[str], weight: float) -> dict[str, float]:
        """The named per-rank numbers (the loss) averaged over ranks, weighted by their shares."""
        if self.size == 1:
            return {}
        total = torch.tensor(
            [float(record[n]) * weight for n in names], dtype=torch.float64, device=self.device
        )
        dist.all_reduce(total)
        return dict(zip(names, total.tolist(), strict=True))

    def gathered(self, value: T) -> list[T]:
        """Every rank's ``value`` (a metric's working copy, to ``aggregate``), in rank order."""
        if self.size == 1:
            return [value]
        values: list[Any] = [None] * self.size
        dist.all_gather_object(values, value)
        return values

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` holds on any rank (rank 0's output function asking to stop stops all)."""
        if self.size == 1:
            return flag
        value = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item())

    def synchronize(self, net: Any, weight: float) -> None:
        """The State averaged over ranks (weighted by shares): every rank keeps the same State."""
        if self.size == 1:
            return
        with torch.no_grad():
            for value in net.State.Value:
                if value.is_floating_point():
                    value.mul_(weight)
                    dist.all_reduce(value)
                else:
                    dist.broadcast(value, 0)

    def start(self, net: Any) -> None:
        """Rank 0's learnables and State on every rank before the first iteration."""
        if self.size == 1:
            return
        with torch.no_grad():
            for value in [*net.parameters(), *net.buffers()]:
                dist.broadcast(value.data, 0)


SINGLE = Group()


def _cuda_count(environment: str) -> int:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if environment == "multi-gpu" and count == 0:
        raise DLFormatError(
            'ExecutionEnvironment "multi-gpu": no CUDA device is available to torch; use "parallel" '
            "to train on CPU processes"
        )
    return count


def _worker_count() -> int:
    given = os.environ.get(WORKERS_VARIABLE)
    if given is None:
        return os.cpu_count() or 1
    if not given.strip().isdigit() or int(given) < 1:
        raise DLFormatError(f"{WORKERS_VARIABLE} must be a positive integer; got {given!r}")
    return int(given)


def _joinable() -> bool:
    return dist.is_available() and (dist.is_initialized() or {"RANK", "WORLD_SIZE"} <= set(os.environ))


def training_workers(load: WorkerLoad, pool: int, started: bool = False) -> int:
    """How many of a machine's ``pool`` workers train under ``WorkerLoad``: all for ``None``; a
    fraction ``f`` of them (``round(f * pool)``, at least one); a count; or one per entry of a
    vector of loads. ``started``: the workers exist already (``torchrun``), so the load must use
    every one of them."""
    if load is None:
        return pool
    if isinstance(load, tuple):
        wanted = len(load)
    elif isinstance(load, int):
        wanted = load
    else:
        wanted = max(1, math.floor(load * pool + 0.5))
    if started and wanted != pool:
        raise DLFormatError(
            f"WorkerLoad {_shown(load)} asks for {wanted} training workers, but {pool} processes were "
            "started (torchrun's --nproc-per-node, or the process group's size): every started process "
            "trains, so start as many processes as should train, or give one load per process"
        )
    if wanted > pool and not (isinstance(load, tuple) and pool_is_free()):
        raise DLFormatError(
            f"WorkerLoad {_shown(load)} asks for {wanted} training workers; this machine has {pool} "
            f"({'CUDA devices' if torch.cuda.is_available() else 'CPU cores, or ' + WORKERS_VARIABLE})"
        )
    return wanted


def pool_is_free() -> bool:
    """Whether the number of CPU workers is free to choose (``DLFORMAT_NUM_WORKERS`` unset, no CUDA):
    then a vector ``WorkerLoad`` starts one worker per entry, as many as it has."""
    return WORKERS_VARIABLE not in os.environ and not torch.cuda.is_available()


def _shown(load: WorkerLoad) -> str:
    if isinstance(load, tuple):
        return "[" + " ".join(f"{value:g}" for value in load) + "]"
    return f"{load:g}"


def group_for(environment: str, load: WorkerLoad = None) -> Group | None:
    """The group to train in: the process group this rank belongs to (joined when ``torchrun``
    started it), :data:`SINGLE` without distributed training, or ``None`` when workers must be
    started (see :func:`spawned`)."""
    if environment not in DISTRIBUTED:
        return SINGLE
    cuda = _cuda_count(environment)
    if not _joinable():
        return None
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    if _SPAWNED not in os.environ:
        training_workers(load, dist.get_world_size(), started=True)
    device = None
    if cuda:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", dist.get_rank() % cuda)))
        torch.cuda.set_device(device)
    loads = load if isinstance(load, tuple) else None
    return Group(dist.get_rank(), dist.get_world_size(), device, loads)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(
    rank: int, size: int, port: int, folder: str, rng: torch.Tensor, train: Callable[..., Any], payload: bytes
) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(size))
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ[_SPAWNED] = "1"
    torch.set_rng_state(rng)  # rank 0 shuffles as the caller's process would have
    threads = max(1, (os.cpu_count() or 1) // size)
    torch.set_num_threads(threads)
    # the arguments come as plain pickled bytes: torch.multiprocessing would share the network's
    # tensors among the workers, and every worker would update the same weights
    args = pickle.loads(payload)
    try:
        try:
            outcome = train(*args)
        except DLFormatError as error:  # the caller gets it as a DLFormatError, not spawn's wrapper
            (Path(folder) / f"rank{rank}.error").write_text(str(error))
            raise
        state = args[1].state_dict()
        (Path(folder) / f"rank{rank}.sha").write_text(fingerprint(state))
        if rank == 0:
            torch.save((outcome, state), Path(folder) / "trained.pt")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def spawned(
    environment: str, train: Callable[..., T], args: tuple, load: WorkerLoad = None
) -> tuple[T, dict[str, Any]]:
    """Start one worker per CUDA device (or ``DLFORMAT_NUM_WORKERS`` CPU processes for
    ``"parallel"`` without CUDA), as many of them as ``WorkerLoad`` picks, run ``train(*args)`` in
    each, and return rank 0's outcome and trained State dict."""
    from torch.multiprocessing.spawn import spawn

    cuda = _cuda_count(environment)
    size = training_workers(load, cuda if cuda else _worker_count())
    try:
        payload = pickle.dumps(args)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise DLFormatError(
            f'ExecutionEnvironment "{environment}" starts worker processes, which receive the data, '
            "options and loss by pickling: functions given (lossFcn, LearnRateSchedule, OutputFcn, metric "
            f"functions) must be defined at module level ({error})"
        ) from None
    with tempfile.TemporaryDirectory() as folder:
        try:
            spawn(
                _run,
                args=(size, _free_port(), folder, torch.get_rng_state(), train, payload),
                nprocs=size,
                join=True,
            )
        except Exception:
            # a worker's DLFormatError (bad options or data, found once training starts) is the
            # caller's error: raised as itself; anything else keeps spawn's report of the worker
            messages = sorted(Path(folder).glob("rank*.error"))
            if messages:
                raise DLFormatError(messages[0].read_text()) from None
            raise
        prints = {(Path(folder) / f"rank{rank}.sha").read_text() for rank in range(size)}
        if len(prints) != 1:  # every rank applies the same updates: a difference is a bug, never ignored
            raise DLFormatError(f"{environment} training: the {size} workers ended with different networks")
        outcome, state = torch.load(Path(folder) / "trained.pt", weights_only=False)
        return outcome, state


def fingerprint(state: dict[str, torch.Tensor]) -> str:
    """A digest of every value's bytes: equal digests, bit-identical networks."""
    digest = hashlib.sha256()
    for name, value in state.items():
        digest.update(name.encode())
        digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
