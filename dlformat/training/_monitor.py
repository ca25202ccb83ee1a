"""MATLAB's ``trainingProgressMonitor`` for a terminal: metrics recorded, a progress bar, a saved plot.

MATLAB's monitor is a window with a progress bar, a Stop button, information fields and plots of
the metrics. dlformat's records the same things and shows them in a terminal: a tqdm progress bar
with the latest metrics and information beside it (the ``progress`` extra; without tqdm, or when
standard error is not a terminal, nothing is drawn and everything is still recorded), and
:meth:`TrainingProgressMonitor.savePlot` draws the recorded metrics into an image file (the
``plot`` extra, matplotlib). There is no Stop button: code sets ``monitor.Stop = True``.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError

__all__ = [
    "TrainingProgressMonitor",
    "groupSubPlot",
    "recordMetrics",
    "trainingProgressMonitor",
    "updateInfo",
]

PROGRESS_INSTALL = (
    'the dlformat[progress] extra; install it with pip install -e ".[progress]" from the dlformat repository'
)
SCALES = ("linear", "log")


def _names(option: str, value: Any) -> tuple[str, ...]:
    """MATLAB's string array of names (a string, or a list of strings), each a valid identifier."""
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise DLFormatError(
                f"trainingProgressMonitor {option} must be names usable as Name=value keywords, like "
                f'"TrainingLoss"; got {_validate.describe(name)}'
            )
    if len(set(names)) != len(names):
        raise DLFormatError(f"trainingProgressMonitor {option} lists a name twice: {', '.join(names)}")
    return names


def _number(caller: str, name: str, value: Any) -> float:
    """A recorded value as a Python float: a number, or a one-element dlarray, tensor or array."""
    data = value._data if isinstance(value, DLArray) else value
    if isinstance(data, (torch.Tensor, np.ndarray)) and _numel(data) == 1:
        data = data.reshape(()).item()
    if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, float, np.number)):
        raise DLFormatError(f"{caller}: {name} must be a numeric scalar; got {_validate.describe(value)}")
    return float(data)


def _numel(data: torch.Tensor | np.ndarray) -> int:
    return data.numel() if isinstance(data, torch.Tensor) else int(data.size)


class TrainingProgressMonitor:
    """MATLAB's ``trainingProgressMonitor`` object; create it with :func:`trainingProgressMonitor`.

    Properties, as MATLAB's: ``Metrics``, ``Info``, ``XLabel``, ``Progress`` (0 to 100, set it),
    ``Stop`` (false until code sets it), ``Status`` (text, set it), ``Visible``; and the record:
    ``MetricData`` (per metric, a list of (step, value) pairs) and ``InfoData`` (the latest value
    of each information field). Methods: ``recordMetrics``, ``updateInfo``, ``groupSubPlot``,
    ``yscale`` as MATLAB's, ``savePlot`` (dlformat's: an image of the metrics) and ``close``.
    """

    def __init__(
        self,
        Metrics: Any = (),
        Info: Any = (),
        XLabel: str = "Iteration",
        Visible: bool = True,
        Status: str = "",
    ) -> None:
        self.Metrics = _names("Metrics", Metrics)
        self.Info = _names("Info", Info)
        self.XLabel = _validate.text("trainingProgressMonitor XLabel", XLabel)
        self.Visible = bool(Visible)
        self.Status = _validate.text("trainingProgressMonitor Status", Status)
        self.Stop = False
        self.MetricData: dict[str, list[tuple[float, float]]] = {name: [] for name in self.Metrics}
        self.InfoData: dict[str, Any] = {}
        self._progress = 0.0
        self._groups: dict[str, tuple[str, ...]] = {}
        self._scales: dict[str, str] = {}
        self._bar: Any = None
        self._bar_checked = False

    # -- MATLAB's properties --------------------------------------------------------------------
    @property
    def Progress(self) -> float:
        """Training progress in percent, 0 to 100 (MATLAB's ``monitor.Progress = 100*i/n``)."""
        return self._progress

    @Progress.setter
    def Progress(self, value: Any) -> None:
        number = _number("trainingProgressMonitor Progress", "Progress", value)
        if not 0 <= number <= 100:
            raise DLFormatError(f"trainingProgressMonitor Progress must be in 0..100 (percent); got {number}")
        self._progress = number
        self._show()

    # -- MATLAB's functions ---------------------------------------------------------------------
    def recordMetrics(self, step: Any, values: dict[str, Any] | None = None, **metrics: Any) -> None:
        """MATLAB's ``recordMetrics(monitor, step, Name=value, ...)`` (or a struct: a dict)."""
        caller = "recordMetrics"
        x = _number(caller, "the step", step)
        if not math.isfinite(x):
            raise DLFormatError(f"{caller}: the step must be finite; got {x}")
        given = _known(
            caller, {**(values or {}), **metrics}, self.Metrics, ("a metric", "metrics", "Metrics")
        )
        recorded = {name: _number(caller, f"metric {name!r}", value) for name, value in given.items()}
        for name, value in recorded.items():
            self.MetricData[name].append((x, value))
        self._show()

    def updateInfo(self, values: dict[str, Any] | None = None, **info: Any) -> None:
        """MATLAB's ``updateInfo(monitor, Name=value, ...)``: the information fields beside the bar."""
        kind = ("an information field", "fields", "Info")
        given = _known("updateInfo", {**(values or {}), **info}, self.Info, kind)
        for name, value in given.items():
            self.InfoData[name] = (
                value.item() if isinstance(value, torch.Tensor) and value.numel() == 1 else value
            )
        self._show()

    def groupSubPlot(self, groupName: str, metricNames: Any) -> None:
        """MATLAB's ``groupSubPlot(monitor, groupName, metricNames)``: plot these metrics together."""
        name = _validate.text("groupSubPlot groupName", groupName)
        names = (metricNames,) if isinstance(metricNames, str) else tuple(metricNames)
        unknown = [metric for metric in names if metric not in self.MetricData]
        if unknown or not names:
            raise DLFormatError(
                f"groupSubPlot: {', '.join(repr(metric) for metric in unknown) or 'no metric'} given; the "
                f"metrics of this monitor are: {', '.join(self.Metrics) or 'none'}"
            )
        self._groups[name] = names

    def yscale(self, metricNames: Any, scale: str) -> None:
        """MATLAB's ``yscale(monitor, metricNames, scale)``: ``"linear"`` or ``"log"`` y axes."""
        kind = _validate.choice("yscale scale", scale, SCALES)
        for metric in (metricNames,) if isinstance(metricNames, str) else tuple(metricNames):
            if metric not in self.MetricData and metric not in self._groups:
                raise DLFormatError(f"yscale: {metric!r} is neither a metric nor a group of this monitor")
            self._scales[metric] = kind

    # -- the terminal -----------------------------------------------------------------------------
    def _show(self) -> None:
        bar = self._progress_bar()
        if bar is None:
            return
        bar.n = round(self._progress, 1)
        parts = []
        for name, points in self.MetricData.items():
            if points:
                parts.append(f"{name}={points[-1][1]:.4g}")
        parts += [f"{name}={value}" for name, value in self.InfoData.items()]
        latest = max((points[-1][0] for points in self.MetricData.values() if points), default=None)
        if latest is not None:
            parts.insert(0, f"{self.XLabel} {latest:g}")
        if self.Status:
            parts.insert(0, self.Status)
        bar.set_description_str(", ".join(parts), refresh=False)
        bar.refresh()

    def _progress_bar(self) -> Any:
        if self._bar is not None or self._bar_checked:
            return self._bar
        self._bar_checked = True
        if not self.Visible or not sys.stderr.isatty():
            return None
        try:
            from tqdm import tqdm
        except ImportError:
            warnings.warn(
                "trainingProgressMonitor draws its progress bar with tqdm, which is not installed "
                f"({PROGRESS_INSTALL}); the metrics are recorded without a bar",
                stacklevel=4,
            )
            return None
        self._bar = tqdm(
            total=100, file=sys.stderr, bar_format="{percentage:3.0f}%|{bar}| {desc}", dynamic_ncols=True
        )
        return self._bar

    def close(self) -> None:
        """Close the progress bar (the record stays)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    # -- the plot -------------------------------------------------------------------------------
    def savePlot(self, filename: str | Path) -> Path:
        """Draw the recorded metrics into an image file (PNG, SVG, PDF by its extension), one panel per
        ``groupSubPlot`` group and one per ungrouped metric, against ``XLabel``. Needs matplotlib."""
        try:
            from matplotlib.figure import Figure
        except ImportError:
            from .._plot import INSTALL

            raise DLFormatError(f"trainingProgressMonitor savePlot needs matplotlib, {INSTALL}") from None
        grouped = {metric for names in self._groups.values() for metric in names}
        panels = [(name, names) for name, names in self._groups.items()]
        panels += [(metric, (metric,)) for metric in self.Metrics if metric not in grouped]
        figure = Figure(figsize=(6.4, 2.6 * max(len(panels), 1)), layout="constrained")
        axes = figure.subplots(max(len(panels), 1), 1, squeeze=False)[:, 0]
        for axis, (title, names) in zip(axes, panels, strict=False):
            for metric in names:
                points = self.MetricData[metric]
                if points:
                    steps, values = zip(*points, strict=True)
                    axis.plot(steps, values, label=metric, marker="." if len(points) < 30 else None)
            axis.set_title(title)
            axis.set_xlabel(self.XLabel)
            scale = self._scales.get(title) or next(
                (self._scales[m] for m in names if m in self._scales), "linear"
            )
            axis.set_yscale(scale)
            if len(names) > 1:
                axis.legend()
            axis.grid(True, alpha=0.3)
        heading = f"Training progress {self._progress:.0f}%"
        if self.Status:
            heading += f" — {self.Status}"
        figure.suptitle(heading)
        path = Path(filename)
        figure.savefig(path)
        return path

    def __repr__(self) -> str:
        return (
            "trainingProgressMonitor with properties:\n\n"
            f"      Metrics: [{' '.join(repr(name) for name in self.Metrics)}]\n"
            f"         Info: [{' '.join(repr(name) for name in self.Info)}]\n"
            f"       XLabel: '{self.XLabel}'\n"
            f"     Progress: {self._progress:g}\n"
            f"         Stop: {int(self.Stop)}\n"
            f"       Status: '{self.Status}'\n"
            f"      Visible: {int(self.Visible)}"
        )


def trainingProgressMonitor(
    *, Metrics: Any = (), Info: Any = (), XLabel: str = "Iteration", Visible: bool = True, Status: str = ""
) -> TrainingProgressMonitor:
    """MATLAB's ``monitor = trainingProgressMonitor(Metrics=..., Info=..., XLabel=...)``.

    Examples:
        >>> monitor = dlf.trainingProgressMonitor(Metrics=["TrainingLoss"], Info="Epoch", XLabel="Iteration")
        >>> dlf.recordMetrics(monitor, 1, TrainingLoss=2.5)
        >>> dlf.updateInfo(monitor, Epoch=1)
        >>> monitor.Progress = 50
        >>> monitor.MetricData["TrainingLoss"], monitor.InfoData, monitor.Stop
        ([(1.0, 2.5)], {'Epoch': 1}, False)
    """
    return TrainingProgressMonitor(Metrics=Metrics, Info=Info, XLabel=XLabel, Visible=Visible, Status=Status)


def recordMetrics(
    monitor: TrainingProgressMonitor, step: Any, values: dict[str, Any] | None = None, **metrics: Any
) -> None:
    """MATLAB's ``recordMetrics(monitor, step, Name=value, ...)``; see
    :meth:`TrainingProgressMonitor.recordMetrics`."""
    _monitor("recordMetrics", monitor).recordMetrics(step, values, **metrics)


def updateInfo(monitor: TrainingProgressMonitor, values: dict[str, Any] | None = None, **info: Any) -> None:
    """MATLAB's ``updateInfo(monitor, Name=value, ...)``; see :meth:`TrainingProgressMonitor.updateInfo`."""
    _monitor("updateInfo", monitor).updateInfo(values, **info)


def groupSubPlot(monitor: TrainingProgressMonitor, groupName: str, metricNames: Any) -> None:
    """MATLAB's ``groupSubPlot(monitor, groupName, metricNames)``."""
    _monitor("groupSubPlot", monitor).groupSubPlot(groupName, metricNames)


def _monitor(caller: str, monitor: Any) -> TrainingProgressMonitor:
    return _validate.first_argument(caller, monitor, TrainingProgressMonitor, "a trainingProgressMonitor")


def _known(caller: str, given: dict[str, Any], names: Any, kind: tuple[str, str, str]) -> dict[str, Any]:
    """``given``, checked to name only fields the monitor was created with; ``kind`` is
    (one of them, them, the option that creates them)."""
    one, plural, option = kind
    unknown = [name for name in given if name not in names]
    if unknown:
        raise DLFormatError(
            f"{caller}: {', '.join(repr(name) for name in unknown)} is not {one} of this monitor; its "
            f"{plural} are: {', '.join(names) or f'none (create it with {option}=[...])'}"
        )
    return given
