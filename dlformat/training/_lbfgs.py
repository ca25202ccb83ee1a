"""MATLAB's L-BFGS solver for custom training loops: ``lbfgsupdate`` and ``lbfgsState`` (R2023a).

One call of :func:`lbfgsupdate` is one L-BFGS iteration: the search direction from the two-loop
recursion over the stored step and gradient-difference pairs, then a line search along it that
calls the loss function at trial points, then the new pair stored. The state carries the loss
and gradients at the current parameters, so each call costs only the line search's evaluations
(the first call also evaluates the starting point).

MathWorks' pages (lbfgsupdate, lbfgsState, TrainingOptionsLBFGS) give the update
``W ← W − η·B⁻¹∇J(W)``, the history of ``HistorySize`` pairs, the initial inverse Hessian
``λ·I`` with ``λ₀ = InitialInverseHessianFactor``, and the three line-search methods by the
conditions they satisfy. They do not give the line searches' constants or their step rules;
those here are the textbook ones (Nocedal & Wright): sufficient-decrease constant ``c₁ = 1e-4``,
curvature constant ``c₂ = 0.9``, a first trial step of 1, halving for backtracking, and
bracketing with bisection (doubling while no upper bound is known) for the Wolfe searches.
See docs/training_loop.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .. import _validate
from .._display import Table
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..networks import DLNetwork
from . import _parameters

__all__ = ["LBFGS_EXCLUDED", "LBFGS_OPTIONS", "LBFGSState", "lbfgsState", "lbfgsupdate"]

LINE_SEARCH_METHODS = ("weak-wolfe", "strong-wolfe", "backtracking")
SUFFICIENT_DECREASE = 1e-4  # c1 of the Armijo condition
CURVATURE = 0.9  # c2 of the Wolfe curvature conditions


def _no_initial_step_size(name: str, value: object) -> None:
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return None
    raise DLFormatError(
        f"{name}: an initial step size is not ported (MathWorks' rule for it is not settled here); leave "
        "it [] to start from InitialInverseHessianFactor"
    )


def _line_search_method(name: str, value: object) -> str:
    return _validate.choice(name, value, LINE_SEARCH_METHODS)


def _positive_finite(name: str, value: object) -> float:
    number = _validate.positive(name, value)
    if not math.isfinite(number):
        raise DLFormatError(f"{name} must be a finite positive number; got {number}")
    return number


# trainingOptions("lbfgs")'s own options (name -> (default, check)), in MATLAB's display order
# (MathWorks' TrainingOptionsLBFGS page); trainnet trains with them through lbfgsupdate
LBFGS_OPTIONS: dict[str, tuple[Any, Callable[[str, Any], Any]]] = {
    "MaxIterations": (1000, _validate.positive_integer),
    "LineSearchMethod": ("weak-wolfe", _line_search_method),
    "HistorySize": (10, _validate.positive_integer),
    "InitialInverseHessianFactor": (1.0, _positive_finite),
    "InitialStepSize": (None, _no_initial_step_size),
    "MaxNumLineSearchIterations": (20, _validate.positive_integer),
    "GradientTolerance": (1e-5, _positive_finite),
    "StepTolerance": (1e-5, _positive_finite),
}
# the mini-batch solvers' options an L-BFGS run has no use for: it takes the whole data set as
# one batch each iteration, with the step from the line search
LBFGS_EXCLUDED = (
    "InitialLearnRate",
    "MaxEpochs",
    "LearnRateSchedule",
    "LearnRateDropFactor",
    "LearnRateDropPeriod",
    "MiniBatchSize",
    "Shuffle",
    "L2Regularization",
    "GradientThresholdMethod",
    "GradientThreshold",
)

_READ_ONLY = (
    "HistorySize",
    "InitialInverseHessianFactor",
    "InverseHessianFactor",
    "StepHistory",
    "GradientsDifferenceHistory",
    "HistoryIndices",
    "Iteration",
    "Loss",
    "Gradients",
    "AdditionalLossFunctionOutputs",
    "GradientsNorm",
    "StepNorm",
    "LineSearchStatus",
    "LineSearchMethod",
    "MaxNumLineSearchIterations",
)


class LBFGSState:
    """MATLAB's ``lbfgsState`` object: the L-BFGS history and the last iteration's results.

    Made by :func:`lbfgsState`; every property is read-only (``lbfgsupdate`` returns a new
    state). ``StepHistory`` and ``GradientsDifferenceHistory`` hold the stored pairs, oldest
    first, each in the container the parameters come in; ``HistoryIndices`` the iterations that
    made them. ``Loss``, ``Gradients``, ``GradientsNorm``, ``StepNorm`` are those of the last
    iteration (``Loss`` and ``Gradients`` at the updated parameters); ``LineSearchStatus`` is
    ``""`` before the first update, then ``"completed"`` or ``"failed"``.
    """

    HistorySize: int
    InitialInverseHessianFactor: float
    InverseHessianFactor: float
    StepHistory: list[Any]
    GradientsDifferenceHistory: list[Any]
    HistoryIndices: list[int]
    Iteration: int
    Loss: Any
    Gradients: Any
    AdditionalLossFunctionOutputs: tuple[Any, ...]
    GradientsNorm: float | None
    StepNorm: float | None
    LineSearchStatus: str
    LineSearchMethod: str
    MaxNumLineSearchIterations: int

    def __init__(self, HistorySize: Any = 10, InitialInverseHessianFactor: Any = 1) -> None:
        size = _validate.positive_integer("lbfgsState HistorySize", HistorySize)
        factor = _validate.positive("lbfgsState InitialInverseHessianFactor", InitialInverseHessianFactor)
        if not math.isfinite(factor):
            raise DLFormatError(f"lbfgsState InitialInverseHessianFactor must be finite; got {factor}")
        self._set(
            HistorySize=size,
            InitialInverseHessianFactor=factor,
            InverseHessianFactor=factor,
            StepHistory=[],
            GradientsDifferenceHistory=[],
            HistoryIndices=[],
            Iteration=0,
            Loss=None,
            Gradients=None,
            AdditionalLossFunctionOutputs=(),
            GradientsNorm=None,
            StepNorm=None,
            LineSearchStatus="",
            LineSearchMethod="",
            MaxNumLineSearchIterations=0,
        )

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _updated(self, **values: Any) -> LBFGSState:
        """A copy with ``values`` changed (MATLAB's value semantics: the old state stays)."""
        new = LBFGSState.__new__(LBFGSState)
        new._set(**{name: getattr(self, name) for name in _READ_ONLY})
        new._set(**values)
        return new

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _READ_ONLY:
            raise DLFormatError(
                f"lbfgsState: {name} is read-only; set HistorySize and InitialInverseHessianFactor when "
                "creating the state, the rest is set by lbfgsupdate"
            )
        raise DLFormatError(
            f"lbfgsState has no property '{name}'; its properties are: {', '.join(_READ_ONLY)}"
        )

    def __repr__(self) -> str:
        width = max(len(name) for name in _READ_ONLY)
        lines = ["  LBFGSState with properties:", ""]
        for name in _READ_ONLY:
            lines.append(f"  {name:>{width + 2}}: {_shown(getattr(self, name))}")
        return "\n".join(lines)


def _shown(value: Any) -> str:
    if value is None:
        return "[]"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        if value and all(isinstance(item, int) for item in value):
            return "[" + " ".join(str(item) for item in value) + "]"
        return f"{{1×{len(value)} cell}}" if value else "{}"
    if isinstance(value, tuple):
        return f"{{1×{len(value)} cell}}" if value else "{}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, DLArray) and value._data.numel() == 1:
        return f"1×1 dlarray ({float(value._data):.4g})"
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return f"{float(value):.4g}"
    if isinstance(value, (DLArray, torch.Tensor, Table, dict)):
        return f"[{type(value).__name__}]"
    return str(value)


def lbfgsState(*pairs: Any, **options: Any) -> LBFGSState:
    """MATLAB's ``solverState = lbfgsState(HistorySize=10, InitialInverseHessianFactor=1)``.

    Examples:
        >>> state = dlf.lbfgsState(HistorySize=5)
        >>> state.HistorySize, state.InitialInverseHessianFactor, state.Iteration, state.LineSearchStatus
        (5, 1.0, 0, '')
    """
    given = _name_value("lbfgsState", pairs, options, ("HistorySize", "InitialInverseHessianFactor"))
    return LBFGSState(**given)


def _name_value(
    caller: str, pairs: tuple[Any, ...], options: dict[str, Any], names: tuple[str, ...]
) -> dict[str, Any]:
    """``'Name', value`` pairs and ``Name=value`` options matched to ``names`` in any case."""
    if len(pairs) % 2 or not all(isinstance(name, str) for name in pairs[::2]):
        raise DLFormatError(f"{caller} takes options as Name=Value or as 'Name', value pairs")
    lowered = {name.lower(): name for name in names}
    given: dict[str, Any] = {}
    for key, value in [*zip(pairs[::2], pairs[1::2], strict=True), *options.items()]:
        name = lowered.get(key.lower())
        if name is None:
            raise DLFormatError(f"{caller}: '{key}' is not an option; the options are: {', '.join(names)}")
        if name in given:
            raise DLFormatError(f"{caller} got option '{name}' twice")
        given[name] = value
    return given


@dataclass
class _Point:
    """The loss function's results at one point: loss, gradients (flat list), extra outputs."""

    loss: Any
    value: float
    gradients: list[torch.Tensor]
    extras: tuple[Any, ...]


class _Problem:
    """The parameters as a flat list of tensors, and the loss function evaluated at any point.

    For a network the trial values are written into its learnables (the network is updated in
    place, as the other solver functions do); other containers are rebuilt around the values.
    """

    def __init__(self, params: Any, loss_fcn: Callable[..., Any], outputs: int) -> None:
        self.params = params
        self.loss_fcn = loss_fcn
        self.outputs = outputs
        if isinstance(params, DLNetwork):
            self.keys, self.leaves, factors = _parameters.network_rows(params)
            self.structure = None
            scaled = _parameters.scaled_rows(self.keys, factors)
            if scaled:  # how MATLAB's L-BFGS treats them is not on its pages: no silent guess
                raise DLFormatError(
                    f"lbfgsupdate: learn-rate factors other than 1 ({', '.join(scaled)}) are not supported "
                    "with L-BFGS (MathWorks' pages do not say how it applies them); set them to 1, or pass "
                    "the learnables to update as a container of dlarrays"
                )
        else:
            self.leaves, self.structure = _parameters.flatten("lbfgsupdate", "the parameters", params)
        self.start = [_parameters.as_tensor(leaf).detach().clone() for leaf in self.leaves]
        for data in self.start:
            if not data.is_floating_point():
                raise DLFormatError(f"lbfgsupdate: the parameters must be floating; got dtype {data.dtype}")

    def container(self, values: list[torch.Tensor]) -> Any:
        """The parameters holding ``values``: the network (written in place) or a new container."""
        if isinstance(self.params, DLNetwork):
            with torch.no_grad():
                for leaf, value in zip(self.leaves, values, strict=True):
                    leaf.copy_(value)
            return self.params
        assert self.structure is not None
        return _parameters.rebuild(
            self.structure, [_parameters.like(t, v) for t, v in zip(self.leaves, values, strict=True)]
        )

    def flat(self, name: str, value: Any) -> list[torch.Tensor]:
        """``value`` (arranged as the parameters) as a list of tensors of the parameters' sizes."""
        if isinstance(self.params, DLNetwork):
            values = _parameters.matched("lbfgsupdate", name, value, self.keys)
        else:
            values, arrangement = _parameters.flatten("lbfgsupdate", name, value)
            assert self.structure is not None
            _parameters.same_structure("lbfgsupdate", name, self.structure, arrangement, "the parameters")
        tensors = []
        for index, (item, start) in enumerate(zip(values, self.start, strict=True)):
            data = _parameters.as_tensor(item)
            if tuple(data.shape) != tuple(start.shape):
                where = "/".join(self.keys[index]) if self.structure is None else self.structure.where(index)
                raise DLFormatError(
                    f"lbfgsupdate: {name} of {where} has size {_validate.matlab_size(data.shape)}; the "
                    f"parameter has size {_validate.matlab_size(start.shape)}"
                )
            tensors.append(data.detach().to(device=start.device, dtype=start.dtype))
        return tensors

    def evaluate(self, values: list[torch.Tensor]) -> _Point:
        result = self.loss_fcn(self.container(values))
        if not isinstance(result, tuple) or len(result) != self.outputs:
            got = f"{len(result)} outputs" if isinstance(result, tuple) else "one output"
            raise DLFormatError(
                f"lbfgsupdate: the loss function must return {self.outputs} outputs (loss, gradients"
                f"{', and the others NumLossFunctionOutputs counts' if self.outputs > 2 else ''}); got {got}"
            )
        loss, gradients, *extras = result
        data = loss._data if isinstance(loss, DLArray) else loss
        if not isinstance(data, (torch.Tensor, float, int)) or (
            isinstance(data, torch.Tensor) and data.numel() != 1
        ):
            raise DLFormatError(
                f"lbfgsupdate: the loss function's first output must be a scalar loss; got "
                f"{_validate.describe(loss)}"
            )
        if isinstance(loss, DLArray):
            loss = DLArray._wrap(loss._data.detach(), loss._fmt)
        elif isinstance(loss, torch.Tensor):
            loss = loss.detach()
        return _Point(loss, _loss_value(loss), self.flat("the gradients", gradients), tuple(extras))

    def arranged(self, values: list[torch.Tensor]) -> Any:
        """``values`` in the parameters' container, without touching a network (state histories)."""
        if isinstance(self.params, DLNetwork):
            return _parameters.network_table(self.keys, [v.clone() for v in values])
        assert self.structure is not None
        return _parameters.rebuild(
            self.structure, [_parameters.like(t, v.clone()) for t, v in zip(self.leaves, values, strict=True)]
        )


def _loss_value(loss: Any) -> float:
    return float(_parameters.as_tensor(loss)) if isinstance(loss, (DLArray, torch.Tensor)) else float(loss)


def _dot(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return float(sum((x * y).sum() for x, y in zip(a, b, strict=True)))


def _axpy(alpha: float, x: list[torch.Tensor], y: list[torch.Tensor]) -> list[torch.Tensor]:
    """``alpha·x + y`` for lists of tensors."""
    return [alpha * a + b for a, b in zip(x, y, strict=True)]


def _direction(
    gradients: list[torch.Tensor],
    steps: list[list[torch.Tensor]],
    differences: list[list[torch.Tensor]],
    factor: float,
) -> list[torch.Tensor]:
    """``−B⁻¹g`` by the two-loop recursion over the pairs (oldest first), ``B₀⁻¹ = factor·I``."""
    q = [g.clone() for g in gradients]
    alphas = []
    for s, y in zip(reversed(steps), reversed(differences), strict=True):
        rho = 1.0 / _dot(y, s)
        alpha = rho * _dot(s, q)
        q = _axpy(-alpha, y, q)
        alphas.append((rho, alpha))
    r = [factor * v for v in q]
    for (s, y), (rho, alpha) in zip(zip(steps, differences, strict=True), reversed(alphas), strict=True):
        beta = rho * _dot(y, r)
        r = _axpy(alpha - beta, s, r)
    return [-v for v in r]


def _line_search(
    problem: _Problem, start: _Point, direction: list[torch.Tensor], method: str, limit: int
) -> tuple[float, _Point | None]:
    """The step ``η`` along ``direction`` and the point there, or ``(0, None)`` when none of
    ``limit`` trials meets the method's conditions."""
    slope = _dot(start.gradients, direction)
    if not slope < 0:  # not a descent direction (zero gradient, or a broken history)
        return 0.0, None
    low, high, step = 0.0, math.inf, 1.0
    for _ in range(limit):
        point = problem.evaluate(_axpy(step, direction, problem.start))
        decreased = point.value <= start.value + SUFFICIENT_DECREASE * step * slope
        if method == "backtracking":
            if decreased:
                return step, point
            step /= 2
            continue
        new_slope = _dot(point.gradients, direction)
        if not decreased or (method == "strong-wolfe" and new_slope > CURVATURE * abs(slope)):
            high = step  # too far: past the minimum along the line
        elif new_slope < CURVATURE * slope:
            low = step  # still descending steeply: go further
        else:
            return step, point
        step = (low + high) / 2 if math.isfinite(high) else 2 * low
    return 0.0, None


def lbfgsupdate(
    net_or_params: Any, lossFcn: Callable[..., Any], solverState: Any, *pairs: Any, **options: Any
) -> tuple[Any, LBFGSState]:
    """MATLAB's ``[netUpdated, solverState] = lbfgsupdate(net, lossFcn, solverState)``: one L-BFGS step.

    ``net_or_params`` is a ``dlnetwork`` (updated in place and returned) or parameters in a
    dlarray, tuple, list, dict or Learnables table (returned as a new container).
    ``lossFcn(params)`` returns ``(loss, gradients)`` with the gradients arranged as the
    parameters (``net.Learnables``-style table for a network), usually by
    ``lambda net: dlf.dlfeval(modelLoss, net, X, T)``; it is called at the trial points of the
    line search. ``solverState`` is ``[]``/``None`` on the first call (a default
    :func:`lbfgsState`) or the state the previous call returned.

    Options (``Name=Value``): ``LineSearchMethod`` ``"weak-wolfe"`` (default),
    ``"strong-wolfe"`` or ``"backtracking"``; ``MaxNumLineSearchIterations`` (20), the most
    loss evaluations of one line search; ``NumLossFunctionOutputs`` (2): more than 2 keeps the
    loss function's extra outputs, at the accepted point, in the state's
    ``AdditionalLossFunctionOutputs``.

    When the line search fails, the parameters stay as they were and the state's
    ``LineSearchStatus`` is ``"failed"`` (MathWorks' page does not say what MATLAB does then).

    Examples:
        >>> def loss_fcn(w):  # f(w) = sum((w - 3)^2)
        ...     return float(((w - 3) ** 2).sum()), 2 * (w - 3)
        >>> w, state = dlf.lbfgsupdate(torch.zeros(2, dtype=torch.float64), loss_fcn, None)
        >>> w.tolist(), state.LineSearchStatus
        ([3.0, 3.0], 'completed')
    """
    given = _name_value(
        "lbfgsupdate",
        pairs,
        options,
        ("LineSearchMethod", "MaxNumLineSearchIterations", "NumLossFunctionOutputs"),
    )
    method = _validate.choice(
        "lbfgsupdate LineSearchMethod", given.get("LineSearchMethod", "weak-wolfe"), LINE_SEARCH_METHODS
    )
    limit = _validate.positive_integer(
        "lbfgsupdate MaxNumLineSearchIterations", given.get("MaxNumLineSearchIterations", 20)
    )
    outputs = _validate.integer(
        "lbfgsupdate NumLossFunctionOutputs", given.get("NumLossFunctionOutputs", 2), minimum=2
    )
    if not callable(lossFcn):
        raise DLFormatError(
            f"lbfgsupdate needs the loss function as its second argument (a function returning loss and "
            f"gradients); got {_validate.describe(lossFcn)}"
        )
    if _parameters.is_empty(solverState):
        state = LBFGSState()
    elif isinstance(solverState, LBFGSState):
        state = solverState
    else:
        raise DLFormatError(
            f"lbfgsupdate: solverState must be [] (None) on the first call or the lbfgsState the previous "
            f"call returned; got {_validate.describe(solverState)}"
        )
    problem = _Problem(net_or_params, lossFcn, outputs)
    steps = [problem.flat("StepHistory", item) for item in state.StepHistory]
    differences = [
        problem.flat("GradientsDifferenceHistory", item) for item in state.GradientsDifferenceHistory
    ]
    if state.Gradients is None:
        current = problem.evaluate(problem.start)
    else:  # the previous call's loss and gradients are those at these parameters
        current = _Point(
            state.Loss,
            _loss_value(state.Loss),
            problem.flat("the state's Gradients", state.Gradients),
            state.AdditionalLossFunctionOutputs,
        )
    direction = _direction(current.gradients, steps, differences, state.InverseHessianFactor)
    try:
        step, point = _line_search(problem, current, direction, method, limit)
    except BaseException:
        problem.container(problem.start)  # a network holds a trial point: an error changes nothing
        raise
    iteration = state.Iteration + 1
    common = {"Iteration": iteration, "LineSearchMethod": method, "MaxNumLineSearchIterations": limit}
    if point is None:
        updated = problem.container(problem.start)
        return updated, state._updated(
            **common,
            Loss=current.loss,
            Gradients=problem.arranged(current.gradients),
            AdditionalLossFunctionOutputs=current.extras,
            GradientsNorm=math.sqrt(_dot(current.gradients, current.gradients)),
            StepNorm=0.0,
            LineSearchStatus="failed",
        )
    s = [step * d for d in direction]
    y = [new - old for new, old in zip(point.gradients, current.gradients, strict=True)]
    curvature = _dot(s, y)
    factor = state.InverseHessianFactor
    stored_steps, stored_differences, indices = (
        list(state.StepHistory),
        list(state.GradientsDifferenceHistory),
        list(state.HistoryIndices),
    )
    if curvature > 0:  # a pair without positive curvature would break the positive definite B⁻¹
        stored_steps.append(problem.arranged(s))
        stored_differences.append(problem.arranged(y))
        indices.append(iteration)
        factor = curvature / _dot(y, y)
        del (
            stored_steps[: -state.HistorySize],
            stored_differences[: -state.HistorySize],
            indices[: -state.HistorySize],
        )
    updated = problem.container(_axpy(1.0, s, problem.start))
    return updated, state._updated(
        **common,
        InverseHessianFactor=factor,
        StepHistory=stored_steps,
        GradientsDifferenceHistory=stored_differences,
        HistoryIndices=indices,
        Loss=point.loss,
        Gradients=problem.arranged(point.gradients),
        AdditionalLossFunctionOutputs=point.extras,
        GradientsNorm=math.sqrt(_dot(point.gradients, point.gradients)),
        StepNorm=math.sqrt(_dot(s, s)),
        LineSearchStatus="completed",
    )
