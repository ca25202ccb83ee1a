"""What the training loop reports to, around each iteration: ``OutputFcn``, checkpoints, the
``Plots`` figure and a terminal progress bar.

The loop calls :meth:`TrainingEvents.start` before the first iteration, :meth:`iteration`
after each (true: an output function asked to stop) and :meth:`done` at the end; each of the
pieces lives in its own module (``_output_fcn``, ``_checkpoints``, ``_progress_plot``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._checkpoints import Checkpoints, is_main_process
from ._metrics import Tracked
from ._monitor import TrainingProgressMonitor
from ._output_fcn import OutputFunctions
from ._progress_plot import ProgressFigure

__all__ = ["TrainingEvents"]


class TrainingEvents:
    """The reports of one training run (``records``/``validations`` are the loop's own lists)."""

    def __init__(
        self,
        options: Any,
        legacy: bool,
        metrics: Sequence[Tracked],
        iterations: Sequence[dict[str, Any]],
        validations: Sequence[dict[str, Any]],
        last: int,
        network: Callable[[Any], Any],
        epoch_lines: bool = True,
    ) -> None:
        self.options, self.last, self.epoch_lines = options, last, epoch_lines
        self.iterations, self.validations = iterations, validations
        self.output = OutputFunctions(options.OutputFcn, legacy, metrics)
        self.checkpoints = Checkpoints(options, network)
        panels = [("loss", "Loss"), *((metric.name, metric.column) for metric in metrics)]
        plots = options.Plots if options.Plots == "training-progress" or is_main_process() else "none"
        self.figure = ProgressFigure("" if plots == "none" else plots, panels, options.VerboseFrequency)
        self.epoch_ends: list[int] = []
        # without a display, the live figure's stand-in: trainingProgressMonitor's terminal bar
        self.monitor = None
        if options.Plots == "training-progress" and not self.figure.active:
            self.monitor = TrainingProgressMonitor(
                Metrics=("TrainingLoss", "ValidationLoss"), Info=("Epoch",)
            )

    def start(self) -> None:
        self.output.call("start", None, None, 0.0)

    def iteration(
        self,
        net: Any,
        record: dict[str, Any],
        validation: dict[str, Any] | None,
        elapsed: float,
        epoch_end: bool,
    ) -> bool:
        iteration, epoch = record["Iteration"], record["Epoch"]
        if epoch_end and self.epoch_lines:  # L-BFGS: every iteration ends an epoch, no line for each
            self.epoch_ends.append(iteration)
        if self.checkpoints.due(iteration, epoch, epoch_end):
            self.checkpoints.write(net, iteration)
        if self.figure.due(iteration, validation is not None):
            self.figure.draw(
                self.iterations,
                self.validations,
                self.epoch_ends,
                f"Training: iteration {iteration} of {self.last}, epoch {epoch}",
            )
        if self.monitor is not None:
            losses = {"TrainingLoss": record["TrainingLoss"]}
            if validation is not None:
                losses["ValidationLoss"] = validation["ValidationLoss"]
            self.monitor.recordMetrics(iteration, losses)
            self.monitor.updateInfo(Epoch=epoch)
            self.monitor.Progress = 100 * iteration / self.last
        return self.output.call("iteration", record, validation, elapsed)

    def close(self) -> None:
        """Training ended by an error: the terminal bar is closed (no ``"done"`` call)."""
        if self.monitor is not None:
            self.monitor.close()
            self.monitor = None

    def done(self, reason: str, elapsed: float) -> None:
        if self.monitor is not None:
            self.monitor.close()
        if self.figure.active:
            self.figure.draw(
                self.iterations, self.validations, self.epoch_ends, f"Training stopped: {reason}"
            )
        last = self.iterations[-1] if self.iterations else None
        at_last = (
            self.validations[-1]
            if last is not None
            and self.validations
            and self.validations[-1]["Iteration"] == last["Iteration"]
            else None
        )
        self.output.call("done", last, at_last, elapsed)
