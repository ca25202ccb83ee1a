"""The training-progress figure of ``Plots``: MATLAB's live figure, or (dlformat's) an image file.

The figure has one panel for the loss and one per metric, against the iteration: the training
value of each iteration (thin), its smoothed curve (thick), the validation values (points joined
by a dashed line) and the epochs marked by vertical lines. ``Plots="training-progress"`` shows it
live in a matplotlib window where there is a display (without one, a warning says so once and
training goes on: with tqdm in a terminal, a progress bar stands in for it); a path ending in
``.png``, ``.svg`` or ``.pdf`` writes it there, replaced whole (a temporary file renamed over it)
at the first iteration, at each validation, every ``VerboseFrequency`` iterations and at the end.
matplotlib is the ``plot`` extra; files are drawn with the Agg renderers, without pyplot, so the
user's backend is never changed.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DLFormatError

__all__ = ["PLOT_FILES", "ProgressFigure", "history_figure", "require_matplotlib", "smoothed"]

PLOT_FILES = (".png", ".svg", ".pdf")
SMOOTHING = 0.6  # weight of the past in the smoothed curve (dlformat's choice; see docs/training.md)
_NON_INTERACTIVE = {"agg", "pdf", "ps", "svg", "pgf", "cairo", "template"}


def require_matplotlib(what: str, caller: str = "trainingOptions: Plots") -> None:
    """Raise a clear error naming the extra that installs matplotlib when it is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        from .._plot import INSTALL

        raise DLFormatError(f"{caller} {what} needs matplotlib, {INSTALL}") from None


def smoothed(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """An exponential moving average: ``s₁ = x₁``, ``sₖ = w·sₖ₋₁ + (1 − w)·xₖ`` with ``w = SMOOTHING``."""
    out = np.empty(len(values))
    for k, value in enumerate(values):
        out[k] = value if k == 0 else SMOOTHING * out[k - 1] + (1 - SMOOTHING) * value
    return out


def has_display() -> bool:
    """Whether a live matplotlib window can be shown (an interactive backend and, on Linux, a display)."""
    import matplotlib

    backend = str(matplotlib.get_backend()).lower()
    if backend in _NON_INTERACTIVE or backend.startswith("module://matplotlib_inline"):
        return False
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


class ProgressFigure:
    """Draws the recorded iterations and validations; ``panels`` are (key, title) pairs."""

    def __init__(self, target: str, panels: Sequence[tuple[str, str]], every: int) -> None:
        self.target, self.panels, self.every = target, list(panels), every
        self.live = target == "training-progress"
        self.figure: Any = None
        if self.live and not has_display():
            warnings.warn(
                'Plots "training-progress": no display is available, so the training-progress figure '
                "is not shown; training goes on",
                stacklevel=4,
            )
            self.live, self.target = False, ""

    @property
    def active(self) -> bool:
        return bool(self.target)

    def due(self, iteration: int, validated: bool) -> bool:
        return self.active and (iteration == 1 or validated or iteration % self.every == 0)

    def draw(
        self,
        iterations: Sequence[dict[str, Any]],
        validations: Sequence[dict[str, Any]],
        epoch_ends: Sequence[int],
        status: str,
    ) -> None:
        if not self.active:
            return
        if self.live:
            import matplotlib.pyplot as plt

            if self.figure is None:
                self.figure = plt.figure("Training Progress", figsize=(8, 2.6 * len(self.panels)))
            self.figure.clear()
            self._fill(self.figure, iterations, validations, epoch_ends, status)
            self.figure.canvas.draw_idle()
            plt.pause(0.001)
            return
        from matplotlib.figure import Figure

        from ..io._atomic import replace

        figure = Figure(figsize=(8, 2.6 * len(self.panels)), layout="constrained")
        self._fill(figure, iterations, validations, epoch_ends, status)
        kind = Path(self.target).suffix.lower().lstrip(".")
        replace(self.target, lambda temporary: figure.savefig(temporary, format=kind, dpi=110))

    def _fill(
        self,
        figure: Any,
        iterations: Sequence[dict[str, Any]],
        validations: Sequence[dict[str, Any]],
        epoch_ends: Sequence[int],
        status: str,
    ) -> None:
        axes = figure.subplots(len(self.panels), 1, sharex=True, squeeze=False)[:, 0]
        x = np.array([r["Iteration"] for r in iterations], dtype=float)
        xv = np.array([r["Iteration"] for r in validations], dtype=float)
        for ax, (key, title) in zip(axes, self.panels, strict=True):
            train_key = "TrainingLoss" if key == "loss" else key
            valid_key = "ValidationLoss" if key == "loss" else key
            y = np.array([r[train_key] for r in iterations], dtype=float)
            if len(y):
                ax.plot(x, y, color="tab:blue", alpha=0.35, linewidth=0.8, label="Training")
                ax.plot(x, smoothed(y), color="tab:blue", linewidth=1.8, label="Training (smoothed)")
            if len(xv):
                yv = np.array([r[valid_key] for r in validations], dtype=float)
                ax.plot(xv, yv, "o--", color="black", markersize=4, linewidth=1, label="Validation")
            for end in epoch_ends:
                ax.axvline(end + 0.5, color="gray", linewidth=0.6, linestyle=":")
            ax.set_ylabel(title)
            ax.grid(True, alpha=0.3)
            ax.legend(loc="best", fontsize="small")
        axes[-1].set_xlabel("Iteration")
        axes[0].set_title(status)


# TrainingHistory columns that are no panel of the figure (the loss is its first panel)
_NOT_PANELS = ("Iteration", "Loss", "Epoch", "LearnRate", "GradientNorm", "StepNorm")


def _records(table: Any, loss: str, metrics: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of a history table as the figure's records: iteration, loss, metric values."""
    where = [table.columns.index(name) for name in metrics]
    return [
        {"Iteration": row[0], loss: row[1], **{m: row[k] for m, k in zip(metrics, where, strict=True)}}
        for row in table
    ]


def history_figure(history: Any, validation: Any, reason: str) -> Any:
    """MATLAB's ``show(info)``: the training-progress figure drawn again from a ``TrainingInfo``'s
    ``TrainingHistory`` and ``ValidationHistory`` tables, in a new pyplot figure (shown where a
    display is available); the epochs end where ``Epoch`` changes (L-BFGS and LM have none)."""
    require_matplotlib("show(info)", caller="TrainingInfo:")
    import matplotlib.pyplot as plt

    metrics = [name for name in history.columns if name not in _NOT_PANELS]
    panels = [("loss", "Loss"), *((name, name) for name in metrics)]
    ends: list[int] = []
    if "Epoch" in history.columns:
        epochs, steps = history.Epoch, history.Iteration
        ends = [steps[k] for k in range(len(steps)) if k + 1 == len(steps) or epochs[k + 1] != epochs[k]]
    figure = plt.figure(figsize=(8, 2.6 * len(panels)), layout="constrained")
    ProgressFigure("", panels, 1)._fill(
        figure,
        _records(history, "TrainingLoss", metrics),
        _records(validation, "ValidationLoss", metrics),
        ends,
        f"Training stopped: {reason}",
    )
    if has_display():
        plt.show(block=False)
    return figure
