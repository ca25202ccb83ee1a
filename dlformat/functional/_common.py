"""What every functional function shares: reading its input's format, and MATLAB's precision rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, dlarray, working_dtype
from .._errors import DLFormatError

__all__ = ["as_data", "floating_data", "formatted_input", "working_dtype"]


def formatted_input(
    X: Any, DataFormat: str | None, caller: str, needs: str = "", indices: bool = False
) -> tuple[DLArray, Callable[[DLArray], DLArray]]:
    """``X`` as a formatted dlarray, and how to give a result back in ``X``'s kind.

    MATLAB's rule for its deep-learning functions: a formatted dlarray carries its own
    format, and ``DataFormat`` is then an error; unformatted data (an unformatted dlarray, a
    tensor or a NumPy array) needs ``DataFormat``, which labels its dimensions in the order
    they are stored, and the result comes back unformatted, its dimensions in the order of
    the formatted result. ``needs`` lists labels the format must have. The data must be
    floating or logical, as MATLAB's dlarray holds single, double or logical data (logical
    computes as single); ``indices=True`` admits integers too (``embed``'s word indices).
    """
    if isinstance(X, DLArray) and X._fmt:
        if DataFormat is not None:
            raise DLFormatError(
                f'{caller}: DataFormat is only for unformatted data; the input already has format "{X._fmt}"'
            )
        result, restore = X, _keep
    else:
        if DataFormat is None:
            raise DLFormatError(
                f'{caller} needs a formatted dlarray, or DataFormat="..." to label unformatted data '
                f'(for example DataFormat="CB"); got {_describe_input(X)}'
            )
        data = X._data if isinstance(X, DLArray) else as_data(X, f"{caller} input")
        if len(DataFormat) < data.ndim:
            raise DLFormatError(
                f'{caller}: DataFormat "{DataFormat}" labels {len(DataFormat)} dimensions; the data has '
                f"{data.ndim}"
            )
        result, restore = dlarray(data, DataFormat), _strip
    if not indices:
        floating_data(result._data, caller)
    missing = [label for label in needs if label not in result._fmt]
    if missing:
        wanted = " and ".join(f'"{label}"' for label in needs)
        noun = f"a {wanted} dimension" if len(needs) == 1 else f"{wanted} dimensions"
        raise DLFormatError(f'{caller} needs data with {noun}; got format "{result._fmt}"')
    return result, restore


def floating_data(data: torch.Tensor, caller: str) -> torch.Tensor:
    """``data`` as MATLAB computes on it: floating kept, logical as single, integers refused
    (MATLAB's dlarray holds single, double or logical data)."""
    if data.is_floating_point():
        return data
    if data.dtype == torch.bool:
        return data.to(torch.get_default_dtype())
    raise DLFormatError(
        f"{caller} needs floating-point or logical data (MATLAB's dlarray holds single, double or "
        f"logical); got dtype {data.dtype}. Convert it first, e.g. X.float()"
    )


def _keep(Y: DLArray) -> DLArray:
    return Y


def _strip(Y: DLArray) -> DLArray:
    return DLArray._wrap(Y._data, "")


def _describe_input(X: Any) -> str:
    if isinstance(X, DLArray):
        return "an unformatted dlarray"
    return _validate.describe(X)


def as_data(value: Any, name: str) -> torch.Tensor:
    """The tensor inside a dlarray, tensor, NumPy array or number (learnables and options)."""
    if isinstance(value, DLArray):
        return value._data
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # a number written in code is a double, as in MATLAB: it yields to a narrower type
        return torch.tensor(value, dtype=torch.float64)
    if isinstance(value, (np.ndarray, np.generic)):
        return dlarray(value)._data
    raise DLFormatError(
        f"{name} must be a dlarray, a tensor, a NumPy array or a number; got {_validate.describe(value)}"
    )
