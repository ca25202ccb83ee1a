"""Checks for user-given property values, each returning the value in canonical form.

Every check raises :class:`DLFormatError` naming the property, the value it got and
what is allowed, before anything is assigned.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np
import torch

from ._errors import DLFormatError, cut, shown

T = TypeVar("T")


def first_argument(caller: str, value: object, kind: type[T] | tuple[type, ...], what: str) -> T:
    """``value`` itself when it is a ``kind``; otherwise an error saying ``caller`` needs ``what``
    (``"a dlnetwork"``) as its first argument, as MATLAB's functions on objects say."""
    if not isinstance(value, kind):
        raise DLFormatError(f"{caller} needs {what} as its first argument; got {describe(value)}")
    return value  # type: ignore[return-value]


def describe(value: object) -> str:
    """A short, quoted description of a bad value for an error message."""
    if isinstance(value, str):
        return f'"{cut(value)}" (a string)'
    if isinstance(value, (bool, np.bool_)):
        return f"{value} (a logical)"
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return f"a {type(value).__name__} of shape {tuple(value.shape)} and dtype {value.dtype}"
    if hasattr(value, "categories") and hasattr(value, "codes"):  # a categorical (or pandas') array
        return f"a categorical array of shape {tuple(np.shape(value.codes))}"
    text = shown(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def matlab_size(shape: Iterable[int | str]) -> str:
    """A size as MATLAB writes it: ``3×4`` (a size not yet known by its name: ``4×InputSize``)."""
    return "×".join(str(size) for size in shape)


def _real_scalar(value: object) -> float | int | None:
    """The Python number inside a real numeric scalar, or ``None`` if it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, torch.Tensor):
        if value.ndim != 0 or value.dtype == torch.bool or value.dtype.is_complex:
            return None
        number: float | int = value.item()  # real, as checked above
        return number
    if isinstance(value, np.ndarray):
        if value.ndim != 0 or value.dtype.kind not in "iuf":
            return None
        item: float | int = value.item()  # real, as checked above
        return item
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


LARGEST_INTEGER = 2**53  # beyond it a MATLAB double cannot hold every integer: no size or index is larger


def integer(name: str, value: object, *, minimum: int) -> int:
    """An integer ``>= minimum``: a Python, NumPy or torch integer, or an integral float."""
    number = _real_scalar(value)
    finite = isinstance(number, int) or (number is not None and math.isfinite(number))
    if number is None or not finite or number != int(number) or number < minimum:
        allowed = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise DLFormatError(f"{name} must be {allowed}; got {describe(value)}")
    if number > LARGEST_INTEGER:
        limit = "at most 2^53 (MATLAB's largest exact integer)"
        raise DLFormatError(f"{name} must be {limit}; got {describe(value)}")
    return int(number)


def positive_integer(name: str, value: object) -> int:
    return integer(name, value, minimum=1)


def nonnegative_integer(name: str, value: object) -> int:
    return integer(name, value, minimum=0)


ABSENT_LABEL = "finddim returns () for a label the array lacks"  # why a dimension list may be empty


def dimension_number(name: str, value: object) -> int:
    """One MATLAB dimension number (from 1): a positive integer, or a sequence holding one, as
    ``finddim`` returns it for a label found once (MATLAB's 1×1 result is a scalar)."""
    if isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim > 0:
        items: list[object] = value.reshape(-1).tolist()
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return integer(name, value, minimum=1)
    if len(items) != 1:
        absent = f" ({ABSENT_LABEL})" if not items else ""
        raise DLFormatError(
            f"{name} must be one dimension number (a positive integer, counted from 1 as in MATLAB); "
            f"got {describe(value)}, which holds {len(items)}{absent}"
        )
    return integer(name, items[0], minimum=1)


def factor(name: str, value: object) -> float:
    """A finite real scalar ``>= 0``, as MATLAB's learn-rate and L2 factors are."""
    number = _real_scalar(value)
    if number is None or not math.isfinite(number) or number < 0:
        raise DLFormatError(f"{name} must be a finite scalar >= 0; got {describe(value)}")
    return float(number)


def text(name: str, value: object) -> str:
    """A string (MATLAB's character vector or string scalar)."""
    if isinstance(value, np.str_):
        value = str(value)
    if not isinstance(value, str):
        raise DLFormatError(f"{name} must be a string; got {describe(value)}")
    return value


def flag(name: str, value: object) -> bool:
    """MATLAB's logical flag: true/false or 1/0."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, float)) and value in (0, 1)):
        return bool(value)
    raise DLFormatError(f"{name} must be true or false (1 or 0); got {describe(value)}")


def choice(
    name: str, value: object, allowed: tuple[str, ...], aliases: dict[str, str] | None = None, also: str = ""
) -> str:
    """One of ``allowed``, matched case-insensitively as MATLAB matches option strings.

    ``also`` describes further accepted values, for the error message.
    """
    if isinstance(value, (str, np.str_)):
        key = str(value).lower()
        key = (aliases or {}).get(key, key)
        if key in allowed:
            return key
    options = ", ".join(f'"{option}"' for option in allowed)
    raise DLFormatError(f"{name} must be one of {options}{also}; got {describe(value)}")


def choice_or_callable(
    name: str, value: object, allowed: tuple[str, ...], aliases: dict[str, str] | None = None
) -> str | Callable[..., object]:
    """One of ``allowed`` (see :func:`choice`) or a callable, as MATLAB's initializers are."""
    if callable(value):
        return value
    return choice(name, value, allowed, aliases, also=", or a function handle (a callable)")


def floating_dtype(name: str, dtype: object) -> torch.dtype:
    """A real floating torch dtype, as parameters need."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise DLFormatError(
            f"{name} must be a floating torch dtype (torch.float32, torch.float64, torch.bfloat16 "
            f"or torch.float16); got {describe(dtype)}"
        )
    return dtype


def real(name: str, value: object) -> float:
    """A finite real scalar of any sign."""
    number = _real_scalar(value)
    if number is None or not math.isfinite(number):
        raise DLFormatError(f"{name} must be a finite real scalar; got {describe(value)}")
    return float(number)


def positive(name: str, value: object) -> float:
    """A finite real scalar ``> 0`` (an epsilon, a standard deviation)."""
    number = _real_scalar(value)
    if number is None or not math.isfinite(number) or number <= 0:
        raise DLFormatError(f"{name} must be a positive number; got {describe(value)}")
    return float(number)


def probability(name: str, value: object) -> float:
    """A probability in [0, 1), as MATLAB's dropout probabilities are."""
    number = _real_scalar(value)
    if number is None or not 0 <= number < 1:
        raise DLFormatError(f"{name} must be a number in [0, 1); got {describe(value)}")
    return float(number)


def unit_interval(name: str, value: object) -> float:
    """A number in [0, 1], as MATLAB's batch normalization decays are."""
    number = _real_scalar(value)
    if number is None or not 0 <= number <= 1:
        raise DLFormatError(f"{name} must be a number in [0, 1]; got {describe(value)}")
    return float(number)


def auto_or_positive(name: str, value: object) -> int | str:
    """MATLAB's ``"auto"`` (fixed when the layer first sees data) or a positive integer."""
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    return positive_integer(name, value)
