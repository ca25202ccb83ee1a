"""MATLAB's GPU and random-number functions on torch's devices and generators: ``gpuArray``,
``gather``, ``canUseGPU``, ``gpuDevice``, ``gpuDeviceCount`` and ``rng``.

A MATLAB ``gpuArray`` is data in GPU memory; here it is a tensor (or a dlarray, format kept) on
the current CUDA device, which ``gpuDevice(ind)`` selects. Without a CUDA device ``canUseGPU()``
is false and ``gpuArray``/``gpuDevice`` say so with MATLAB's words. ``rng`` seeds the generators
dlformat and PyTorch code draw from: torch's (CPU and every CUDA device), NumPy's global one and
Python's ``random``; its settings restore them all. Rules and sources: docs/data.md.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._categorical import Categorical
from .._dlarray import DLArray, _as_tensor
from .._errors import DLFormatError

__all__ = [
    "GPUDevice",
    "RngSettings",
    "canUseGPU",
    "gather",
    "gpuArray",
    "gpuDevice",
    "gpuDeviceCount",
    "rng",
]

# MATLAB's error when there is no GPU (gpuDevice's message, as MATLAB Answers 282830 quotes it)
NO_GPU = (
    "No supported GPU device was found on this computer. To learn more about supported GPU devices, "
    "see www.mathworks.com/gpudevice"
)
# MATLAB's error for data that cannot go to the GPU (MATLAB Answers 167138)
NOT_NUMERIC = "Only full arrays of fundamental numeric types or logical types are supported for GPU arrays"
SEED_LIMIT = 2**32  # NumPy's global generator takes seeds below 2^32


def canUseGPU() -> bool:
    """MATLAB's ``tf = canUseGPU``: whether a GPU is available for computation (torch finds a
    CUDA device)."""
    return bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)


def gpuDeviceCount(which: str = "available") -> int:
    """MATLAB's ``n = gpuDeviceCount`` (``"available"`` or ``"all"``): the number of CUDA devices
    torch finds (0 without CUDA)."""
    _validate.choice("gpuDeviceCount", which, ("available", "all"))
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _require_gpu(caller: str) -> None:
    if not canUseGPU():
        raise DLFormatError(
            f"{caller}: {NO_GPU} (torch finds no CUDA device). Check canUseGPU() first, as MathWorks' "
            "canUseGPU page does, and leave the data on the CPU when it is false"
        )


def _numeric(caller: str, X: Any) -> torch.Tensor:
    """The data of ``X`` as a tensor, or MATLAB's refusal of data that is not numeric or logical."""
    if isinstance(X, DLArray):
        return X._data
    if isinstance(X, torch.Tensor):
        return X
    if isinstance(X, (str, bytes, dict, Categorical)) or X is None:
        raise DLFormatError(f"{caller}: {NOT_NUMERIC}; got {_validate.describe(X)}")
    try:
        return _as_tensor(X)
    except DLFormatError:
        raise DLFormatError(f"{caller}: {NOT_NUMERIC}; got {_validate.describe(X)}") from None


def gpuArray(X: Any) -> Any:
    """MATLAB's ``G = gpuArray(X)``: ``X`` on the current CUDA device (``gpuDevice`` selects it).

    A dlarray stays a dlarray with its format (MATLAB's ``gpuArray(dlX)``), a tensor stays a tensor,
    NumPy arrays and numbers become tensors (their types kept, as :func:`dlformat.dlarray` keeps
    them). Data that is not numeric or logical is refused with MATLAB's message; without a CUDA
    device, MATLAB's "No supported GPU device was found" (check :func:`canUseGPU` first).

    Examples:
        >>> G = dlf.gpuArray(torch.ones(2, 2)) if dlf.canUseGPU() else None  # MATLAB's idiom
    """
    data = _numeric("gpuArray", X)
    _require_gpu("gpuArray")
    device = torch.device("cuda", torch.cuda.current_device())
    if isinstance(X, DLArray):
        return DLArray._wrap(data.to(device), X._fmt)
    return data.to(device)


def gather(*A: Any) -> Any:
    """MATLAB's ``X = gather(A)`` and ``[X1, ..., Xn] = gather(A1, ..., An)``: data on the GPU
    brought to the CPU (a dlarray keeps its format); anything else is returned unchanged, as
    MATLAB's gather "has no effect" on data it cannot gather. Several arguments give a tuple.

    Examples:
        >>> X = dlf.dlarray(torch.ones(2, 3), "CB")
        >>> dlf.gather(X).device, dlf.gather("text")
        (device(type='cpu'), 'text')
    """
    if not A:
        raise DLFormatError("gather needs an array: X = gather(A)")
    gathered = tuple(value.cpu() if isinstance(value, (DLArray, torch.Tensor)) else value for value in A)
    return gathered[0] if len(gathered) == 1 else gathered


@dataclass(frozen=True)
class GPUDevice:
    """MATLAB's ``CUDADevice`` object (what :func:`gpuDevice` returns): the properties torch can
    tell of a CUDA device; ``Index`` counts from 1, as MATLAB's does."""

    Name: str
    Index: int
    ComputeCapability: str
    SupportsDouble: bool
    TotalMemory: int
    AvailableMemory: int
    MultiprocessorCount: int
    DeviceAvailable: bool
    DeviceSelected: bool

    def wait(self) -> None:
        """MATLAB's ``wait(D)``: wait until the device has finished its computations."""
        torch.cuda.synchronize(self.Index - 1)

    def __repr__(self) -> str:
        names = list(self.__dataclass_fields__)
        width = max(len(name) for name in names)
        rows = []
        for name in names:
            value = getattr(self, name)
            shown = (
                f"'{value}'"
                if isinstance(value, str)
                else str(int(value))
                if isinstance(value, bool)
                else str(value)
            )
            rows.append(f"  {name:>{width + 2}}: {shown}")
        return "\n".join(["  CUDADevice with properties:", "", *rows])


def gpuDevice(ind: Any = None) -> GPUDevice:
    """MATLAB's ``D = gpuDevice`` (the selected device) and ``gpuDevice(ind)`` (select device
    ``ind``, from 1: torch's ``cuda.set_device(ind - 1)``). Without a CUDA device, MATLAB's "No
    supported GPU device was found". ``gpuDevice([])`` (deselect and clear the device's memory) has
    no torch counterpart and is refused."""
    if isinstance(ind, (list, tuple, np.ndarray)) and len(ind) == 0:
        raise DLFormatError(
            "gpuDevice([]) deselects the GPU and clears the arrays on it in MATLAB; torch has no such "
            "operation, so dlformat does not port it (delete the tensors, then torch.cuda.empty_cache())"
        )
    _require_gpu("gpuDevice")
    count = torch.cuda.device_count()
    if ind is not None:
        index = _validate.positive_integer("gpuDevice: ind", ind)
        if index > count:
            raise DLFormatError(
                f"gpuDevice: ind must be a device index from 1 to gpuDeviceCount ({count}); got {index}"
            )
        torch.cuda.set_device(index - 1)
    current = torch.cuda.current_device()
    properties = torch.cuda.get_device_properties(current)
    free, _ = torch.cuda.mem_get_info(current)
    return GPUDevice(
        Name=str(properties.name),
        Index=current + 1,
        ComputeCapability=f"{properties.major}.{properties.minor}",
        SupportsDouble=True,
        TotalMemory=int(properties.total_memory),
        AvailableMemory=int(free),
        MultiprocessorCount=int(properties.multi_processor_count),
        DeviceAvailable=True,
        DeviceSelected=True,
    )


# -- rng --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RngSettings:
    """MATLAB's generator settings struct (``s = rng``): ``Type`` (``"twister"``), ``Seed`` and
    ``State``. The state is that of torch's, NumPy's and Python's generators (not MATLAB's
    ``625×1 uint32``): ``rng(s)`` restores them."""

    Type: str
    Seed: int
    State: tuple[Any, ...] = field(repr=False, compare=False)

    def __repr__(self) -> str:
        return "\n".join(
            [
                "  struct with fields:",
                "",
                f"     Type: '{self.Type}'",
                f"     Seed: {self.Seed}",
                "    State: {torch, NumPy and Python random generator states}",
            ]
        )


_seed: list[int | None] = [None]  # the seed rng last set (None: torch's own start-up seed)


def _settings() -> RngSettings:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    state = (torch.get_rng_state(), cuda, np.random.get_state(), random.getstate())
    seed = _seed[0] if _seed[0] is not None else int(torch.initial_seed())
    return RngSettings("twister", seed, state)


def _seeded(seed: int) -> None:
    torch.manual_seed(seed)  # the CPU generator and every CUDA device's
    np.random.seed(seed)
    random.seed(seed)
    _seed[0] = seed


def rng(*args: Any) -> RngSettings:
    """MATLAB's ``rng``: ``rng(seed)``, ``rng(seed, "twister")``, ``rng("default")`` (the Mersenne
    Twister with seed 0, MATLAB's factory default), ``rng("twister")`` (seed 0), ``rng("shuffle")``
    (a seed from the current time), ``s = rng`` (the settings) and ``rng(s)`` (restore them).

    Seeding sets torch's generator (CPU and every CUDA device), NumPy's global generator and
    Python's ``random``, all three Mersenne Twisters, to the seed (a nonnegative integer below 2^32,
    NumPy's limit). Runs are then reproducible; the numbers are torch's, not MATLAB's (the same
    seed gives different values than MATLAB's ``rand``). Returns the settings before the call, as
    MATLAB's ``t = rng(...)`` does. Other MATLAB generators (``"philox"``, ``"threefry"``,
    ``"combRecursive"``, ...) are not ported, nor a state MATLAB saved.

    Examples:
        >>> before = dlf.rng(0)
        >>> first = dlf.rand(1, 2)
        >>> dlf.rng(0).Seed, bool((dlf.rand(1, 2) == first).all())
        (0, True)
        >>> _ = dlf.rng(before)  # the generators as they were
    """
    previous = _settings()
    if not args:
        return previous
    if len(args) > 2:
        raise DLFormatError("rng takes rng(seed), rng(seed, generator), rng(generator) or rng(s)")
    first = args[0]
    if isinstance(first, RngSettings):
        if len(args) > 1:
            raise DLFormatError("rng(s) takes the settings alone")
        _restore(first)
        return previous
    if isinstance(first, dict):
        raise DLFormatError(
            "rng: these settings were not made by dlformat's rng (a MATLAB-saved struct's State is MATLAB's "
            "generator, which torch cannot take up); reseed with rng(seed) instead"
        )
    if isinstance(first, str) and first.lower() in ("default", "shuffle"):
        if len(args) > 1:
            _generator(args[1])
        seed = 0 if first.lower() == "default" else time.time_ns() % SEED_LIMIT
    elif isinstance(first, str):  # rng(generator): seed 0 (since R2023b)
        if len(args) > 1:
            raise DLFormatError("rng(generator) takes the generator alone; rng(seed, generator) seeds it")
        _generator(first)
        seed = 0
    else:
        seed = _validate.nonnegative_integer("rng: seed", first)
        if seed >= SEED_LIMIT:
            raise DLFormatError(f"rng: seed must be below 2^32 (NumPy's limit); got {seed}")
        if len(args) > 1:
            _generator(args[1])
    _seeded(seed)
    return previous


def _generator(name: Any) -> None:
    """Only MATLAB's ``"twister"``: torch's, NumPy's and Python's generators are Mersenne Twisters."""
    if not (isinstance(name, str) and name.lower() == "twister"):
        raise DLFormatError(
            'rng: the generator must be "twister" (torch, NumPy and Python draw from Mersenne Twisters); '
            f"got {_validate.describe(name)}, which dlformat does not port"
        )


def _restore(settings: RngSettings) -> None:
    torch_state, cuda_state, numpy_state, python_state = settings.State
    torch.set_rng_state(torch_state)
    if cuda_state is not None and torch.cuda.is_available() and len(cuda_state) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda_state)
    np.random.set_state(numpy_state)
    random.setstate(python_state)
    _seed[0] = settings.Seed
