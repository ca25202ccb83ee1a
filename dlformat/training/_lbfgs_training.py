"""``trainnet`` with ``trainingOptions("lbfgs")``: full-batch L-BFGS through :func:`lbfgsupdate`.

MathWorks' TrainingOptionsLBFGS page: the L-BFGS solver processes the whole training set in
each iteration. Each iteration here is one ``lbfgsupdate`` call on the network, whose loss
function is the network's loss (training behaviour) over all observations and its gradients.
Training stops after ``MaxIterations``, when the gradient norm falls below
``GradientTolerance``, when the step norm falls below ``StepTolerance``, when the line search
fails, when the loss is NaN or Inf (no step is accepted from there), or by the validation
criterion (``ValidationPatience``), validation running as for the other solvers. The verbose
table has MATLAB's L-BFGS columns (Iteration, TimeElapsed, TrainingLoss, GradientNorm,
StepNorm, as MathWorks' example transcripts show).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .._dlarray import DLArray
from ..networks import DLNetwork
from . import _parameters
from ._data import Data, as_arguments
from ._events import TrainingEvents
from ._interrupt import STOPPED_MANUALLY, StopRequests
from ._lbfgs import lbfgsState, lbfgsupdate
from ._metrics import Tracked
from ._options import TrainingOptions
from ._output_fcn import STOPPED
from ._trainer import Loss, _clock, _device, _Outcome, _Validation, nonfinite_loss, shown

__all__ = ["STOP_REASONS", "FullBatch", "run_full_batch", "train_lbfgs"]

# MATLAB's wording for these is not settled from MathWorks' pages (see docs/training.md)
STOP_REASONS = {
    "iterations": "Max iterations completed",
    "gradient": "Met gradient tolerance",
    "step": "Met step tolerance",
    "line search": "Line search failed",
}


class _Printer:
    def __init__(self, validating: bool, metrics: Sequence[Tracked]) -> None:
        self.columns = ["Iteration", "TimeElapsed", "TrainingLoss"]
        self.columns += ["ValidationLoss"] if validating else []
        self.columns += ["GradientNorm", "StepNorm"]
        for metric in metrics:
            self.columns += [f"Training{metric.column}"]
            self.columns += [f"Validation{metric.column}"] if validating else []
        self.validating, self.metrics = validating, metrics
        self.widths = [max(len(c), 8) for c in self.columns]

    def header(self) -> None:
        print("    " + "    ".join(f"{c:>{w}}" for c, w in zip(self.columns, self.widths, strict=True)))
        print("    " + "    ".join("_" * w for w in self.widths))

    def row(self, record: dict[str, Any], validation: dict[str, Any] | None, elapsed: float) -> None:
        cells = [str(record["Iteration"]), _clock(elapsed), shown(record["TrainingLoss"])]
        if self.validating:
            cells.append(shown(validation["ValidationLoss"]) if validation else "")
        cells += [shown(record["GradientNorm"]), shown(record["StepNorm"])]
        for metric in self.metrics:
            cells.append(shown(record[metric.name]))
            if self.validating:
                cells.append(shown(validation[metric.name]) if validation else "")
        print("    " + "    ".join(f"{c:>{w}}" for c, w in zip(cells, self.widths, strict=True)))


class FullBatch:
    """The whole training set as one batch on the training device, for the full-batch solvers."""

    def __init__(self, net: DLNetwork, X: Data, T: Data, options: TrainingOptions) -> None:
        self.count = len(X)
        self.device = _device(options)
        self.home = next((value.device for _, _, value in net.Learnables), torch.device("cpu"))
        net.to(self.device)
        self.dtype = next((value.dtype for _, _, value in net.Learnables), torch.float32)
        everything = torch.arange(self.count)
        self.X = X.batch(everything, self.device, self.dtype)
        self.T = T.batch(everything, self.device, self.dtype)


# one iteration of a full-batch solver: its record's solver values (TrainingLoss at the updated
# parameters, GradientNorm, StepNorm), the network's output on the batch (for the metrics), and
# the key of its stop reason (or None to go on)
Step = Callable[[], tuple[dict[str, Any], DLArray, str | None]]


def run_full_batch(
    net: DLNetwork,
    batch: FullBatch,
    options: TrainingOptions,
    metrics: Sequence[Tracked],
    validating: _Validation,
    step: Step,
    reasons: dict[str, str],
) -> _Outcome:
    """The iterations of a full-batch solver (``step`` each) with what every solver has around
    them: metrics, validation, OutputFcn, checkpoints, the figure, Ctrl+C, the verbose table.

    Each record has ``Iteration``, ``Epoch`` (equal to it: every iteration sees all the data),
    the solver's values and the metrics; ``net`` is put back on its device at the end.
    """
    outcome = _Outcome()
    outcome.reason = reasons["iterations"]
    printer = _Printer(validating.data is not None, metrics)
    # OutputFcn, checkpoints and the Plots figure, as for the other solvers (each iteration is an
    # epoch, for CheckpointFrequencyUnit="epoch"; the figure draws no epoch lines)
    events = TrainingEvents(
        options,
        False,
        metrics,
        outcome.iterations,
        outcome.validations,
        options.MaxIterations,
        lambda n: n,
        epoch_lines=False,
    )
    if options.Verbose:
        printer.header()
    start = time.perf_counter()
    events.start()
    iteration = 0
    with StopRequests() as requests:
        for iteration in range(1, options.MaxIterations + 1):
            values, Y, stop = step()
            record = {"Iteration": iteration, "Epoch": iteration, **values}
            for metric in metrics:
                record[metric.name] = metric(Y, batch.T)
            outcome.iterations.append(record)
            checked = None
            # a non-finite loss is the current point's: neither solver accepts a step to one, so
            # the learnables are still the last finite point's
            diverged = nonfinite_loss(float(values["TrainingLoss"]))
            last = diverged is not None or stop is not None or iteration == options.MaxIterations
            if (
                validating.data is not None
                and diverged is None
                and (iteration == 1 or iteration % options.ValidationFrequency == 0 or last)
            ):
                checked, met = validating.run(
                    net, outcome, iteration, iteration, batch.count, batch.device, batch.dtype
                )
                if met and stop is None:
                    outcome.reason, last = "Met validation criterion", True
            if diverged is not None:
                outcome.reason = diverged
            elif stop is not None:
                outcome.reason = reasons[stop]
            if events.iteration(net, record, checked, time.perf_counter() - start, True) and not last:
                outcome.reason, last = STOPPED, True
            if requests.asked and not last:  # Ctrl+C: stop after this iteration
                outcome.reason, last = STOPPED_MANUALLY, True
            if options.Verbose and (
                iteration == 1 or iteration % options.VerboseFrequency == 0 or checked or last
            ):
                printer.row(record, checked, time.perf_counter() - start)
            if last:
                break
    validating.finish(net, outcome, iteration)
    events.done(outcome.reason, time.perf_counter() - start)
    net.to(batch.home)
    if options.Verbose:
        print(f"Training stopped: {outcome.reason}")
    return outcome


def train_lbfgs(
    net: DLNetwork,
    X: Data,
    T: Data,
    loss_fn: Loss,
    options: TrainingOptions,
    metrics: Sequence[Tracked],
    validating: _Validation,
) -> _Outcome:
    """Trains ``net`` in place with L-BFGS over the whole data set; returns what was recorded.

    Each record has ``Iteration``, ``Epoch`` (equal to it: every iteration sees all the data),
    ``TrainingLoss`` (at the updated parameters), ``GradientNorm``, ``StepNorm`` and the metrics.
    """
    batch = FullBatch(net, X, T, options)
    Xb, Tb = batch.X, batch.T
    keys, parameters, _ = _parameters.network_rows(net)

    stateful = len(net.State) > 0

    def network_loss(network: DLNetwork) -> tuple[Any, Any, DLArray, Any]:
        # the State a trial point computes (batch normalization's statistics) is put back: the
        # accepted point's is assigned once per iteration below, as a custom loop assigns net.State
        # (references are enough: layers replace their state tensors, never change them in place)
        before = network.State if stateful else None
        with torch.enable_grad():
            Y = network(*as_arguments(Xb), training=True)
            state = network.State if before is not None else None  # what the call keeps, as trainnet's
            if before is not None:
                network.State = before
            loss = loss_fn(Y, Tb)
            value = loss._data if isinstance(loss, DLArray) else loss
            found = torch.autograd.grad(value, parameters, allow_unused=True)
        gradients = [torch.zeros_like(p) if g is None else g for p, g in zip(parameters, found, strict=True)]
        return (
            value.detach(),
            _parameters.network_table(keys, gradients),
            DLArray._wrap(Y._data.detach(), Y._fmt),
            state,
        )

    solver = lbfgsState(
        HistorySize=options.HistorySize, InitialInverseHessianFactor=options.InitialInverseHessianFactor
    )

    def step() -> tuple[dict[str, Any], DLArray, str | None]:
        nonlocal solver
        _, solver = lbfgsupdate(
            net,
            network_loss,
            solver,
            LineSearchMethod=options.LineSearchMethod,
            MaxNumLineSearchIterations=options.MaxNumLineSearchIterations,
            NumLossFunctionOutputs=4,
        )
        Y, accepted_state = solver.AdditionalLossFunctionOutputs
        if stateful and solver.LineSearchStatus == "completed":
            net.State = accepted_state
        stop = None
        if not math.isfinite(solver.Loss):
            pass  # a NaN or Inf loss at the start point (no step is accepted to one): run_full_batch stops
        elif solver.GradientsNorm < options.GradientTolerance:  # also where no descent was left to search
            stop = "gradient"
        elif solver.LineSearchStatus == "failed":
            stop = "line search"
        elif solver.StepNorm < options.StepTolerance:
            stop = "step"
        values = {
            "TrainingLoss": float(solver.Loss),
            "GradientNorm": solver.GradientsNorm,
            "StepNorm": solver.StepNorm,
        }
        return values, Y, stop

    return run_full_batch(net, batch, options, metrics, validating, step, STOP_REASONS)
