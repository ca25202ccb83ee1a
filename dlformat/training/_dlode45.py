"""MATLAB's ``dlode45`` (R2021b): the solution of ``y' = f(t, y, θ)`` at the times of ``tspan``.

The integrator is the Dormand–Prince 5(4) pair MathWorks' page names (``ode45``'s), with
``ode45``'s step-size control: the error estimate in the max norm relative to
``max(|y|, |y_new|, AbsoluteTolerance/RelativeTolerance)``, accepted when at most
``RelativeTolerance``; the step grows by at most 5 and shrinks by at least 10 per step; the
largest step is a tenth of the interval. Steps end exactly on each requested time instead of
``ode45``'s interpolation, so the intermediate steps (not the accuracy) differ from MATLAB's.

Gradients: ``GradientMode="direct"`` differentiates through the solver's operations (torch
autograd over every accepted step; the step-size choices are constants). ``"adjoint"`` keeps no
trace of the forward solve and solves the adjoint ODE backwards (Chen et al., the method
MathWorks' page cites), with the same integrator and tolerances.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._options import matlab_function
from ..functional._ode import adjoint_solution, integrate
from ..networks import DLNetwork
from . import _parameters

__all__ = ["dlode45"]


def _times(value: Any) -> list[float]:
    data = value._data if isinstance(value, DLArray) else value
    try:
        times = [float(t) for t in torch.as_tensor(data, dtype=torch.float64).reshape(-1)]
    except (TypeError, ValueError, RuntimeError):
        raise DLFormatError(
            f"dlode45 tspan must be a vector of times; got {_validate.describe(value)}"
        ) from None
    differences = [b - a for a, b in itertools.pairwise(times)]
    if len(times) < 2 or not all(math.isfinite(t) for t in times):
        raise DLFormatError(f"dlode45 tspan must hold at least two finite times; got {times}")
    if not (all(d > 0 for d in differences) or all(d < 0 for d in differences)):
        raise DLFormatError(f"dlode45 tspan must be strictly increasing or strictly decreasing; got {times}")
    return times


def _tolerance(name: str, value: Any) -> float:
    number = _validate.positive(f"dlode45 {name}", value)
    if not math.isfinite(number):
        raise DLFormatError(f"dlode45 {name} must be finite; got {number}")
    return number


@matlab_function
def dlode45(
    odefun: Callable[..., Any],
    tspan: Any,
    Y0: Any,
    theta: Any,
    *,
    DataFormat: Any = None,
    GradientMode: Any = "direct",
    AbsoluteTolerance: Any = 1e-6,
    RelativeTolerance: Any = 1e-3,
) -> DLArray:
    """MATLAB's ``Y = dlode45(odefun, tspan, Y0, theta)``: the neural ODE operation.

    ``odefun(t, y, theta)`` returns ``dy/dt`` (``y``'s size); ``t`` is a float, ``y`` a
    dlarray with ``Y0``'s format (for unformatted ``Y0``, the labels given by ``DataFormat``, in
    a dlarray's order: ``"BC"`` data arrives as ``"CB"``), ``theta`` is passed on as given (any
    container of learnables). ``tspan`` is a vector of at least two strictly monotonic times; the
    integration starts at ``tspan[0]`` from ``Y0``.

    ``Y`` holds the solution at ``tspan[1:]`` (the initial time excluded) along a time
    dimension appended to ``Y0``'s: a ``"T"`` label for formatted ``Y0`` (``"CB"`` gives
    ``"CBT"``), the last dimension for unformatted ``Y0`` (``C×B×T`` for ``DataFormat="CB"``),
    also when ``tspan`` has only two times. ``Y0`` must not have a ``"T"`` dimension.

    Options: ``DataFormat`` (needed for unformatted ``Y0``), ``GradientMode`` (``"direct"``:
    autograd through the steps, or ``"adjoint"``: the adjoint ODE solved backwards, which
    differentiates with respect to ``Y0`` and the traced tensors in ``theta``),
    ``AbsoluteTolerance`` (1e-6), ``RelativeTolerance`` (1e-3).

    Examples:
        >>> Y0 = dlf.dlarray(torch.ones(1, 1, dtype=torch.float64), "CB")
        >>> Y = dlf.dlode45(lambda t, y, k: -k * y, [0.0, 1.0, 2.0], Y0, 0.5, RelativeTolerance=1e-8)
        >>> dlf.dims(Y), [round(v, 6) for v in dlf.extractdata(Y).reshape(-1).tolist()]
        ('CBT', [0.606531, 0.367879])
    """
    if not callable(odefun):
        raise DLFormatError(
            f"dlode45 needs the ODE function odefun(t, y, theta) as its first argument; got "
            f"{_validate.describe(odefun)}"
        )
    mode = _validate.choice("dlode45 GradientMode", GradientMode, ("direct", "adjoint"))
    absolute = _tolerance("AbsoluteTolerance", AbsoluteTolerance)
    relative = _tolerance("RelativeTolerance", RelativeTolerance)
    times = _times(tspan)
    fmt, data, order = _initial(Y0, DataFormat)
    if not data.is_floating_point():
        raise DLFormatError(f"dlode45 Y0 must be real floating data; got dtype {data.dtype}")

    def f(t: float, y: torch.Tensor) -> torch.Tensor:
        derivative = odefun(t, DLArray._wrap(y, fmt), theta)
        out = derivative._data if isinstance(derivative, DLArray) else derivative
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(y.shape):
            got = (
                _validate.matlab_size(out.shape)
                if isinstance(out, torch.Tensor)
                else _validate.describe(derivative)
            )
            raise DLFormatError(
                f"dlode45: odefun must return an array of y's size {_validate.matlab_size(y.shape)}; "
                f"got {got}"
            )
        return out.to(y.dtype)

    if mode == "adjoint":
        stacked = adjoint_solution(f, times, data, _learnables(theta), absolute, relative, "dlode45")
    else:
        stacked = torch.stack(integrate(f, times, data, absolute, relative, "dlode45"), dim=-1)
    if DataFormat is not None:  # back in the caller's dimension order, time last
        inverse = sorted(range(len(order)), key=order.__getitem__)
        return DLArray._wrap(stacked.permute(*inverse, len(order)), "")
    return dlarray(stacked, fmt + "T")


def _learnables(theta: Any) -> list[torch.Tensor]:
    """The traced tensors in ``theta`` (a network's learnables, or the leaves of a container)."""
    if isinstance(theta, DLNetwork):
        leaves: list[Any] = [value for _, _, value in theta.Learnables]
    else:
        try:
            leaves, _ = _parameters.flatten("dlode45", "theta", theta)
        except DLFormatError:  # a number, a function, ...: nothing to differentiate
            return []
    tensors = [_parameters.as_tensor(leaf) for leaf in leaves]
    return [t for t in tensors if t.requires_grad]


def _initial(Y0: Any, data_format: Any) -> tuple[str, torch.Tensor, list[int]]:
    """``Y0``'s format and data in canonical order (as ``odefun`` sees them): its own labels, or
    ``DataFormat``'s for unformatted data; and the order of the given dimensions in that data."""
    if isinstance(Y0, DLArray) and Y0._fmt:
        if data_format is not None:
            raise DLFormatError(
                f'dlode45: Y0 is formatted ("{Y0._fmt}"); DataFormat is only for unformatted Y0'
            )
        fmt, data = Y0._fmt, Y0._data
        order = list(range(data.dim()))
    else:
        data = Y0._data if isinstance(Y0, DLArray) else Y0
        if not isinstance(data, torch.Tensor):
            raise DLFormatError(f"dlode45 Y0 must be a dlarray; got {_validate.describe(Y0)}")
        if data_format is None:
            raise DLFormatError(
                'dlode45: Y0 is unformatted; give its dimension labels with DataFormat (e.g. "CB")'
            )
        fmt = _validate.text("dlode45 DataFormat", data_format).upper()
        if len(fmt) != max(data.dim(), 2) or any(label not in "SCBTU" for label in fmt):
            raise DLFormatError(
                f'dlode45 DataFormat "{fmt}" must have one label from S, C, B, T, U per dimension of Y0 '
                f"({_validate.matlab_size(data.shape)})"
            )
        data = data.reshape(*data.shape, *([1] * (len(fmt) - data.dim())))
        # odefun gets a dlarray, whose dimensions are in canonical label order ("BC" is stored "CB")
        order = sorted(range(len(fmt)), key=lambda index: "SCBTU".index(fmt[index]))
        fmt, data = "".join(fmt[index] for index in order), data.permute(order)
    if "T" in fmt:
        raise DLFormatError(f'dlode45: Y0 must not have a time ("T") dimension; its format is "{fmt}"')
    return fmt, data, order
