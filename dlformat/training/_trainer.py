"""MATLAB's ``trainnet`` and legacy ``trainNetwork``: one training loop with MATLAB's semantics.

Before training, the input layer's normalization statistics are computed from the training
data (``ResetInputNormalization``). Each iteration: a mini-batch (shuffled per ``Shuffle``; a
last incomplete mini-batch of an epoch is discarded, as MATLAB does), the loss through
:func:`dlformat.forward` (training behaviour; batch normalization's running statistics stay in
the network), the gradients, L2 regularization (``λ · L2Factor · w`` added to each gradient),
gradient thresholding, then the solver's update by the ported update functions
(``sgdmupdate``, ``adamupdate``, ``rmspropupdate``: MATLAB's formulas, each layer's learn-rate
factor applied). Validation runs at the first iteration, every ``ValidationFrequency``
iterations and at the last; training stops once the validation loss (or the
``ObjectiveMetricName`` metric) has not improved ``ValidationPatience`` times in a row, and
when the loss is NaN or Inf (without that iteration's update, the State its forward pass
computed put back: the network stays the last finite one). After each iteration the loop
reports to :class:`~._events.TrainingEvents` (``OutputFcn``, checkpoints, the ``Plots``
figure); the ``Metrics`` are in :mod:`._metrics`. After training,
``BatchNormalizationStatistics="population"`` recomputes batch normalization's statistics
(:mod:`._population`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._categorical import Categorical
from .._display import Table
from .._dlarray import DLArray, working_dtype
from .._errors import DLFormatError
from ..functional import crossentropy, huber, indexcrossentropy, l1loss, l2loss
from ..functional._losses import softmax_crossentropy
from ..layers import Layer
from ..layers.elementwise import SoftmaxLayer
from ..layers.output import (
    ClassificationLayer,
    OutputLayer,
    PixelClassificationLayer,
    RegressionLayer,
    class_names,
)
from ..networks import DLNetwork, dlnetwork
from ..networks._graph import LayerGraphBase
from ..networks._legacy import DAGNetwork, LayerGraph, SeriesNetwork, assembleNetwork, layerGraph
from . import _distributed, _parameters
from ._data import (
    Column,
    Columns,
    Data,
    as_arguments,
    input_format,
    is_labels,
    target_format,
    with_input_statistics,
)
from ._events import TrainingEvents
from ._interrupt import STOPPED_MANUALLY, StopRequests
from ._metrics import Tracked, tracked
from ._options import TrainingOptions
from ._output_fcn import STOPPED
from ._population import set_population_statistics
from ._prefetch import prefetched
from ._saved_options import is_saved_options, saved_options
from ._schedules import Scheduler
from ._solvers import (
    Scale,
    adam_step,
    adam_steps,
    rmsprop_step,
    rmsprop_steps,
    sgdm_step,
    sgdm_steps,
    stepped,
    together,
)
from ._sources import is_source, oriented, read_source

__all__ = ["TrainingInfo", "trainNetwork", "trainnet"]

Loss = Callable[[Any, Any], Any]  # (outputs, targets): a DLArray each, or tuples of them

# trainnet's loss names: MATLAB normalizes each by the number of (non-channel, for the
# single-label cross-entropies) elements of the network output: "all-elements"
_NAMED_LOSSES: dict[str, Loss] = {  # partials, not lambdas: spawned workers receive them pickled
    "crossentropy": functools.partial(crossentropy, NormalizationFactor="all-elements"),
    "index-crossentropy": functools.partial(indexcrossentropy, NormalizationFactor="all-elements"),
    "binary-crossentropy": functools.partial(
        crossentropy, ClassificationMode="multilabel", NormalizationFactor="all-elements"
    ),
    "mse": functools.partial(l2loss, NormalizationFactor="all-elements"),
    "l1loss": functools.partial(l1loss, NormalizationFactor="all-elements"),
    "huber": functools.partial(huber, NormalizationFactor="all-elements"),
}
_ALIASES = {"mean-squared-error": "mse", "l2loss": "mse", "mae": "l1loss", "mean-absolute-error": "l1loss"}
# the solvers that take the whole data set each iteration, in loops of their own
FULL_BATCH = ("lbfgs", "lm")
# MATLAB stops training when the loss is NaN ("Training stopped: Training loss is NaN", issue 24's
# quote of MATLAB's message); an infinite loss stops it too here, in words of dlformat's own
NAN_LOSS = "Training loss is NaN"
INF_LOSS = "Training loss is Inf"


def nonfinite_loss(loss: float) -> str | None:
    """The StopReason of a training loss that is not finite (``None`` for a finite one)."""
    if math.isfinite(loss):
        return None
    return NAN_LOSS if math.isnan(loss) else INF_LOSS


class TrainingInfo:
    """MATLAB's ``TrainingInfo`` (``trainnet``'s second output): ``TrainingHistory`` (a table of
    ``Iteration``, ``Loss``, one column per metric, ``Epoch``, ``LearnRate``), ``ValidationHistory``
    (``Iteration``, ``Loss``, metrics), ``OutputNetworkIteration`` and ``StopReason``."""

    def __init__(self, history: Table, validation: Table, iteration: int, reason: str) -> None:
        self.TrainingHistory = history
        self.ValidationHistory = validation
        self.OutputNetworkIteration = iteration
        self.StopReason = reason
        self._figure: Any = None

    def show(self) -> Any:
        """MATLAB's ``show(info)``: the training-progress figure drawn from ``TrainingHistory``
        and ``ValidationHistory`` in a new matplotlib figure (the ``plot`` extra), returned; shown
        where a display is available."""
        from ._progress_plot import history_figure

        self._figure = history_figure(self.TrainingHistory, self.ValidationHistory, self.StopReason)
        return self._figure

    def close(self) -> None:
        """MATLAB's ``close(info)``: closes the figure ``show`` opened (nothing to do if none is open)."""
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = None

    def __repr__(self) -> str:
        rows = [
            ("TrainingHistory", f"[{len(self.TrainingHistory)}×{len(self.TrainingHistory.columns)} table]"),
            (
                "ValidationHistory",
                f"[{len(self.ValidationHistory)}×{len(self.ValidationHistory.columns)} table]",
            ),
            ("OutputNetworkIteration", str(self.OutputNetworkIteration)),
            ("StopReason", f'"{self.StopReason}"'),
        ]
        width = max(len(name) for name, _ in rows)
        return "\n".join(
            ["  TrainingInfo with properties:", "", *(f"  {n:>{width + 2}}: {v}" for n, v in rows)]
        )


class LegacyTrainingInfo:
    """``trainNetwork``'s ``info`` struct: one value per iteration in each per-iteration field
    (``ValidationLoss`` is NaN where no validation ran), and the final values."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        width = max(len(name) for name in self.__dict__)
        shown = [
            f"  {name:>{width + 2}}: "
            + (f"[1×{value.size} double]" if isinstance(value, np.ndarray) else str(value))
            for name, value in self.__dict__.items()
        ]
        return "\n".join(["  struct with fields:", "", *shown])


class _Outcome:
    """What one training run records: per-iteration and per-validation rows, stop reason."""

    def __init__(self) -> None:
        self.iterations: list[dict[str, Any]] = []
        self.validations: list[dict[str, Any]] = []
        self.reason = "Max epochs completed"
        self.output_iteration = 0


class _MiniBatches:
    """One epoch's mini-batches: ``cut(position)`` is this rank's share of the observations at
    that position of ``order``, with its predictors and targets (called from a thread for
    ``PreprocessingEnvironment="background"``/``"parallel"``: it reads shared data only)."""

    def __init__(
        self,
        X: Data,
        T: Data,
        group: _distributed.Group,
        order: torch.Tensor,
        size: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        self.X, self.T, self.group, self.order, self.size = X, T, group, order, size
        self.device, self.dtype = device, dtype

    def __call__(self, position: int) -> tuple[torch.Tensor, Any, Any]:
        indices = self.group.share(self.order[position * self.size : (position + 1) * self.size])
        return (
            indices,
            self.X.batch(indices, self.device, self.dtype),
            self.T.batch(indices, self.device, self.dtype),
        )


def _regularized(
    gradients: list[torch.Tensor], parameters: list[torch.Tensor], l2: float, factors: Sequence[Scale]
) -> list[torch.Tensor]:
    """MATLAB's coupled L2 regularization: each gradient plus ``λ·factor·w``, ``factor`` the
    learnable's L2 factor (a number, or per-gate rows); all parameters at once where every factor
    is a number (the same operations, one call each, as the solver's ``_steps`` forms)."""
    if not l2:
        return gradients
    with torch.no_grad():
        if together(parameters, gradients, factors):
            decay = torch._foreach_mul(parameters, [l2 * float(factor) for factor in factors])
            return list(torch._foreach_add(gradients, decay))
        return [g + (l2 * factor) * p for g, p, factor in zip(gradients, parameters, factors, strict=True)]


def _threshold(gradients: list[torch.Tensor], method: str, threshold: float) -> list[torch.Tensor]:
    """MATLAB's gradient thresholding: ``l2norm`` rescales each learnable's gradient whose L2 norm
    exceeds the threshold to that norm; ``global-l2norm`` rescales all when their joint norm does;
    ``absolute-value`` clips each element to ±threshold, keeping its sign."""
    if math.isinf(threshold):
        return gradients
    if method == "absolute-value":
        return [g.clamp(-threshold, threshold) for g in gradients]
    if method == "global-l2norm":
        norm = math.sqrt(sum(float(g.double().pow(2).sum()) for g in gradients))
        return [g * (threshold / norm) for g in gradients] if norm > threshold else gradients
    scaled = []
    for g in gradients:
        norm = float(g.double().norm())
        scaled.append(g * (threshold / norm) if norm > threshold else g)
    return scaled


class _Solver:
    """The options' solver on the network's parameters, in place, with the ported update functions'
    steps (``sgdm_step``, ``adam_step``, ``rmsprop_step``: one formula each; their ``_steps`` forms
    update all parameters at once where every factor is a number) and each parameter's learn-rate
    factor; keeps the solver state. The options were checked once, so a scheduled rate
    of 0 (``LearnRateDropFactor=0``) is taken, as no call of ``sgdmupdate`` would take it."""

    def __init__(self, options: TrainingOptions, net: DLNetwork) -> None:
        self.options = options
        _, parameters, self.factors = _parameters.network_rows(net)
        self.parameters: list[torch.Tensor] = [*parameters]
        self.states: list[list[torch.Tensor]] | None = None

    def step(self, gradients: list[torch.Tensor], rate: float, iteration: int) -> None:
        o = self.options
        if self.states is None:  # one list per parameter: MATLAB's velocity, or Adam's two moments
            count = 2 if o.SolverName == "adam" else 1
            self.states = [
                [torch.zeros_like(p, dtype=working_dtype(p.dtype, g.dtype)) for _ in range(count)]
                for p, g in zip(self.parameters, gradients, strict=True)
            ]
        if together(self.parameters, gradients, self.factors):
            kinds = [list(kind) for kind in zip(*self.states, strict=True)]  # one list per state kind
            scales = [rate * float(factor) for factor in self.factors]
            with torch.no_grad():
                if o.SolverName == "sgdm":
                    sgdm_steps(self.parameters, gradients, kinds, scales, o.Momentum)
                elif o.SolverName == "adam":
                    adam_steps(
                        self.parameters, gradients, kinds, scales, o.GradientDecayFactor,
                        o.SquaredGradientDecayFactor, o.Epsilon, iteration,
                    )  # fmt: skip
                else:
                    rmsprop_steps(
                        self.parameters, gradients, kinds, scales, o.SquaredGradientDecayFactor, o.Epsilon
                    )
            return
        if o.SolverName == "sgdm":
            update = sgdm_step(rate, o.Momentum)
        elif o.SolverName == "adam":
            update = adam_step(
                rate, o.GradientDecayFactor, o.SquaredGradientDecayFactor, o.Epsilon, iteration
            )
        else:
            update = rmsprop_step(rate, o.SquaredGradientDecayFactor, o.Epsilon)
        stepped(update, self.parameters, gradients, self.states, self.factors)


def _device(options: TrainingOptions) -> torch.device:
    if options.ExecutionEnvironment == "gpu":
        if not torch.cuda.is_available():
            raise DLFormatError('ExecutionEnvironment "gpu": no CUDA device is available to torch')
        return torch.device("cuda")
    if options.ExecutionEnvironment == "cpu":
        return torch.device("cpu")
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def shown(value: float, spec: str = ".5g") -> str:
    """A number of the verbose tables; NaN and Inf as MATLAB prints them ("NaN", "Inf", "-Inf")."""
    if math.isfinite(value):
        return format(value, spec)
    return "NaN" if math.isnan(value) else "Inf" if value > 0 else "-Inf"


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class _Printer:
    """The verbose table: ``trainNetwork``'s legacy one or ``trainnet``'s own."""

    def __init__(
        self, legacy: bool, metric: str | None, validating: bool, metrics: Sequence[Tracked]
    ) -> None:
        self.legacy, self.metric, self.validating, self.metrics = legacy, metric, validating, metrics

    def header(self) -> None:
        if self.legacy:
            columns = [("Epoch", ""), ("Iteration", ""), ("Time Elapsed", "(hh:mm:ss)")]
            name = {"accuracy": "Accuracy", "rmse": "RMSE"}.get(self.metric or "", "")
            if name:
                columns.append(("Mini-batch", name))
                if self.validating:
                    columns.append(("Validation", name))
            columns.append(("Mini-batch", "Loss"))
            if self.validating:
                columns.append(("Validation", "Loss"))
            columns.append(("Base Learning", "Rate"))
            self.widths = [max(len(a), len(b)) + 4 for a, b in columns]
            rule = "|" + "=" * (sum(self.widths) + len(self.widths) - 1) + "|"
            print(rule)
            print("|" + "|".join(f"{a:^{w}}" for (a, _), w in zip(columns, self.widths, strict=True)) + "|")
            print("|" + "|".join(f"{b:^{w}}" for (_, b), w in zip(columns, self.widths, strict=True)) + "|")
            print(rule)
        else:
            self.columns = ["Iteration", "Epoch", "TimeElapsed", "LearnRate", "TrainingLoss"]
            self.columns += ["ValidationLoss"] if self.validating else []
            for metric in self.metrics:
                self.columns += [f"Training{metric.column}"]
                self.columns += [f"Validation{metric.column}"] if self.validating else []
            self.widths = [max(len(c), 8) for c in self.columns]
            print("    " + "    ".join(f"{c:>{w}}" for c, w in zip(self.columns, self.widths, strict=True)))
            print("    " + "    ".join("_" * w for w in self.widths))

    def row(self, record: dict[str, Any], validation: dict[str, Any] | None, elapsed: float) -> None:
        def number(value: Any, digits: int = 4) -> str:
            return "" if value is None else shown(value, f".{digits}f")

        if self.legacy:
            cells = [str(record["Epoch"]), str(record["Iteration"]), _clock(elapsed)]
            if self.metric in ("accuracy", "rmse"):
                digits = 2
                cells.append(
                    number(record.get(self.metric), digits) + ("%" if self.metric == "accuracy" else "")
                )
                if self.validating:
                    value = validation.get(self.metric) if validation else None
                    cells.append(
                        ""
                        if value is None
                        else number(value, digits) + ("%" if self.metric == "accuracy" else "")
                    )
            cells.append(number(record["TrainingLoss"]))
            if self.validating:
                cells.append(number(validation["ValidationLoss"]) if validation else "")
            cells.append(f"{record['BaseLearnRate']:.4f}")
            print("|" + "|".join(f"{c:>{w - 1}} " for c, w in zip(cells, self.widths, strict=True)) + "|")
        else:
            cells = [
                str(record["Iteration"]),
                str(record["Epoch"]),
                _clock(elapsed),
                f"{record['BaseLearnRate']:.4g}",
            ]
            cells.append(shown(record["TrainingLoss"]))
            if self.validating:
                cells.append(shown(validation["ValidationLoss"]) if validation else "")
            for metric in self.metrics:
                cells.append(shown(record[metric.name]))
                if self.validating:
                    cells.append(shown(validation[metric.name]) if validation else "")
            print("    " + "    ".join(f"{c:>{w}}" for c, w in zip(cells, self.widths, strict=True)))

    def footer(self, reason: str) -> None:
        if self.legacy:
            print("|" + "=" * (sum(self.widths) + len(self.widths) - 1) + "|")
            print(f"Training finished: {reason}.")
        else:
            print(f"Training stopped: {reason}")


class _Validation:
    """Validation runs and their bookkeeping: the best network for ``OutputNetwork``, and the
    count of validations in a row without improvement for ``ValidationPatience``, both judged by
    ``ObjectiveMetricName``."""

    def __init__(
        self,
        caller: str,
        options: TrainingOptions,
        data: tuple[Data, Data] | None,
        loss_fn: Loss,
        metrics: Sequence[Tracked],
        legacy: bool,
    ) -> None:
        output = options.OutputNetwork
        if output == "auto":  # trainnet's "auto" picks the best validation; trainNetwork kept the last
            output = "best-validation" if data is not None and not legacy else "last-iteration"
        if output == "best-validation" and data is None:
            raise DLFormatError(f'{caller}: OutputNetwork "best-validation" needs ValidationData')
        self.output, self.data, self.loss_fn, self.metrics = output, data, loss_fn, metrics
        self.objective, self.sign = _objective(caller, options.ObjectiveMetricName, metrics)
        self.patience = options.ValidationPatience
        self.best_loss, self.worse = math.inf, 0
        self.best_state: tuple[int, dict[str, Any]] | None = None

    def run(
        self,
        net: DLNetwork,
        outcome: _Outcome,
        iteration: int,
        epoch: int,
        batch_size: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> tuple[dict[str, Any], bool]:
        """Validates ``net`` and records it; also whether the validation criterion is met."""
        assert self.data is not None
        checked = _validate_net(net, self.data, self.loss_fn, self.metrics, batch_size, device, dtype)
        checked.update(Iteration=iteration, Epoch=epoch)
        outcome.validations.append(checked)
        value = self.sign * checked[self.objective]  # the objective, as a value to minimize
        if value < self.best_loss:
            self.best_loss, self.worse = value, 0
            if self.output == "best-validation":
                self.best_state = (iteration, copy.deepcopy(net.state_dict()))
        else:
            self.worse += 1
        return checked, self.worse >= self.patience

    def finish(self, net: DLNetwork, outcome: _Outcome, iteration: int) -> None:
        """The output network: the last iteration's, or the best validation's put back into ``net``."""
        outcome.output_iteration = iteration
        if self.output == "best-validation" and self.best_state is not None:
            outcome.output_iteration = self.best_state[0]
            net.load_state_dict(self.best_state[1])


FUSED_DTYPES = (torch.float32, torch.float64)  # half precision keeps the softmax's float32 path


def _fused_outputs(net: DLNetwork, loss_fn: Loss) -> tuple[str, str] | None:
    """Where the training loss can be computed from the softmax's input: trainnet's
    ``"crossentropy"`` (single-label, no weights or mask) on a network whose one output is a
    ``softmaxLayer`` (over ``C``) fed by a layer. Then the network returns that layer's output
    too (these two names), and the loss is :func:`softmax_crossentropy` of it; the metrics still
    see the softmax's output. ``None``: the loss runs on the network's output."""
    if loss_fn is not _NAMED_LOSSES["crossentropy"] or not isinstance(net, DLNetwork):
        return None
    outputs = net.OutputNames
    layer = net.layers[outputs[0]] if len(outputs) == 1 and outputs[0] in net.layers else None
    if type(layer) is not SoftmaxLayer:
        return None
    source = net._links.get((outputs[0], layer.InputNames[0]))
    return None if source is None else (net._port_name(source, "out"), outputs[0])


def _training_loss(
    net: DLNetwork, Xb: Any, Tb: Any, loss_fn: Loss, fused: tuple[str, str] | None
) -> tuple[Any, Any]:
    """One training iteration's network output and loss (fused with the softmax where
    :func:`_fused_outputs` allows it)."""
    if fused is None:
        Y = net(*as_arguments(Xb), training=True)
        return Y, loss_fn(Y, Tb)
    Z, Y = net(*as_arguments(Xb), Outputs=fused, training=True)
    if isinstance(Z, DLArray) and Z._data.dtype in FUSED_DTYPES:
        return Y, softmax_crossentropy(Z, Tb)
    return Y, loss_fn(Y, Tb)


def _train(
    caller: str,
    net: DLNetwork,
    X: Data,
    T: Data,
    validation: tuple[Data, Data] | None,
    loss_fn: Loss,
    options: TrainingOptions,
    metrics: Sequence[Tracked],
    legacy_metric: str | None,
    legacy: bool = False,
    saved: Callable[[DLNetwork], Any] = lambda net: net,
) -> _Outcome:
    """The training loop: trains ``net`` in place and returns what was recorded."""
    count = len(X)
    _check_counts(caller, X, T)
    if validation is not None:  # checked as the training data is, before anything trains
        _check_counts(caller, *validation, what="ValidationData: ")
    if not net.Learnables:
        raise DLFormatError(
            f"{caller}: the network has no learnable parameters, so there is nothing to train; add a "
            "layer with learnables (fullyConnectedLayer, convolution2dLayer, lstmLayer, ...)"
        )
    if options.SolverName in FULL_BATCH:  # their own loops; imported here: they build on this module
        from ._lbfgs_training import train_lbfgs
        from ._lm_training import train_lm

        if legacy:
            raise DLFormatError(
                f'{caller} does not train with the "{options.SolverName}" solver; use trainnet, as MATLAB '
                "does"
            )
        if options.ExecutionEnvironment in _distributed.DISTRIBUTED:
            # they evaluate the loss several times per iteration (line search, damping): not split
            raise DLFormatError(
                f'{caller}: the "{options.SolverName}" solver trains in one process; ExecutionEnvironment '
                f'"{options.ExecutionEnvironment}" is for "sgdm", "adam" and "rmsprop"'
            )
        validating = _Validation(caller, options, validation, loss_fn, metrics, legacy)
        full_batch = train_lbfgs if options.SolverName == "lbfgs" else train_lm
        return full_batch(net, X, T, loss_fn, options, metrics, validating)
    group = _distributed.group_for(options.ExecutionEnvironment, options.WorkerLoad)
    if group is None:  # "parallel" / "multi-gpu" called from one process: start the workers
        arguments = (caller, net, X, T, validation, loss_fn, options, metrics, legacy_metric, legacy)
        with StopRequests():  # a Ctrl+C reaches the workers too: they stop, this process waits for them
            outcome, trained = _distributed.spawned(
                options.ExecutionEnvironment, _train, arguments, options.WorkerLoad
            )
        net.load_state_dict(trained)
        return outcome
    device = group.device or _device(options)
    # the trained network comes back where the caller's was (training may run on the GPU)
    home = next((value.device for _, _, value in net.Learnables), torch.device("cpu"))
    net.to(device)
    dtype = next((value.dtype for _, _, value in net.Learnables), torch.float32)
    batch_size = min(options.MiniBatchSize, count)
    per_epoch = count // batch_size
    if min(group.shares(batch_size)) < 1:
        raise DLFormatError(
            f"{caller}: a mini-batch of {batch_size} observations cannot be divided among "
            f"{group.size} workers" + (" with their WorkerLoad" if group.loads else "")
        )
    verbose = options.Verbose and group.leads
    scheduler = Scheduler(
        options.InitialLearnRate,
        options.LearnRateSchedule,
        options.LearnRateDropFactor,
        options.LearnRateDropPeriod,
        per_epoch,
    )
    _, learnables, l2_factors = _parameters.network_rows(net, "L2Factor")
    parameters: list[torch.Tensor] = [*learnables]
    solver = _Solver(options, net)
    outcome = _Outcome()
    printer = _Printer(legacy_metric is not None, legacy_metric, validation is not None, metrics)
    wanted = [*metrics, *(tracked(caller, [legacy_metric], ("",)) if legacy_metric else [])]
    validating = _Validation(caller, options, validation, loss_fn, wanted, legacy)
    fused = _fused_outputs(net, loss_fn)
    last = options.MaxEpochs * per_epoch
    # rank 0 reports (OutputFcn, checkpoints, Plots) and prints; a stop it is asked for stops every rank
    events = (
        TrainingEvents(options, legacy, wanted, outcome.iterations, outcome.validations, last, saved)
        if group.leads
        else None
    )
    if verbose:
        printer.header()
    start = time.perf_counter()
    if events is not None:
        events.start()
    order = torch.randperm(count) if options.Shuffle in ("once", "every-epoch") else torch.arange(count)
    group.start(net)
    order = group.order(order)
    stateful = len(net.State) > 0
    iteration, stop = 0, False
    with _reporting(events) as requests:
        for epoch in range(1, options.MaxEpochs + 1):
            if options.Shuffle == "every-epoch" and epoch > 1:
                order = group.order(torch.randperm(count))
            cut = _MiniBatches(X, T, group, order, batch_size, device, dtype)
            for position, (indices, Xb, Tb) in enumerate(
                prefetched(options.PreprocessingEnvironment, cut, per_epoch)
            ):
                iteration += 1
                share = len(indices) / batch_size
                rate = scheduler.rate(iteration, epoch)
                before = net.State if stateful else None  # references: put back if the loss is not finite
                with torch.enable_grad():
                    Y, loss = _training_loss(net, Xb, Tb, loss_fn, fused)
                    value = loss._data if isinstance(loss, DLArray) else loss
                    gradients = torch.autograd.grad(value, parameters, allow_unused=True)
                training_loss = float(value.detach())
                # decided by every worker together: a NaN on one rank skips the update on all
                diverged = group.any(not math.isfinite(training_loss))
                if diverged:  # no update from non-finite gradients: the network stays the last finite one
                    if before is not None:
                        net.State = before
                else:
                    grads = [
                        torch.zeros_like(p) if g is None else g
                        for p, g in zip(parameters, gradients, strict=True)
                    ]
                    grads = group.gradients(grads, share)
                    grads = _regularized(grads, parameters, options.L2Regularization, l2_factors)
                    grads = _threshold(grads, options.GradientThresholdMethod, options.GradientThreshold)
                    solver.step(grads, rate, iteration)
                    group.synchronize(net, share)
                record = {
                    "Iteration": iteration,
                    "Epoch": epoch,
                    "TrainingLoss": training_loss,
                    "BaseLearnRate": rate,
                }
                for metric in wanted:  # in data-parallel training, aggregated over the workers
                    record[metric.name] = metric(Y, Tb, group)
                record.update(group.average(record, ["TrainingLoss"], share))
                outcome.iterations.append(record)
                checked = None
                if diverged:
                    outcome.reason, stop = nonfinite_loss(record["TrainingLoss"]) or NAN_LOSS, True
                elif validation is not None and (
                    iteration == 1 or iteration % options.ValidationFrequency == 0 or iteration == last
                ):
                    checked, met = validating.run(net, outcome, iteration, epoch, batch_size, device, dtype)
                    if met:
                        outcome.reason, stop = "Met validation criterion", True
                elapsed, epoch_end = time.perf_counter() - start, position == per_epoch - 1
                asked = events is not None and events.iteration(net, record, checked, elapsed, epoch_end)
                if group.any(asked) and not stop:
                    outcome.reason, stop = STOPPED, True
                if group.any(requests.asked) and not stop:  # Ctrl+C: stop after this iteration
                    outcome.reason, stop = STOPPED_MANUALLY, True
                if verbose and (
                    iteration == 1
                    or iteration % options.VerboseFrequency == 0
                    or checked is not None
                    or stop
                    or iteration == last
                ):
                    printer.row(record, checked, time.perf_counter() - start)
                if stop:
                    break
            if stop:
                break
    validating.finish(net, outcome, iteration)
    if events is not None:
        events.done(outcome.reason, time.perf_counter() - start)
    net.to(home)
    if verbose:
        printer.footer(outcome.reason)
    return outcome


def _check_counts(caller: str, X: Data, T: Data, what: str = "") -> None:
    """Predictors and targets must hold one number of observations (``what`` names the pair)."""
    if len(T) != len(X):
        raise DLFormatError(f"{caller}: {what}X has {len(X)} observations; the targets have {len(T)}")


def _set_batchnorm_statistics(
    net: DLNetwork, X: Data, options: TrainingOptions, legacy: bool = False
) -> None:
    """``BatchNormalizationStatistics="population"``: after training, batch normalization's
    statistics from one more pass over the training data (full-batch for L-BFGS). ``"auto"`` is
    ``"population"`` for ``trainNetwork`` (``legacy``), the default of the options object it was
    written for (a MATLAB R2022b ``TrainingOptionsSGDM``'s saved class defaults), and ``"moving"``
    for ``trainnet``."""
    wanted = options.BatchNormalizationStatistics
    if wanted == "auto":
        wanted = "population" if legacy else "moving"
    if wanted != "population":
        return
    batch_size = options.MiniBatchSize if options.SolverName not in FULL_BATCH else len(X)
    dtype = next((value.dtype for _, _, value in net.Learnables), torch.float32)
    set_population_statistics(net, X, min(batch_size, len(X)), _device(options), dtype)


@contextlib.contextmanager
def _reporting(events: TrainingEvents | None) -> Iterator[StopRequests]:
    """The training loop's span: Ctrl+C noted as a request to stop (see ``_interrupt``), and on an
    error (an output function's, the data's) the terminal progress bar closed before it propagates."""
    with StopRequests() as requests:
        try:
            yield requests
        except BaseException:
            if events is not None:
                events.close()
            raise


def _objective(caller: str, name: str, metrics: Sequence[Tracked]) -> tuple[str, int]:
    """The validation value ``ObjectiveMetricName`` names and its sign as a value to minimize:
    the loss, or one of the metrics (its ``Maximize``: a larger accuracy, F-score, ... is better)."""
    if name.lower() == "loss":
        return "ValidationLoss", 1
    for metric in metrics:
        if name.lower() in (metric.name.lower(), metric.column.lower()):
            if metric.function:  # MathWorks' "Define Custom Metric Function" page
                raise DLFormatError(
                    f'{caller}: ObjectiveMetricName "{name}" is a metric function; as in MATLAB, early '
                    "stopping and the best network need a metric object (a dlf.Metric subclass with Maximize)"
                )
            if metric.larger is None:
                raise DLFormatError(
                    f'{caller}: ObjectiveMetricName "{name}": the metric does not say whether larger is '
                    "better; set its Maximize property to True or False"
                )
            return metric.name, -1 if metric.larger else 1
    raise DLFormatError(
        f'{caller}: ObjectiveMetricName "{name}" is neither "loss" nor one of the Metrics '
        f"({', '.join(metric.name for metric in metrics) or 'none given'})"
    )


def _validate_net(
    net: DLNetwork,
    validation: tuple[Data, Data],
    loss_fn: Loss,
    metrics: Sequence[Tracked],
    batch_size: int,
    device: torch.device,
    dtype: torch.dtype,
) -> dict[str, Any]:
    """The loss over the validation data, in mini-batches weighted by their sizes, and each metric
    over all of them: reset, updated with each mini-batch, evaluated (see :mod:`._metrics`)."""
    X, T = validation
    total = len(X)
    sums: dict[str, float] = {"ValidationLoss": 0.0}
    with torch.no_grad():
        for begin in range(0, total, batch_size):
            indices = torch.arange(begin, min(begin + batch_size, total))
            Xb, Tb = X.batch(indices, device, dtype), T.batch(indices, device, dtype)
            Y = net(*as_arguments(Xb), training=False)
            loss = loss_fn(Y, Tb)
            sums["ValidationLoss"] += (
                float(loss._data if isinstance(loss, DLArray) else loss) * len(indices) / total
            )
            for metric in metrics:
                metric.validate(Y, Tb, first=begin == 0)
    sums.update({metric.name: metric.validated() for metric in metrics})
    return sums


def _check_options(caller: str, options: object) -> TrainingOptions:
    if is_saved_options(options):  # a MATLAB options object from a .mat file, as loadmat reads it
        return saved_options(options, {})
    if not isinstance(options, TrainingOptions):
        raise DLFormatError(
            f"{caller}: options must come from dlf.trainingOptions; got {_validate.describe(options)}"
        )
    return options


def _copied_layers(caller: str, layers: Any) -> list[Layer]:
    """MATLAB's layers are values: training a copy leaves the caller's layers as they were."""
    items = [layers] if isinstance(layers, Layer) else layers
    if (
        not isinstance(items, (list, tuple))
        or not items
        or not all(isinstance(item, Layer) for item in items)
    ):
        raise DLFormatError(
            f"{caller}: give a layer array (a list of layers); got {_validate.describe(layers)}"
        )
    return [copy.deepcopy(item) for item in items]


def _classes_of(labels: Any, given: Any = "auto") -> list[str]:
    """The classes of ``labels``: the given ones; a categorical's categories, every one in order (a
    MATLAB network trained on categorical labels has a class per category, used or not: MATLAB
    Answers 1694385); or the sorted distinct labels, as ``categorical`` sorts them. In label
    images, undefined pixels name no class."""
    if not isinstance(given, str):  # a layer's Classes (a categorical) or names
        return class_names(given) if isinstance(given, Categorical) else list(given)
    if isinstance(labels, Categorical):  # MATLAB's classes: every category, used or not, in order
        return class_names(labels)
    images = _is_label_images(labels)
    names = {str(label) for label in np.asarray(labels, dtype=object).ravel() if not images or label}
    return sorted(names)


def _is_label_images(value: Any) -> bool:
    """Label images: an H×W×N (H×W×D×N) categorical or NumPy array of class names, ``None``/``""``
    undefined."""
    if isinstance(value, Categorical):
        return value.ndim in (3, 4)
    if not isinstance(value, np.ndarray) or value.ndim not in (3, 4) or value.dtype.kind not in "UO":
        return False
    return value.dtype.kind == "U" or all(isinstance(v, str) or v is None for v in value.ravel())


def _one_hot_images(labels: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """H×W×N label images as H×W×C×N one-hot single targets (H×W×D×N as H×W×D×C×N); an
    undefined pixel's targets are all zero, so the loss and the accuracy leave it out (MATLAB's
    pixelClassificationLayer ignores undefined labels)."""
    labels = np.asarray(labels)  # a categorical's names, None where undefined
    names, inverse = np.unique(np.where(labels == None, "", labels).astype(str), return_inverse=True)  # noqa: E711
    position = {name: index for index, name in enumerate(classes)}
    unknown = [name for name in names if name and name not in position]
    if unknown:
        raise DLFormatError(
            f"trainNetwork: the label images hold labels of no class: {', '.join(unknown[:5])}"
        )
    index = np.array([position.get(name, -1) for name in names])[inverse.reshape(labels.shape)]
    hot = (index[..., None] == np.arange(len(classes))).astype(np.float32)  # H×W×N×C
    return np.moveaxis(hot, -1, -2)


def _input_layers(source: DLNetwork | LayerGraph | list[Layer]) -> list[Any]:
    """The layers of the network's inputs, in ``InputNames`` order."""
    if isinstance(source, LayerGraphBase):
        return [source._by_name[name.split("/")[0]] for name in source.InputNames]
    return [source[0]]


def _input_layer(source: DLNetwork | LayerGraph | list[Layer]) -> Any:
    return _input_layers(source)[0]


def _output_names(source: DLNetwork | LayerGraph | list[Layer]) -> tuple[str, ...]:
    return tuple(source.OutputNames) if isinstance(source, LayerGraphBase) else (source[-1].Name,)


def _one_per(caller: str, what: str, value: Any, names: Sequence[str]) -> list[Any]:
    """The data of a network with several inputs (or outputs): a list or tuple of one value per
    input (output), in the order of ``InputNames`` (``OutputNames``); one input's data as it is."""
    if len(names) == 1:
        return [value]
    if not isinstance(value, (list, tuple)) or len(value) != len(names):
        raise DLFormatError(
            f"{caller}: the network has {len(names)} {what}s ({', '.join(names)}); give the {what} data as a "
            f"tuple of {len(names)} values in that order; got {_validate.describe(value)}"
        )
    return list(value)


class _SpreadLoss:
    """A loss function of a network with several outputs, MATLAB's ``loss = f(Y1, ..., Yn, T1,
    ..., Tn)``: the outputs in ``OutputNames`` order, then the targets in the same order."""

    def __init__(self, function: Loss) -> None:
        self.function = function

    def __call__(self, Y: Any, T: Any) -> Any:
        return self.function(*as_arguments(Y), *as_arguments(T))


def _prepared(
    caller: str,
    source: DLNetwork | LayerGraph | list[Layer],
    X: Any,
    T: Any,
    options: TrainingOptions,
    classes: Sequence[list[str] | None] | None,
    indices: bool = False,
) -> tuple[DLNetwork, Data, Data, tuple[Data, Data] | None]:
    """The network to train and its data: each input layer's normalization statistics computed
    from its predictors (``ResetInputNormalization``), then the targets and the validation data.
    A network with several inputs (outputs) takes a tuple of predictors (targets), one per input
    (output) in ``InputNames`` (``OutputNames``) order; trainnet and testnet only."""
    layers = _input_layers(source)
    inputs = tuple(source.InputNames) if isinstance(source, LayerGraphBase) else (layers[0].Name,)
    modern = caller in ("trainnet", "testnet")  # trainnet's data; trainNetwork's legacy ones
    outputs = _output_names(source) if modern else ("",)
    if not modern and len(inputs) > 1:
        raise DLFormatError(f"{caller}: networks with several inputs are not yet supported; use trainnet")
    formats = options.InputDataFormats

    def spread(XX: Any, TT: Any) -> tuple[list[Any], list[Any]]:
        xs, ts = _one_per(caller, "input", XX, inputs), _one_per(caller, "output", TT, outputs)
        if modern:  # trainnet's vector sequences are s×c, time first; targets follow input 1
            ts = [oriented(caller, layers[0], xs[0], t)[1] for t in ts]
            xs = [oriented(caller, layer, x, None)[0] for layer, x in zip(layers, xs, strict=True)]
        return xs, ts

    def predictors(what: str, xs: list[Any]) -> Data:
        columns = [
            Column(caller, what, x, input_format(caller, layer, formats, x, i, len(layers)), options)
            for i, (layer, x) in enumerate(zip(layers, xs, strict=True))
        ]
        return columns[0] if len(columns) == 1 else Columns(caller, "predictors", columns)

    xs, ts = spread(X, T)
    # the classes of each output: given, or the sorted distinct class labels (a categorical's)
    known = [
        (classes[i] if classes else None) or (_classes_of(t) if is_labels(t) else None)
        for i, t in enumerate(ts)
    ]

    def targets(values: list[Any]) -> Data:
        columns = [
            Column(caller, "T", t, target_format(options.TargetDataFormats, t, i), options, known[i], indices)
            for i, t in enumerate(values)
        ]
        return columns[0] if len(columns) == 1 else Columns(caller, "targets", columns)

    Xc = predictors("X", xs)
    graph: Any = source
    for layer, column in zip(layers, Xc.columns if isinstance(Xc, Columns) else [Xc], strict=True):
        fitted = with_input_statistics(layer, column, options.ResetInputNormalization)
        if fitted is not layer:
            replaced = isinstance(graph, LayerGraphBase)
            graph = graph.replaceLayer(layer.Name, fitted) if replaced else [fitted, *graph[1:]]
    net = graph if isinstance(graph, DLNetwork) else dlnetwork(graph)
    if not net.Initialized:  # MATLAB's trainnet initializes a dlnetwork built with addLayers (after
        net = net.initialize()  # its input statistics: the normalization runs in the initialization)
    validation = None
    if options.ValidationData is not None:
        if is_source(options.ValidationData):  # read once, as training data sources are
            XV, TV, _ = read_source(caller, options.ValidationData, layers, options, len(outputs))
        else:
            XV, TV = options.ValidationData
        xv, tv = spread(XV, TV)
        validation = (predictors("XValidation", xv), targets(tv))
    return net, Xc, targets(ts), validation


def trainnet(
    X: Any, T: Any, net: Any, lossFcn: Any, options: TrainingOptions | None = None
) -> tuple[DLNetwork, TrainingInfo]:
    """MATLAB's ``[netTrained, info] = trainnet(X, T, net, lossFcn, options)``, or
    ``trainnet(source, net, lossFcn, options)`` with a ``minibatchqueue``, a
    ``torch.utils.data.Dataset`` or a ``DataLoader`` of ``(x, t)`` pairs (read once, see
    :mod:`dlformat.training._sources`).

    ``net`` is a ``dlnetwork`` (left unchanged: a trained copy is returned) or a layer array
    without output layers. ``lossFcn`` is one of ``"crossentropy"``, ``"index-crossentropy"``,
    ``"binary-crossentropy"``, ``"mse"`` (``"mean-squared-error"``, ``"l2loss"``), ``"l1loss"``
    (``"mae"``, ``"mean-absolute-error"``), ``"huber"``, or a callable ``loss = f(Y, T)`` on
    dlarrays. Data layouts: see :mod:`dlformat.training._data`; class labels are one-hot encoded
    with their sorted distinct names (a categorical's classes). Returns the trained
    :class:`DLNetwork` and a :class:`TrainingInfo`. A ``dlnetwork`` with several inputs
    (outputs) takes a tuple of predictors (targets), one per input in ``InputNames`` order (one
    per output in ``OutputNames`` order), and a loss function ``f(Y1, ..., Yn, T1, ..., Tn)``.
    See docs/training.md.

    Examples:
        >>> torch.manual_seed(0) and None
        >>> X, T = torch.randn(32, 3), torch.randn(32, 1)
        >>> options = dlf.trainingOptions("adam", MaxEpochs=2, MiniBatchSize=16, Verbose=False)
        >>> layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(1)]
        >>> net, info = dlf.trainnet(X, T, layers, "mse", options)
        >>> len(info.TrainingHistory), info.StopReason
        (4, 'Max epochs completed')
    """
    data = None
    if options is None and is_source(X):  # MATLAB's trainnet(mbq, net, lossFcn, options)
        data, T, net, lossFcn, options = X, None, T, net, lossFcn
    options = _check_options("trainnet", options)
    source: DLNetwork | list[Layer]
    if isinstance(net, DLNetwork):
        source = copy.deepcopy(net)
    elif isinstance(net, LayerGraph):
        raise DLFormatError(
            "trainnet takes a dlnetwork or a layer array; make one with dlf.dlnetwork(lgraph)"
        )
    else:
        source = _copied_layers("trainnet", net)
        if any(isinstance(layer, OutputLayer) for layer in source):
            raise DLFormatError(
                "trainnet: the network must not have output layers (classificationLayer, regressionLayer); "
                "the loss is lossFcn. Use trainNetwork for a network ending in an output layer"
            )
    if isinstance(lossFcn, str):
        name = _validate.choice(
            "trainnet: lossFcn", lossFcn, (*_NAMED_LOSSES, *_ALIASES), also=", or a function"
        )
        loss_fn = _NAMED_LOSSES[_ALIASES.get(name, name)]
        indices = name == "index-crossentropy"
    elif callable(lossFcn):
        loss_fn, indices = lossFcn, False
    else:
        raise DLFormatError(
            f"trainnet: lossFcn must be a loss name or a function; got {_validate.describe(lossFcn)}"
        )
    outputs = _output_names(source)
    if len(outputs) > 1:  # MATLAB: loss = f(Y1, ..., Yn, T1, ..., Tn), a function of one's own
        if isinstance(lossFcn, str):
            raise DLFormatError(
                f"trainnet: the network has {len(outputs)} outputs ({', '.join(outputs)}); give lossFcn as a "
                "function loss = f(Y1, ..., Yn, T1, ..., Tn) of the outputs and targets in that order"
            )
        loss_fn = _SpreadLoss(lossFcn)
    named = None
    if data is not None:
        X, T, named = read_source("trainnet", data, _input_layers(source), options, len(outputs))
    trained, Xc, Tc, validation = _prepared("trainnet", source, X, T, options, named, indices)
    metrics = tracked("trainnet", options.Metrics, trained.OutputNames)
    outcome = _train("trainnet", trained, Xc, Tc, validation, loss_fn, options, metrics, None)
    _set_batchnorm_statistics(trained, Xc, options)
    # the variables MathWorks' TrainingInfo page lists, in its order; metrics by MATLAB's metric names
    names = [m.column for m in metrics]
    # L-BFGS and LM have no epochs nor learning rate: their norms instead (their verbose columns)
    last = (
        {"GradientNorm": "GradientNorm", "StepNorm": "StepNorm"}
        if options.SolverName in FULL_BATCH
        else {"Epoch": "Epoch", "LearnRate": "BaseLearnRate"}
    )
    history = Table(
        ["Iteration", "Loss", *names, *last],
        [
            (
                r["Iteration"],
                r["TrainingLoss"],
                *(r[m.name] for m in metrics),
                *(r[k] for k in last.values()),
            )
            for r in outcome.iterations
        ],
    )
    validated = Table(
        ["Iteration", "Loss", *names],
        [(r["Iteration"], r["ValidationLoss"], *(r[m.name] for m in metrics)) for r in outcome.validations],
    )
    return trained, TrainingInfo(history, validated, outcome.output_iteration, outcome.reason)


def trainNetwork(
    X: Any, Y: Any, layers: Any, options: TrainingOptions | None = None
) -> tuple[SeriesNetwork | DAGNetwork, LegacyTrainingInfo]:
    """MATLAB's legacy ``[net, info] = trainNetwork(X, Y, layers, options)``, or
    ``trainNetwork(source, layers, options)`` with a data source as :func:`trainnet` takes.

    ``layers`` is a layer array ending in one output layer, or a ``layerGraph`` with one
    (a :class:`DAGNetwork` is returned for it): ``classificationLayer`` (its
    weighted cross-entropy; ``Classes="auto"`` takes the labels' sorted distinct names) or
    ``regressionLayer`` (half mean squared error), whose ``forwardLoss`` is the loss. Returns
    a :class:`SeriesNetwork` (or :class:`DAGNetwork`) and MATLAB's ``info`` struct: ``TrainingLoss``,
    ``TrainingAccuracy`` or ``TrainingRMSE``, ``ValidationLoss`` and ``ValidationAccuracy`` /
    ``ValidationRMSE`` (NaN where no validation ran), ``BaseLearnRate``, ``FinalValidationLoss``,
    ``FinalValidationAccuracy`` / ``FinalValidationRMSE``, ``OutputNetworkIteration``.
    Verbose prints MATLAB's legacy table.
    """
    data = None
    if options is None and is_source(X):  # trainNetwork(source, layers, options)
        data, Y, layers, options = X, None, Y, layers
    options = _check_options("trainNetwork", options)
    body: LayerGraph | list[Layer]
    source_port = ""
    if isinstance(layers, LayerGraph):
        body = copy.deepcopy(layers)  # MATLAB's graphs are values too
        names = [name for name, layer in body._by_name.items() if isinstance(layer, OutputLayer)]
        if len(names) != 1:
            raise DLFormatError(
                f"trainNetwork: the layerGraph must have one output layer; it has {len(names) or 'none'}"
                + (
                    " (MATLAB's trainNetwork does not train networks with several outputs either: "
                    "train them with trainnet and a loss function of all the outputs)"
                    if len(names) > 1
                    else ""
                )
            )
        output = body._by_name[names[0]]
        feeding = body._links.get((names[0], output.InputNames[0]))
        if feeding is None:
            raise DLFormatError(f"trainNetwork: output layer '{names[0]}' is not connected to any layer")
        source_port = body._port_name(feeding, "out")
        body.removeLayers(names[0])
    else:
        items = _copied_layers("trainNetwork", layers)
        if not isinstance(items[-1], OutputLayer) or any(
            isinstance(layer, OutputLayer) for layer in items[:-1]
        ):
            raise DLFormatError(
                "trainNetwork: the layers must end in one output layer (classificationLayer, regressionLayer)"
            )
        output, body = items[-1], items[:-1]
    classes = named = None
    if data is not None:
        if isinstance(output, PixelClassificationLayer):
            raise DLFormatError(
                "trainNetwork: a pixelClassificationLayer takes X and Y arrays (images and label images); "
                "data sources are not yet supported for it"
            )
        X, Y, [named] = read_source("trainNetwork", data, _input_layer(body), options)
    if isinstance(output, ClassificationLayer):
        images = _is_label_images(Y)
        if isinstance(output, PixelClassificationLayer) and not images:
            raise DLFormatError(
                "trainNetwork: a pixelClassificationLayer needs label images as Y: an H×W×N (or H×W×D×N) "
                f"array of class names; got {_validate.describe(Y)}"
            )
        if not images and not is_labels(Y):
            raise DLFormatError(
                f"trainNetwork: a classification layer ({type(output).__name__}) needs class labels as Y "
                "(names, one per observation, or label images)"
            )
        auto = isinstance(output.Classes, str)
        classes = named if named and auto else _classes_of(Y, output.Classes)
        if auto:  # MATLAB sets them at training time (the layer is our copy)
            ClassificationLayer.Classes.initialize(output, classes)
            output._check_properties()
        if images:  # one-hot label images: the targets of every pixel
            Y = _one_hot_images(Y, classes)
            valid = options.ValidationData
            if valid is not None and not is_source(valid) and _is_label_images(valid[1]):
                options = copy.copy(options)
                options.ValidationData = (valid[0], _one_hot_images(valid[1], classes))
            classes = None
        metric = "accuracy"
    elif isinstance(output, RegressionLayer):
        metric = "rmse"
    else:
        raise DLFormatError(
            f"trainNetwork: output layer {type(output).__name__} is neither a classification nor a "
            "regression layer; a custom output layer subclasses dlf.ClassificationLayer or "
            "dlf.RegressionLayer"
        )
    net, Xc, Tc, validation = _prepared("trainNetwork", body, X, Y, options, [classes])

    def assembled(trained: DLNetwork) -> SeriesNetwork | DAGNetwork:
        """The legacy network of the trained body and the output layer (also what checkpoints hold)."""
        if not source_port:
            return assembleNetwork([*trained.Layers, output])
        graph = layerGraph(trained).addLayers(output)
        return assembleNetwork(graph.connectLayers(source_port, output.Name))

    def checkpoint(trained: DLNetwork) -> SeriesNetwork | DAGNetwork:
        copied = copy.deepcopy(trained).eval()  # the network assembled holds its layers themselves
        return assembled(copied)

    outcome = _train(
        "trainNetwork", net, Xc, Tc, validation, output.forwardLoss, options, (), metric, True, checkpoint
    )
    _set_batchnorm_statistics(net, Xc, options, legacy=True)
    name = "Accuracy" if metric == "accuracy" else "RMSE"
    at = {r["Iteration"]: r for r in outcome.validations}
    fields: dict[str, Any] = {
        "TrainingLoss": np.array([r["TrainingLoss"] for r in outcome.iterations]),
        f"Training{name}": np.array([r[metric] for r in outcome.iterations]),
        "ValidationLoss": np.array(
            [
                at[r["Iteration"]]["ValidationLoss"] if r["Iteration"] in at else np.nan
                for r in outcome.iterations
            ]
        ),
        f"Validation{name}": np.array(
            [at[r["Iteration"]][metric] if r["Iteration"] in at else np.nan for r in outcome.iterations]
        ),
        "BaseLearnRate": np.array([r["BaseLearnRate"] for r in outcome.iterations]),
        "FinalValidationLoss": outcome.validations[-1]["ValidationLoss"] if outcome.validations else np.nan,
        f"FinalValidation{name}": outcome.validations[-1][metric] if outcome.validations else np.nan,
        "OutputNetworkIteration": outcome.output_iteration,
    }
    net.eval()
    return assembled(net), LegacyTrainingInfo(fields)
