"""MATLAB's creation, conversion and type functions: ``zeros``, ``ones``, ``rand``, ``randn`` (with
``"like"``), ``single``, ``double``, ``cast``, ``logical``, ``underlyingType``, ``isdlarray`` (``gather`` and
the other device functions are in :mod:`._device`).

MATLAB's class names map to torch dtypes: ``"double"`` float64, ``"single"`` float32, ``"logical"``
bool, ``"half"`` float16, ``"int8"`` ... ``"int64"`` and ``"uint8"``. The conversions keep a dlarray's
format. The creation functions return what MATLAB's return: a plain array (a torch tensor, float64
by default as MATLAB's ``double``), or with ``"like", P`` an array of ``P``'s type and device, a
dlarray when ``P`` is one (unformatted: the sizes given carry no labels; relabel with
``dlarray(Z, fmt)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .. import _categorical, _validate
from .._categorical import Categorical
from .._dlarray import DLArray, _as_tensor
from .._errors import DLFormatError
from .._options import matlab_function
from . import _math

__all__ = [
    "cast",
    "double",
    "isdlarray",
    "logical",
    "ones",
    "rand",
    "randn",
    "single",
    "underlyingType",
    "zeros",
]

CLASSES = {
    "double": torch.float64,
    "single": torch.float32,
    "half": torch.float16,
    "logical": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
}
_NAMES = {dtype: name for name, dtype in CLASSES.items()}
DLARRAY_CLASSES = ("single", "double", "logical")  # what MATLAB's dlarray holds


def _class_name(caller: str, name: object, allowed: tuple[str, ...] = tuple(CLASSES)) -> torch.dtype:
    if isinstance(name, str) and name.lower() in allowed:
        return CLASSES[name.lower()]
    shown = ", ".join(f'"{value}"' for value in allowed)
    raise DLFormatError(f"{caller}: the class must be one of {shown}; got {_validate.describe(name)}")


def _data(value: Any) -> torch.Tensor:
    return value._data if isinstance(value, DLArray) else _as_tensor(value)


# -- creation ---------------------------------------------------------------------------------------
def _create(
    caller: str,
    fill: Callable[[tuple[int, ...], torch.dtype, torch.device], torch.Tensor],
    args: tuple[Any, ...],
    like: Any,
    floating_only: bool,
) -> Any:
    classname = None
    if args and isinstance(args[-1], str):
        classname, args = args[-1], args[:-1]
    if len(args) == 1 and isinstance(args[0], (list, tuple, torch.Size)):
        args = tuple(args[0])
    sizes = tuple(_validate.nonnegative_integer(f"{caller} size", value) for value in args)
    if len(sizes) == 0:
        sizes = (1, 1)
    elif len(sizes) == 1:
        sizes = (sizes[0], sizes[0])  # MATLAB: zeros(n) is n×n
    if classname is not None and like is not None:
        raise DLFormatError(f'{caller} takes a class name or "like", P, not both')
    device = torch.device("cpu")
    if like is not None:
        prototype = _data(like)
        dtype, device = prototype.dtype, prototype.device
    else:
        allowed = (
            ("double", "single") if floating_only else tuple(name for name in CLASSES if name != "logical")
        )
        dtype = _class_name(caller, classname, allowed) if classname is not None else torch.float64
    if floating_only and not dtype.is_floating_point:
        raise DLFormatError(
            f"{caller} makes floating-point numbers; the prototype's type is {_NAMES.get(dtype, str(dtype))}"
        )
    data = fill(sizes, dtype, device)
    return DLArray._wrap(data, "") if isinstance(like, DLArray) else data


@matlab_function
def zeros(*sz: Any, like: Any = None) -> Any:
    """MATLAB's ``zeros(n)``, ``zeros(m, n, ...)``, ``zeros([m n ...])``, with a class name
    (``"single"``) or ``"like", P``.

    Examples:
        >>> X = dlf.dlarray(torch.randn(3, 2, dtype=torch.float32), "CB")
        >>> Z = dlf.zeros(3, 2, "like", X)  # an unformatted float32 dlarray
        >>> dlf.dims(Z), Z.dtype
        ('', torch.float32)
    """
    return _create("zeros", lambda s, t, d: torch.zeros(s, dtype=t, device=d), sz, like, False)


@matlab_function
def ones(*sz: Any, like: Any = None) -> Any:
    """MATLAB's ``ones``: as :func:`zeros`, filled with ones."""
    return _create("ones", lambda s, t, d: torch.ones(s, dtype=t, device=d), sz, like, False)


@matlab_function
def rand(*sz: Any, like: Any = None) -> Any:
    """MATLAB's ``rand``: uniform random numbers in (0, 1), sized as :func:`zeros` (torch's generator:
    ``torch.manual_seed`` is MATLAB's ``rng``)."""
    return _create("rand", lambda s, t, d: torch.rand(s, dtype=t, device=d), sz, like, True)


@matlab_function
def randn(*sz: Any, like: Any = None) -> Any:
    """MATLAB's ``randn``: standard normal random numbers, sized as :func:`zeros`."""
    return _create("randn", lambda s, t, d: torch.randn(s, dtype=t, device=d), sz, like, True)


# -- conversions ------------------------------------------------------------------------------------
def _converted(X: Any, dtype: torch.dtype) -> Any:
    if isinstance(X, Categorical):  # MATLAB's category numbers, from 1; NaN where undefined
        return torch.from_numpy(_categorical.double(X)).to(dtype)
    if isinstance(X, DLArray):
        return DLArray._wrap(X._data.to(dtype), X._fmt)
    return _data(X).to(dtype)


def single(X: Any) -> Any:
    """MATLAB's ``single``: float32 data; a dlarray keeps its format, anything else becomes a tensor."""
    return _converted(X, torch.float32)


def double(X: Any) -> Any:
    """MATLAB's ``double``: float64 data; a dlarray keeps its format, anything else becomes a tensor.
    Of a categorical array: each element's category number, from 1 (NaN where undefined), as
    MATLAB's ``double(categorical(...))`` gives (docs/data.md).

    Examples:
        >>> dlf.double(dlf.categorical(["5", "3", "2", "1", "8"])).tolist()  # categories 1 2 3 5 8
        [4.0, 3.0, 2.0, 1.0, 5.0]
    """
    return _converted(X, torch.float64)


def logical(X: Any) -> Any:
    """MATLAB's ``logical``: true where nonzero (NaN cannot be converted, as in MATLAB); a dlarray keeps
    its format."""
    if isinstance(X, DLArray):
        return DLArray._wrap(_math.logical(X._data, "logical"), X._fmt)
    return _math.logical(_data(X), "logical")


def cast(X: Any, newclass: Any = None, P: Any = None, *, like: Any = None) -> Any:
    """MATLAB's ``cast(X, newclass)`` and ``cast(X, "like", P)``.

    A dlarray keeps its format and may become ``"single"``, ``"double"`` or ``"logical"`` (what
    MATLAB's dlarray holds). With ``"like", P`` the result takes ``P``'s type and device, and is a
    dlarray when either is one.
    """
    if isinstance(newclass, str) and newclass.lower() == "like":
        newclass, like = None, P
    elif P is not None:
        raise DLFormatError('cast takes (X, newclass) or (X, "like", P)')
    if like is not None:
        prototype = _data(like)
        if isinstance(X, DLArray):
            return DLArray._wrap(X._data.to(dtype=prototype.dtype, device=prototype.device), X._fmt)
        data = _data(X).to(dtype=prototype.dtype, device=prototype.device)
        return DLArray._wrap(data, "") if isinstance(like, DLArray) else data
    if newclass is None:
        raise DLFormatError('cast needs a class name, cast(X, "single"), or a prototype, cast(X, "like", P)')
    if isinstance(X, DLArray):
        dtype = _class_name("cast of a dlarray", newclass, DLARRAY_CLASSES)
        if dtype == torch.bool:
            return logical(X)
        return _converted(X, dtype)
    dtype = _class_name("cast", newclass)
    return logical(X) if dtype == torch.bool else _converted(X, dtype)


def underlyingType(X: Any) -> str:
    """MATLAB's ``underlyingType``: the class of the data, ``"single"``, ``"double"``, ``"logical"``...
    (torch's dtype name for a dtype MATLAB has no class for, such as ``"bfloat16"``)."""
    if isinstance(X, (bool, np.bool_)):
        return "logical"
    if isinstance(X, (int, float)):
        return "double"  # a number written in code is a double, as in MATLAB
    dtype = _data(X).dtype
    return _NAMES.get(dtype, str(dtype).removeprefix("torch."))


def isdlarray(X: Any, underlyingClass: str | None = None) -> bool:
    """MATLAB's ``isdlarray(X)`` and ``isdlarray(X, underlyingClass)``."""
    if not isinstance(X, DLArray):
        return False
    if underlyingClass is None:
        return True
    if not isinstance(underlyingClass, str):
        raise DLFormatError(
            f"isdlarray: underlyingClass must be a class name; got {_validate.describe(underlyingClass)}"
        )
    return underlyingType(X) == underlyingClass.lower()
