"""``trainnet`` with ``trainingOptions("lm")``: full-batch Levenberg–Marquardt for regression.

Sources (docs/training.md): MathWorks' TrainingOptionsLM page (a full-batch solver for regression
networks with few learnables, interpolating between gradient descent and Gauss–Newton with a
Jacobian outer product; its options and defaults), and MathWorks' ``trainlm`` page, whose
Algorithms section states MathWorks' LM iteration with the same parameters (``mu``, ``mu_inc``,
``mu_dec``, ``mu_max``, with TrainingOptionsLM's defaults 0.001, 10, 0.1, 1e10):

- ``J`` is the Jacobian of all the errors ``E = Y − T`` (every element of the network's output on
  the whole training set, as a column) with respect to all the learnables;
- the step is ``δ = −(JᵀJ + μI) \\ JᵀE``;
- ``μ`` is multiplied by ``DampingIncreaseFactor`` until the step lowers the loss; the step is
  then taken and ``μ`` multiplied by ``DampingDecreaseFactor`` (the next iteration starts there);
- training stops when ``μ`` exceeds ``MaxDampingFactor`` (no step lowered the loss), when the
  gradient norm is at most ``GradientTolerance``, when the step norm is at most
  ``StepTolerance``, after ``MaxIterations``, or by the validation criterion.

Only the ``"mse"`` loss (``"mean-squared-error"``, ``"l2loss"``) is taken: it is a scaled sum of
the squared errors, which is what the Gauss–Newton product ``JᵀJ`` approximates the curvature of
(``trainlm`` too requires a mean or sum of squared errors). The damped system is solved in float64
(``JᵀJ`` squares the Jacobian's condition number); the step is taken in the network's dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .._dlarray import DLArray
from .._errors import DLFormatError
from ..functional._losses import _targets
from ..networks import DLNetwork
from . import _parameters
from ._data import Data, as_arguments
from ._lbfgs_training import FullBatch, run_full_batch
from ._metrics import Tracked
from ._options import TrainingOptions
from ._trainer import _NAMED_LOSSES, Loss, _Outcome, _Validation

__all__ = ["STOP_REASONS", "train_lm"]

# MATLAB's wording for these is not settled from MathWorks' pages (see docs/training.md)
STOP_REASONS = {
    "iterations": "Max iterations completed",
    "gradient": "Met gradient tolerance",
    "step": "Met step tolerance",
    "damping": "Max damping factor reached",
}


@dataclass
class _Point:
    """The network at its current learnables: loss, errors, their Jacobian, the loss gradient."""

    loss: float
    errors: torch.Tensor  # E = Y − T, every element as one column (float64)
    jacobian: torch.Tensor  # ∂E/∂θ, one row per error, one column per learnable element (float64)
    gradient_norm: float
    Y: DLArray


_SINGULAR = torch.linalg.LinAlgError  # type: ignore[attr-defined]  # torch exports it untyped

# the seed rows of one batched backward pass hold at most this many numbers (one row per error,
# as long as the errors): a bound on the memory vmap's batch takes for a large training set
_SEED_NUMBERS = 1 << 22


def _jacobian(errors: torch.Tensor, parameters: Sequence[torch.Tensor]) -> torch.Tensor:
    """``∂errors/∂parameters`` as a matrix (errors × learnable elements), by reverse mode: one
    backward pass per error, batched with vmap in blocks of rows where every operation allows it."""
    flat = errors.reshape(-1)
    count = flat.numel()

    def rows(grads: Sequence[torch.Tensor | None], batch: tuple[int, ...]) -> torch.Tensor:
        return torch.cat(
            [
                (
                    torch.zeros(*batch, p.numel(), dtype=p.dtype, device=p.device)
                    if g is None
                    else g.reshape(*batch, -1)
                )
                for p, g in zip(parameters, grads, strict=True)
            ],
            dim=-1,
        )

    def block(start: int, stop: int) -> torch.Tensor:
        seeds = torch.zeros(stop - start, count, dtype=flat.dtype, device=flat.device)
        seeds[torch.arange(stop - start), torch.arange(start, stop)] = 1
        grads = torch.autograd.grad(
            flat, parameters, seeds, retain_graph=True, allow_unused=True, is_grads_batched=True
        )
        return rows(grads, (stop - start,))

    size = max(1, min(count, _SEED_NUMBERS // count))
    try:
        return torch.cat([block(start, min(start + size, count)) for start in range(0, count, size)])
    except RuntimeError:  # an operation vmap cannot batch: one backward pass per error
        return torch.stack(
            [
                rows(torch.autograd.grad(flat[i], parameters, retain_graph=True, allow_unused=True), ())
                for i in range(count)
            ]
        )


def train_lm(
    net: DLNetwork,
    X: Data,
    T: Data,
    loss_fn: Loss,
    options: TrainingOptions,
    metrics: Sequence[Tracked],
    validating: _Validation,
) -> _Outcome:
    """Trains ``net`` in place with Levenberg–Marquardt over the whole data set; returns what was
    recorded: per iteration ``TrainingLoss`` (at the learnables after the iteration),
    ``GradientNorm`` (of the loss there), ``StepNorm`` (0 where no step was taken) and the metrics.
    """
    if loss_fn is not _NAMED_LOSSES["mse"]:
        raise DLFormatError(
            'trainnet: the "lm" solver trains regression networks on the squared errors: lossFcn must be '
            '"mse" (also named "mean-squared-error" or "l2loss")'
        )
    keys, parameters, factors = _parameters.network_rows(net)
    scaled = _parameters.scaled_rows(keys, factors)
    if scaled:  # how MATLAB's LM treats them is not on its pages: no silent guess
        raise DLFormatError(
            f"trainnet: learn-rate factors other than 1 ({', '.join(scaled)}) are not supported with the "
            '"lm" solver (MathWorks\' pages do not say how it applies them); set them to 1'
        )
    batch = FullBatch(net, X, T, options)
    arguments = as_arguments(batch.X)
    stateful = len(net.State) > 0

    def forward() -> tuple[DLArray, Any]:
        """The network's output in training behaviour, and the State it computed, with the
        network's State left as it was (the accepted point's is assigned once per iteration)."""
        before = net.State if stateful else None
        Y = net(*arguments, training=True)
        after = net.State if before is not None else None
        if before is not None:
            net.State = before
        return Y, after

    def loss_of(Y: DLArray) -> torch.Tensor:
        loss = loss_fn(Y, batch.T)
        return loss._data if isinstance(loss, DLArray) else torch.as_tensor(loss)

    def evaluate() -> _Point:
        with torch.enable_grad():
            Y, _ = forward()
            loss = loss_of(Y)
            errors = Y._data - _targets("trainnet", batch.T, Y).to(Y._data.dtype)
            gradients = torch.autograd.grad(loss, parameters, retain_graph=True, allow_unused=True)
            jacobian = _jacobian(errors, parameters)
        found = [g.reshape(-1).double() for g in gradients if g is not None]
        norm = torch.linalg.vector_norm(torch.cat(found)) if found else 0.0
        return _Point(
            float(loss.detach()),
            errors.detach().reshape(-1).double(),
            jacobian.double(),
            float(norm),
            DLArray._wrap(Y._data.detach(), Y._fmt),
        )

    def write(values: torch.Tensor) -> None:
        """Puts the flat float64 vector ``values`` into the learnables."""
        with torch.no_grad():
            offset = 0
            for p in parameters:
                p.copy_(values[offset : offset + p.numel()].reshape(p.shape).to(p.dtype))
                offset += p.numel()

    point = evaluate()
    damping = options.InitialDampingFactor

    def step() -> tuple[dict[str, Any], DLArray, str | None]:
        nonlocal point, damping
        if not math.isfinite(point.loss):  # run_full_batch stops: no step is taken from a NaN or Inf loss
            return _values(point, 0.0), point.Y, None
        if point.gradient_norm <= options.GradientTolerance:  # a start at a minimum: nothing to step
            return _values(point, 0.0), point.Y, "gradient"
        theta = torch.cat([p.detach().reshape(-1).double() for p in parameters])
        JtJ = point.jacobian.T @ point.jacobian
        JtE = point.jacobian.T @ point.errors
        identity = torch.eye(len(theta), dtype=torch.float64, device=theta.device)
        while damping <= options.MaxDampingFactor:
            try:
                delta = torch.linalg.solve(JtJ + damping * identity, -JtE)
            except _SINGULAR:  # singular in floating point: damp more, as for a worse loss
                damping *= options.DampingIncreaseFactor
                continue
            write(theta + delta)
            with torch.no_grad():
                Y, state = forward()
                trial = float(loss_of(Y))
            if trial < point.loss:  # the step lowers the loss: take it, and damp less
                damping *= options.DampingDecreaseFactor
                if stateful:
                    net.State = state
                point = evaluate()
                stop = None
                if point.gradient_norm <= options.GradientTolerance:
                    stop = "gradient"
                elif float(delta.norm()) <= options.StepTolerance:
                    stop = "step"
                return _values(point, float(delta.norm())), point.Y, stop
            damping *= options.DampingIncreaseFactor
        write(theta)  # no step lowered the loss before the damping passed its maximum
        return _values(point, 0.0), point.Y, "damping"

    return run_full_batch(net, batch, options, metrics, validating, step, STOP_REASONS)


def _values(point: _Point, step_norm: float) -> dict[str, Any]:
    return {"TrainingLoss": point.loss, "GradientNorm": point.gradient_norm, "StepNorm": step_norm}
