"""The Dormand–Prince 5(4) integrator with ``ode45``'s step-size control, and its adjoint: the
numerics of MATLAB's ``dlode45`` (:mod:`dlformat.training._dlode45`) and ``neuralODELayer``
(:mod:`dlformat.networks._nested`), on plain tensors.

The pair is the one MathWorks' ``dlode45`` page names (``ode45``'s), with ``ode45``'s step-size
control: the error estimate in the max norm relative to ``max(|y|, |y_new|,
AbsoluteTolerance/RelativeTolerance)``, accepted when at most ``RelativeTolerance``; the step
grows by at most 5 and shrinks by at least 10 per step; the largest step is a tenth of the
interval. Steps end exactly on each requested time instead of ``ode45``'s interpolation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .._errors import DLFormatError

__all__ = ["adjoint_solution", "integrate"]

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


def adjoint_solution(
    f: Callable[[float, torch.Tensor], torch.Tensor],
    times: list[float],
    y0: torch.Tensor,
    learnables: list[torch.Tensor],
    absolute: float,
    relative: float,
    caller: str = "ode45",
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
            solutions = integrate(f, times, start.detach(), absolute, relative, caller)
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
                (z,) = integrate(augmented, [times[k], times[k - 1]], z0, absolute, relative, caller)
                _, a, *sums = unpack(z)
            return (a, *sums)

    result: torch.Tensor = Adjoint.apply(y0, *learnables)
    return result


def _error_norm(error: torch.Tensor, y: torch.Tensor, y_new: torch.Tensor, threshold: float) -> float:
    """``ode45``'s max norm of ``error`` relative to ``max(|y|, |y_new|, threshold)``."""
    scale = torch.maximum(torch.maximum(y.abs(), y_new.abs()), torch.full_like(y, threshold))
    return float((error.abs() / scale).max()) if error.numel() else 0.0


def integrate(
    f: Callable[[float, torch.Tensor], torch.Tensor],
    times: list[float],
    y0: torch.Tensor,
    absolute: float,
    relative: float,
    caller: str = "ode45",
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
                        f"{caller}: unable to meet the tolerances at t = {t:g} without a step below the "
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
