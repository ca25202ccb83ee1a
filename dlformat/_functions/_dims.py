"""MATLAB's dimension arguments: ``sum(X, 3)``, ``sum(X, [1 3])``, ``sum(X, "all")``, and by label.

MATLAB numbers dimensions from 1, and so do dlformat's MATLAB functions: ``dlf.sum(X, 3)`` is
MATLAB's ``sum(X, 3)``, the third dimension in the stored (canonical) order, which is MATLAB's
order too. A label names the dimensions it labels: ``dlf.sum(X, "T")`` is MATLAB's
``sum(X, finddim(X, "T"))``, and ``"S"`` names every spatial dimension. ``dlf.finddim`` returns
MATLAB's numbers too, so its result goes into every function that takes a dimension; a one-number
result (a label found once) counts as a scalar, as MATLAB's 1×1 does, and an empty one (a label the
array lacks) is an error. Only Python's own indexing, ``X[...]`` and ``X.shape[...]``, is 0-based.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import torch

from .. import _format, _validate
from .._errors import DLFormatError
from .._tracing import cached_plan

__all__ = ["dimension", "first_nonsingleton", "positions", "single_number"]


def _describe(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _allowed(fmt: str, ndim: int, all_: bool) -> str:
    numbers_ = (
        f"a dimension number from 1 to {ndim} (MATLAB's 1-based numbers)" if ndim else "no dimension number"
    )
    labels = f', a label of "{fmt}"' if fmt else ""
    everything = ', or "all"' if all_ else ""
    return f"{numbers_}, a list of them{labels}{everything}"


def _number(value: object) -> int | None:
    """The integer of an integral number (a Python, NumPy or 0-d torch number), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, torch.Tensor):
        if value.ndim != 0 or value.dtype == torch.bool or value.is_complex():
            return None
        value = value.item()
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number) and number == int(number):
            return int(number)
    return None


def single_number(value: object) -> int | None:
    """The integer of a number, or of a sequence holding one number (``finddim``'s result for a label
    found once: MATLAB's 1×1 is a scalar); else None."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    elif isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim > 0 and math.prod(value.shape) == 1:
        value = value.reshape(-1).tolist()[0]
    return _number(value)


@cached_plan(1024)
def label_positions(fmt: str, labels: str) -> tuple[int, ...] | str:
    """0-based positions of the dimensions carrying ``labels``, in order; the first label ``fmt``
    lacks (a one-character string) when there is one."""
    for label in labels:
        if label not in fmt:
            return label
    return tuple(position for position, label in enumerate(fmt) if label in labels)


def positions(caller: str, fmt: str, ndim: int, dim: Any, *, all_: bool = True) -> tuple[int, ...]:
    """0-based positions of the dimensions ``dim`` names (numbers from 1, labels, or ``"all"``).

    Raises a DLFormatError naming ``caller``, the value and what is allowed for a number out of
    range, a label the array lacks, a label of an unformatted array, or anything else.
    """
    if isinstance(dim, str):
        if dim.lower() == "all":
            if all_:
                return tuple(range(ndim))
        elif dim and all(label in _format.LABELS for label in dim):
            if not fmt:
                raise DLFormatError(
                    f'{caller}: dimension "{dim}" is a label, and an unformatted dlarray has none; give '
                    f"{_allowed(fmt, ndim, all_)}"
                )
            found = label_positions(fmt, dim)
            if isinstance(found, str):
                raise DLFormatError(
                    f'{caller}: the dlarray of format "{fmt}" has no "{found}" dimension; give '
                    f"{_allowed(fmt, ndim, all_)}"
                )
            return found
        raise DLFormatError(
            f"{caller}: dimension {_describe(dim)} is not allowed; give {_allowed(fmt, ndim, all_)}"
        )
    number = _number(dim)
    if number is not None:
        return (_check_number(caller, fmt, ndim, number, dim, all_),)
    if isinstance(dim, (list, tuple, range, np.ndarray, torch.Tensor)):
        values = dim.tolist() if isinstance(dim, (np.ndarray, torch.Tensor)) else list(dim)
        if isinstance(values, list) and values:
            found_numbers = [_number(value) for value in values]
            if all(value is not None for value in found_numbers):
                checked = {
                    _check_number(caller, fmt, ndim, value, dim, all_)
                    for value in found_numbers
                    if value is not None
                }
                return tuple(sorted(checked))
        if isinstance(values, list) and not values:
            raise DLFormatError(
                f"{caller}: the dimension list is empty, so it names no dimension "
                f"({_validate.ABSENT_LABEL}); give {_allowed(fmt, ndim, all_)}"
            )
    raise DLFormatError(
        f"{caller}: dimension {_describe(dim)} is not allowed; give {_allowed(fmt, ndim, all_)}"
    )


def _check_number(caller: str, fmt: str, ndim: int, number: int, given: object, all_: bool) -> int:
    if not 1 <= number <= ndim:
        hint = " (dimensions are numbered from 1, as in MATLAB)" if number == 0 else ""
        raise DLFormatError(
            f"{caller}: dimension {_describe(given)} is out of range for a dlarray with {ndim} dimensions"
            f"{hint}; give {_allowed(fmt, ndim, all_)}"
        )
    return number - 1


def dimension(caller: str, fmt: str, ndim: int, dim: Any) -> int:
    """The 0-based position of the one dimension ``dim`` names (``"S"`` must then be a single one)."""
    found = positions(caller, fmt, ndim, dim, all_=False)
    if len(found) != 1:
        raise DLFormatError(
            f"{caller} works along one dimension; {_describe(dim)} names {len(found)} of the "
            f'"{fmt}" dlarray. Give its number (from 1) instead'
        )
    return found[0]


def first_nonsingleton(shape: tuple[int, ...]) -> int:
    """MATLAB's default dimension: the first whose size is not 1 (the first when all are)."""
    return next((position for position, size in enumerate(shape) if size != 1), 0)
