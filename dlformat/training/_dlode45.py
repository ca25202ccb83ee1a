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
from ..networks import DLNetwork
from . import _parameters

__all__ = ["dlode45"]

# Dormand–Prince 5(4): nodes, stage weights, 5th-order weights (FSAL: the last stage is f at y_new)
# and the difference between the 5th- and 4th-order weights (the error estimate)
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)
_POWER = 1 / 5


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
        stacked = _adjoint_solution(f, times, data, _learnables(theta), absolute, relative)
    else:
        stacked = torch.stack(_integrate(f, times, data, absolute, relative), dim=-1)
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


def _adjoint_solution(
    f: Callable[[float, torch.Tensor], torch.Tensor],
    times: list[float],
    y0: torch.Tensor,
    learnables: list[torch.Tensor],
    absolute: float,
    relative: float,
) -> torch.Tensor:
    """The solution at ``times[1:]`` (stacked last), differentiated by the adjoint method.

    The forward solve keeps no trace. The backward pass integrates, from each output time to the
    one before, the augmented system of Chen et al. (MathWorks' reference [1]): the state ``y``
    itself (restarted from the forward solution there), the adjoint ``a`` with
    ``a' = −aᵀ∂f/∂y`` (plus the incoming gradient at each output time), and ``g' = −aᵀ∂f/∂θ``;
    ``a`` and ``g`` at the initial time are the gradients of ``Y0`` and of ``theta``'s learnables.
    """
    shapes = [y0.shape, y0.shape, *(p.shape for p in learnables)]
    sizes = [math.prod(shape) for shape in shapes]

    def pack(parts: list[torch.Tensor]) -> torch.Tensor:
        return torch.cat([part.reshape(-1).to(y0.dtype) for part in parts])

    def unpack(z: torch.Tensor) -> list[torch.Tensor]:
        return [part.reshape(shape) for part, shape in zip(z.split(sizes), shapes, strict=True)]

    def augmented(t: float, z: torch.Tensor) -> torch.Tensor:
        y, a, *_ = unpack(z)
        with torch.enable_grad():
            traced = y.detach().requires_grad_()
            slope = f(t, traced)
            found = (  # a slope of t alone (no y, no learnables) has no graph: its derivatives are 0
                torch.autograd.grad(slope, [traced, *learnables], a, allow_unused=True)
                if slope.requires_grad
                else [None] * (1 + len(learnables))
            )
        vjps = [torch.zeros_like(p) if g is None else g for p, g in zip([y, *learnables], found, strict=True)]
        return pack([slope.detach(), -vjps[0], *(-v for v in vjps[1:])])

    class Adjoint(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, start: torch.Tensor, *parameters: torch.Tensor) -> torch.Tensor:
            solutions = _integrate(f, times, start.detach(), absolute, relative)
            ctx.save_for_backward(start.detach(), *solutions)
            return torch.stack(solutions, dim=-1)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, ...]:
            solutions = ctx.saved_tensors
            a = torch.zeros_like(y0)
            sums = [torch.zeros_like(p) for p in learnables]
            for k in range(len(times) - 1, 0, -1):
                a = a + grad[..., k - 1]
                z0 = pack([solutions[k], a, *sums])
                (z,) = _integrate(augmented, [times[k], times[k - 1]], z0, absolute, relative)
                _, a, *sums = unpack(z)
            return (a, *sums)

    result: torch.Tensor = Adjoint.apply(y0, *learnables)
    return result


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


def _error_norm(error: torch.Tensor, y: torch.Tensor, y_new: torch.Tensor, threshold: float) -> float:
    """``ode45``'s max norm of ``error`` relative to ``max(|y|, |y_new|, threshold)``."""
    scale = torch.maximum(torch.maximum(y.abs(), y_new.abs()), torch.full_like(y, threshold))
    return float((error.abs() / scale).max()) if error.numel() else 0.0


def _integrate(
    f: Callable[[float, torch.Tensor], torch.Tensor],
    times: list[float],
    y0: torch.Tensor,
    absolute: float,
    relative: float,
) -> list[torch.Tensor]:
    """The solution at ``times[1:]``, Dormand–Prince steps with ``ode45``'s step control."""
    threshold = absolute / relative
    direction = 1.0 if times[-1] > times[0] else -1.0
    span = abs(times[-1] - times[0])
    largest = 0.1 * span
    t, y = times[0], y0
    k1 = f(t, y)
    with torch.no_grad():  # ode45's first step: from the size of the slope at the start
        rate = float((k1.abs() / torch.clamp(y.detach().abs(), min=threshold)).max()) / (
            0.8 * relative**_POWER
        )
    step = min(largest, span)
    if step * rate > 1:
        step = 1 / rate
    results = []
    for target in times[1:]:
        while direction * (target - t) > 0:
            smallest = 16 * math.ulp(abs(t) if t else 1.0)
            step = min(max(step, smallest), largest)
            remaining = abs(target - t)
            h = remaining if step >= remaining * (1 - 1e-12) or 1.1 * step >= remaining else step
            signed = direction * h
            stages = [k1]
            for c, row in zip(_C[1:], _A[1:], strict=True):
                increment = sum(
                    (a * k for a, k in zip(row, stages, strict=False) if a), start=torch.zeros_like(y)
                )
                stages.append(f(t + c * signed, y + signed * increment))
            y_new = y + signed * sum(
                (a * k for a, k in zip(_A[6], stages, strict=False) if a), start=torch.zeros_like(y)
            )
            # the 7th stage was evaluated at y_new: it is the next step's first (FSAL)
            with torch.no_grad():
                error = signed * sum(
                    (e * k for e, k in zip(_E, stages, strict=True) if e), start=torch.zeros_like(y)
                )
                err = _error_norm(error, y.detach(), y_new.detach(), threshold)
            if not err <= relative:  # also a NaN or infinite estimate
                if h <= smallest or not math.isfinite(err):
                    raise DLFormatError(
                        f"dlode45: unable to meet the tolerances at t = {t:g} without a step below the "
                        f"smallest allowed ({smallest:g}), or the solution is not finite; the ODE may be "
                        "stiff or blow up"
                    )
                step = h * max(0.1, 0.8 * (relative / err) ** _POWER)
                continue
            t = target if h == remaining else t + signed
            y, k1 = y_new, stages[6]
            grow = 1.25 * (err / relative) ** _POWER
            step = h / grow if grow > 0.2 else 5 * h
        results.append(y)
    return results
