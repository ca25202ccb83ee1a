"""MATLAB's weight initializers, by MATLAB name.

Each draws on the CPU (honouring ``torch.manual_seed`` or a given CPU ``generator``) in
float32, or float64 for float64 weights, then moves and casts: the same seed gives the
same weights on every device.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from .. import _validate
from .._errors import DLFormatError

NAMES = ("narrow-normal", "glorot", "he", "zeros", "ones")
# recurrent layers' weights also take "orthogonal" (lstmLayer, gruLayer)
RECURRENT_NAMES = (*NAMES, "orthogonal")
ALIASES = {"narrownormal": "narrow-normal"}

Initializer = Callable[[tuple[int, ...], int, int, torch.Generator | None, torch.dtype], torch.Tensor]


def _draw_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def _narrow_normal(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    return torch.empty(shape, dtype=_draw_dtype(dtype)).normal_(0.0, 0.01, generator=generator)


def _glorot(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    bound = math.sqrt(6.0 / (num_in + num_out))
    return torch.empty(shape, dtype=_draw_dtype(dtype)).uniform_(-bound, bound, generator=generator)


def _he(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    return torch.empty(shape, dtype=_draw_dtype(dtype)).normal_(
        0.0, math.sqrt(2.0 / num_in), generator=generator
    )


def _zeros(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    return torch.zeros(shape, dtype=dtype)


def _ones(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    return torch.ones(shape, dtype=dtype)


def _orthogonal(
    shape: tuple[int, ...], num_in: int, num_out: int, generator: torch.Generator | None, dtype: torch.dtype
) -> torch.Tensor:
    """MATLAB's "orthogonal": Q of the QR decomposition of a unit-normal matrix Z = QR (for a
    wide matrix, of its transpose): orthonormal columns (or rows)."""
    rows, columns = shape[0], math.prod(shape[1:])
    normal = torch.empty((max(rows, columns), min(rows, columns)), dtype=_draw_dtype(dtype))
    q: torch.Tensor = torch.linalg.qr(normal.normal_(0.0, 1.0, generator=generator))[0]
    return (q if rows >= columns else q.t()).reshape(shape)


_BUILTIN: dict[str, Initializer] = {
    "orthogonal": _orthogonal,
    "narrow-normal": _narrow_normal,
    "glorot": _glorot,
    "he": _he,
    "zeros": _zeros,
    "ones": _ones,
}


def check(name: str, value: object, names: tuple[str, ...] = NAMES) -> str | Callable[..., object]:
    """Validate a ``WeightsInitializer``-style value: one of MATLAB's initializer ``names`` or a callable."""
    return _validate.choice_or_callable(name, value, names, ALIASES)


def initialize(
    initializer: str | Callable[..., object],
    shape: tuple[int, ...],
    *,
    num_in: int,
    num_out: int,
    dtype: torch.dtype,
    device: torch.device | str | None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Fresh values of ``shape`` from a MATLAB initializer name or a callable ``f(sz)``.

    A callable receives ``sz == shape`` (MATLAB's size vector as a tuple) and must
    return a real numeric array of that shape (NumPy, torch or nested lists).
    """
    if callable(initializer):
        values = _call_user_initializer(initializer, shape)
    else:
        values = _BUILTIN[initializer](shape, num_in, num_out, generator, dtype)
    # stored row-major whatever the draw's layout (QR's Q, a user's transposed tensor): torch's
    # kernels copy a non-contiguous weight on every call that reads it (the LSTM twice per step)
    return values.to(device=device, dtype=dtype).contiguous()


def _call_user_initializer(function: Callable[..., object], shape: tuple[int, ...]) -> torch.Tensor:
    name = getattr(function, "__name__", type(function).__name__)
    result = function(shape)
    if isinstance(result, torch.Tensor):
        values = result.detach()
    else:
        try:
            array = np.asarray(result)
        except (TypeError, ValueError):
            array = np.asarray(None)
        if array.dtype.kind not in "iuf":
            raise DLFormatError(
                f"the weights initializer {name} must return a real numeric array of size "
                f"{_validate.matlab_size(shape)}; got {_validate.describe(result)}"
            )
        values = torch.from_numpy(np.array(array, dtype=array.dtype.newbyteorder("=")))
    if values.dtype == torch.bool or values.is_complex():
        raise DLFormatError(
            f"the weights initializer {name} must return real numbers; got dtype {values.dtype}"
        )
    if tuple(values.shape) != tuple(shape):
        got = _validate.matlab_size(values.shape) or "a scalar"
        raise DLFormatError(
            f"the weights initializer {name} must return an array of size {_validate.matlab_size(shape)} "
            f"(it is called with sz = {shape}); got {got}"
        )
    return values
