"""MATLAB's solver update functions for custom training loops: ``adamupdate``, ``sgdmupdate``,
``rmspropupdate``.

Each takes the parameters (a network, or a container of dlarrays), their gradients in the same
arrangement, and the solver state from the previous call (``[]`` or ``None`` on the first), and
returns the updated parameters with the new state, as MATLAB's functions do. The formulas are
MathWorks' (docs/training_loop.md), and differ from ``torch.optim`` where the docs say so. For a
network, each parameter's learning rate is the global rate times its layer's learn-rate factor;
the L2 factors are not applied (MATLAB's solver functions take no L2 regularization: add it to
the gradients with ``dlupdate``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .. import _validate
from .._dlarray import working_dtype
from .._errors import DLFormatError
from ..networks import DLNetwork
from . import _parameters

__all__ = ["adamupdate", "rmspropupdate", "sgdmupdate"]

# a learn-rate factor as applied: a scalar, or one value per row (a recurrent layer's per-gate vector)
Scale = float | torch.Tensor
# one step for one parameter: (parameter, gradient, states, learn-rate factor) -> (parameter, states)
Step = Callable[
    [torch.Tensor, torch.Tensor, list[torch.Tensor], Scale],
    tuple[torch.Tensor, list[torch.Tensor]],
]


def _number(
    caller: str, name: str, value: object, default: float, check: Callable[[str, object], float]
) -> float:
    return default if value is None else check(f"{caller} {name}", value)


def _decay(name: str, value: object) -> float:
    """A decay rate in [0, 1), as MATLAB's gradDecay, sqGradDecay."""
    number = _validate.real(name, value)
    if not 0 <= number < 1:
        raise DLFormatError(f"{name} must be a number in [0, 1); got {_validate.describe(value)}")
    return number


def _momentum(name: str, value: object) -> float:
    number = _validate.real(name, value)
    if not 0 <= number <= 1:
        raise DLFormatError(f"{name} must be a number in [0, 1]; got {_validate.describe(value)}")
    return number


def sgdm_step(alpha: float, gamma: float) -> Step:
    """MathWorks' SGDM step, its velocity carrying the learning rate: ``v ← γv − α·g``, ``w ← w + v``."""

    def step(w: torch.Tensor, g: torch.Tensor, states: list[torch.Tensor], factor: Scale) -> Any:
        (v,) = states
        v = gamma * v - (alpha * factor) * g
        return w + v, [v]

    return step


def adam_step(alpha: float, beta1: float, beta2: float, eps: float, iteration: int) -> Step:
    """MathWorks' Adam step at ``iteration`` (from 1), the bias corrections folded into the step."""
    correction = math.sqrt(1 - beta2**iteration) / (1 - beta1**iteration)

    def step(w: torch.Tensor, g: torch.Tensor, states: list[torch.Tensor], factor: Scale) -> Any:
        m, v = states
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        return w - (alpha * factor * correction) * m / (v.sqrt() + eps), [m, v]

    return step


def rmsprop_step(alpha: float, beta2: float, eps: float) -> Step:
    """MathWorks' RMSProp step: ``v ← β₂v + (1−β₂)g²``, ``w ← w − α·g/(√v + ε)``."""

    def step(w: torch.Tensor, g: torch.Tensor, states: list[torch.Tensor], factor: Scale) -> Any:
        (v,) = states
        v = beta2 * v + (1 - beta2) * g * g
        return w - (alpha * factor) * g / (v.sqrt() + eps), [v]

    return step


def stepped(
    step: Step,
    parameters: Sequence[torch.Tensor],
    gradients: Sequence[torch.Tensor],
    states: list[list[torch.Tensor]],
    factors: Sequence[Scale],
) -> None:
    """``step`` on each of a network's parameters in place, ``states`` (one list per parameter,
    started as zeros in the working dtype) replaced by the new ones: the update functions' per-parameter
    work without their argument checks and tables, for trainnet, whose options were checked once."""
    with torch.no_grad():
        for index, (parameter, gradient, factor) in enumerate(
            zip(parameters, gradients, factors, strict=True)
        ):
            dtype = working_dtype(parameter.dtype, gradient.dtype)
            updated, states[index] = step(
                parameter.to(dtype), gradient.to(device=parameter.device, dtype=dtype), states[index], factor
            )
            parameter.copy_(updated)


# trainnet's form of the three steps: every parameter at once, in place, with torch's multi-tensor
# ``_foreach`` operations (those torch.optim's foreach implementations use). Each runs the same
# operations in the same order as sgdm_step, adam_step and rmsprop_step above, so the values are
# the same bit for bit (tests/training/test_solvers.py), without a Python round per parameter,
# which costs more than the arithmetic on a small network. ``scales`` is each parameter's
# learning rate (the rate times its learn-rate factor, both numbers); see :func:`together`.


def sgdm_steps(
    w: list[torch.Tensor],
    g: list[torch.Tensor],
    states: list[list[torch.Tensor]],
    scales: list[float],
    gamma: float,
) -> None:
    """:func:`sgdm_step` on lists of parameters, their gradients and velocities, in place."""
    (v,) = states
    torch._foreach_mul_(v, gamma)
    torch._foreach_sub_(v, torch._foreach_mul(g, scales))
    torch._foreach_add_(w, v)


def adam_steps(
    w: list[torch.Tensor],
    g: list[torch.Tensor],
    states: list[list[torch.Tensor]],
    scales: list[float],
    beta1: float,
    beta2: float,
    eps: float,
    iteration: int,
) -> None:
    """:func:`adam_step` on lists of parameters, their gradients and moments, in place."""
    m, v = states
    correction = math.sqrt(1 - beta2**iteration) / (1 - beta1**iteration)
    torch._foreach_mul_(m, beta1)
    torch._foreach_add_(m, torch._foreach_mul(g, 1 - beta1))
    _average_squares(v, g, beta2)
    _descend(w, m, v, [scale * correction for scale in scales], eps)


def rmsprop_steps(
    w: list[torch.Tensor],
    g: list[torch.Tensor],
    states: list[list[torch.Tensor]],
    scales: list[float],
    beta2: float,
    eps: float,
) -> None:
    """:func:`rmsprop_step` on lists of parameters, their gradients and squared averages, in place."""
    (v,) = states
    _average_squares(v, g, beta2)
    _descend(w, g, v, scales, eps)


def _average_squares(v: list[torch.Tensor], g: list[torch.Tensor], beta2: float) -> None:
    """``v ← β₂v + (1−β₂)g²`` for each parameter, in place (Adam's and RMSProp's)."""
    squares = torch._foreach_mul(g, 1 - beta2)
    torch._foreach_mul_(squares, g)
    torch._foreach_mul_(v, beta2)
    torch._foreach_add_(v, squares)


def _descend(
    w: list[torch.Tensor],
    direction: list[torch.Tensor],
    v: list[torch.Tensor],
    scales: list[float],
    eps: float,
) -> None:
    """``w ← w − scale·direction / (√v + ε)`` for each parameter, in place."""
    steps = torch._foreach_mul(direction, scales)
    torch._foreach_div_(steps, torch._foreach_add(torch._foreach_sqrt(v), eps))
    torch._foreach_sub_(w, steps)


# torch's in-place multi-tensor multiply by a number (``_foreach_mul_``) rounds the number to a
# float16 or bfloat16 tensor's dtype first (momentum 0.9 becomes 0.8984375 in bfloat16; seen on
# CPU, torch 2.13), where the per-parameter steps multiply at float precision: parameters of those
# dtypes take stepped (tests/training/test_trainer.py compares trainnet's solver with the update
# functions in each floating dtype)
_EXACT_DTYPES = (torch.float32, torch.float64)


def together(
    parameters: Sequence[torch.Tensor], gradients: Sequence[torch.Tensor], factors: Sequence[Scale]
) -> bool:
    """Whether the ``_steps`` forms apply: every factor a number (not per-gate rows), every
    parameter float32 or float64, and every gradient of its parameter's dtype and device
    (otherwise :func:`stepped` converts each)."""
    return all(
        not isinstance(factor, torch.Tensor)
        and p.dtype in _EXACT_DTYPES
        and g.dtype == p.dtype
        and g.device == p.device
        for p, g, factor in zip(parameters, gradients, factors, strict=True)
    )


def _update(
    caller: str, params: Any, grad: Any, states: Sequence[Any], names: Sequence[str], step: Step
) -> tuple[Any, ...]:
    """Run ``step`` over every parameter; returns (params, *states) in the callers' containers."""
    factors: list[Scale]
    if isinstance(params, DLNetwork):
        keys, leaves, factors = _parameters.network_rows(params)
        gradients = _parameters.matched(caller, "grad", grad, keys)
        given = [
            None if _parameters.is_empty(state) else _parameters.matched(caller, name, state, keys)
            for state, name in zip(states, names, strict=True)
        ]
    else:
        leaves, structure = _parameters.flatten(caller, "the parameters", params)
        factors = [1.0] * len(leaves)
        gradients, arrangement = _parameters.flatten(caller, "grad", grad)
        _parameters.same_structure(caller, "grad", structure, arrangement, "the parameters")
        given = []
        for state, name in zip(states, names, strict=True):
            if _parameters.is_empty(state):
                given.append(None)
                continue
            values, arrangement = _parameters.flatten(caller, name, state)
            _parameters.same_structure(caller, name, structure, arrangement, "the parameters")
            given.append(values)
    new_parameters: list[torch.Tensor] = []
    new_states: list[list[torch.Tensor]] = [[] for _ in names]
    with torch.no_grad():
        for index, (leaf, gradient, factor) in enumerate(zip(leaves, gradients, factors, strict=True)):
            where = keys[index] if isinstance(params, DLNetwork) else structure.where(index)
            parameter = _parameters.as_tensor(leaf)
            g = _parameters.as_tensor(gradient)
            if not isinstance(g, torch.Tensor) or tuple(g.shape) != tuple(parameter.shape):
                raise DLFormatError(
                    f"{caller}: the gradient of {_shown(where)} has size {_validate.matlab_size(g.shape)}; "
                    f"the parameter has size {_validate.matlab_size(parameter.shape)}"
                )
            dtype = working_dtype(parameter.dtype, g.dtype)
            current = []
            for state_values, name in zip(given, names, strict=True):
                if state_values is None:
                    current.append(torch.zeros(parameter.shape, dtype=dtype, device=parameter.device))
                    continue
                state = _parameters.as_tensor(state_values[index])
                if tuple(state.shape) != tuple(parameter.shape):
                    raise DLFormatError(
                        f"{caller}: {name} of {_shown(where)} has size {_validate.matlab_size(state.shape)}; "
                        f"the parameter has size {_validate.matlab_size(parameter.shape)}"
                    )
                current.append(state.to(device=parameter.device, dtype=dtype))
            updated, updated_states = step(
                parameter.to(dtype), g.to(device=parameter.device, dtype=dtype), current, factor
            )
            new_parameters.append(updated.to(parameter.dtype))
            for collected, state in zip(new_states, updated_states, strict=True):
                collected.append(state)
        if isinstance(params, DLNetwork):
            for leaf, value in zip(leaves, new_parameters, strict=True):
                leaf.copy_(value)
            return (params, *(_parameters.network_table(keys, values) for values in new_states))
    templates = leaves
    results = [
        _parameters.rebuild(
            structure, [_parameters.like(t, v) for t, v in zip(templates, new_parameters, strict=True)]
        )
    ]
    results += [
        _parameters.rebuild(
            structure, [_parameters.like(t, v) for t, v in zip(templates, values, strict=True)]
        )
        for values in new_states
    ]
    return tuple(results)


def _shown(where: Any) -> str:
    return "/".join(where) if isinstance(where, tuple) else where


def _iteration(value: object) -> int:
    return _validate.positive_integer("adamupdate iteration", value)


def adamupdate(
    net_or_params: Any,
    grad: Any,
    averageGrad: Any,
    averageSqGrad: Any,
    iteration: int,
    learnRate: float | None = None,
    gradDecay: float | None = None,
    sqGradDecay: float | None = None,
    epsilon: float | None = None,
) -> tuple[Any, Any, Any]:
    """MATLAB's ``[net, avgGrad, avgSqGrad] = adamupdate(net, grad, avgGrad, avgSqGrad, iteration)``: Adam.

    Optional, positional as in MATLAB: ``learnRate`` (0.001), ``gradDecay`` β₁ (0.9),
    ``sqGradDecay`` β₂ (0.999), ``epsilon`` ε (1e-8); ``None`` takes the default. ``averageGrad`` and
    ``averageSqGrad`` are ``[]`` (or ``None``) on the first call; ``iteration`` starts at 1 and goes
    up by 1 each call. MathWorks' update, with the bias corrections folded into the step::

        m ← β₁m + (1−β₁)g        v ← β₂v + (1−β₂)g²
        w ← w − α·√(1−β₂ᵗ)/(1−β₁ᵗ) · m/(√v + ε)

    ``α`` is ``learnRate`` times the parameter's learn-rate factor for a network. A network is
    updated in place and returned; other parameters come back as new values.

    Examples:
        >>> w, g = torch.tensor([1.0, 2.0]), torch.tensor([0.5, -0.5])
        >>> w, m, v = dlf.adamupdate(w, g, [], [], 1, 0.1)
        >>> [round(x, 4) for x in w.tolist()]
        [0.9, 2.1]
    """
    step_number = _iteration(iteration)
    alpha = _number("adamupdate", "learnRate", learnRate, 0.001, _validate.positive)
    beta1 = _number("adamupdate", "gradDecay", gradDecay, 0.9, _decay)
    beta2 = _number("adamupdate", "sqGradDecay", sqGradDecay, 0.999, _decay)
    eps = _number("adamupdate", "epsilon", epsilon, 1e-8, _validate.positive)
    params, m, v = _update(
        "adamupdate",
        net_or_params,
        grad,
        (averageGrad, averageSqGrad),
        ("averageGrad", "averageSqGrad"),
        adam_step(alpha, beta1, beta2, eps, step_number),
    )
    return params, m, v


def sgdmupdate(
    net_or_params: Any, grad: Any, vel: Any, learnRate: float | None = None, momentum: float | None = None
) -> tuple[Any, Any]:
    """MATLAB's ``[net, vel] = sgdmupdate(net, grad, vel)``: stochastic gradient descent with momentum.

    Optional: ``learnRate`` (0.01), ``momentum`` γ (0.9). ``vel`` is ``[]`` on the first call.
    MathWorks' update, whose velocity carries the learning rate::

        v ← γv − α·g        w ← w + v

    so a learning rate that changes between calls scales only the new gradient, not the velocity
    already built up (``torch.optim.SGD`` keeps ``v ← γv + g`` and steps ``w ← w − α·v``).

    Examples:
        >>> w, vel = dlf.sgdmupdate(torch.tensor([1.0]), torch.tensor([2.0]), [], 0.1)
        >>> [round(x, 4) for x in w.tolist()], [round(x, 4) for x in vel.tolist()]
        ([0.8], [-0.2])
    """
    alpha = _number("sgdmupdate", "learnRate", learnRate, 0.01, _validate.positive)
    gamma = _number("sgdmupdate", "momentum", momentum, 0.9, _momentum)
    params, v = _update("sgdmupdate", net_or_params, grad, (vel,), ("vel",), sgdm_step(alpha, gamma))
    return params, v


def rmspropupdate(
    net_or_params: Any,
    grad: Any,
    averageSqGrad: Any,
    learnRate: float | None = None,
    sqGradDecay: float | None = None,
    epsilon: float | None = None,
) -> tuple[Any, Any]:
    """MATLAB's ``[net, averageSqGrad] = rmspropupdate(net, grad, averageSqGrad)``: RMSProp.

    Optional: ``learnRate`` (0.001), ``sqGradDecay`` β₂ (0.9), ``epsilon`` ε (1e-8).
    ``averageSqGrad`` is ``[]`` on the first call. MathWorks' update::

        v ← β₂v + (1−β₂)g²        w ← w − α·g/(√v + ε)

    Examples:
        >>> w, v = dlf.rmspropupdate(torch.tensor([1.0]), torch.tensor([2.0]), [], 0.01)
        >>> round(w.item(), 4), round(v.item(), 4)
        (0.9684, 0.4)
    """
    alpha = _number("rmspropupdate", "learnRate", learnRate, 0.001, _validate.positive)
    beta2 = _number("rmspropupdate", "sqGradDecay", sqGradDecay, 0.9, _decay)
    eps = _number("rmspropupdate", "epsilon", epsilon, 1e-8, _validate.positive)
    params, v = _update(
        "rmspropupdate",
        net_or_params,
        grad,
        (averageSqGrad,),
        ("averageSqGrad",),
        rmsprop_step(alpha, beta2, eps),
    )
    return params, v
