"""trainingProgressMonitor: the record, the terminal bar (or none), and the saved plot."""

from __future__ import annotations

import io
import sys

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_records_metrics_info_and_progress_as_matlab():
    monitor = dlf.trainingProgressMonitor(
        Metrics=["TrainingLoss", "ValidationLoss"], Info=["Epoch"], XLabel="Iteration"
    )
    dlf.groupSubPlot(monitor, "Loss", ["TrainingLoss", "ValidationLoss"])
    for iteration in range(1, 4):
        dlf.recordMetrics(
            monitor, iteration, TrainingLoss=dlf.dlarray(torch.tensor(1.0 / iteration, dtype=torch.float64))
        )
    monitor.recordMetrics(3, {"ValidationLoss": torch.tensor([0.5])})
    dlf.updateInfo(monitor, Epoch=2)
    monitor.Progress = 75
    monitor.Status = "Running"
    assert monitor.MetricData["TrainingLoss"] == [(1.0, 1.0), (2.0, 0.5), (3.0, 1.0 / 3)]
    assert monitor.MetricData["ValidationLoss"] == [(3.0, 0.5)] and monitor.InfoData == {"Epoch": 2}
    assert monitor.Progress == 75 and monitor.Stop is False
    monitor.Stop = True
    assert "Stop: 1" in repr(monitor)


def test_draws_a_tqdm_bar_on_a_terminal_and_nothing_elsewhere(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monitor = dlf.trainingProgressMonitor(Metrics="Loss", Info="Epoch")
    monitor.recordMetrics(7, Loss=0.25)
    monitor.updateInfo(Epoch=1)
    monitor.Progress = 40
    monitor.close()
    shown = screen.getvalue()
    assert "40%" in shown and "Iteration 7" in shown and "Loss=0.25" in shown and "Epoch=1" in shown

    pipe = io.StringIO()  # not a terminal: nothing is drawn, everything is recorded
    monkeypatch.setattr(sys, "stderr", pipe)
    monitor = dlf.trainingProgressMonitor(Metrics="Loss")
    monitor.recordMetrics(1, Loss=1.0)
    monitor.Progress = 100
    assert pipe.getvalue() == "" and monitor.MetricData["Loss"] == [(1.0, 1.0)]


def test_without_tqdm_a_terminal_gets_a_warning_naming_the_extra(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monitor = dlf.trainingProgressMonitor(Metrics="Loss")
    with pytest.warns(UserWarning, match=r"tqdm, which is not installed \(the dlformat\[progress\] extra"):
        monitor.recordMetrics(1, Loss=1.0)
    assert monitor.MetricData["Loss"] == [(1.0, 1.0)]


def test_saves_a_plot_of_the_metrics(tmp_path):
    pytest.importorskip("matplotlib")
    monitor = dlf.trainingProgressMonitor(
        Metrics=["TrainingLoss", "ValidationLoss", "Accuracy"], Visible=False
    )
    monitor.groupSubPlot("Loss", ["TrainingLoss", "ValidationLoss"])
    monitor.yscale("Loss", "log")
    for step in range(1, 20):
        monitor.recordMetrics(step, TrainingLoss=1 / step, Accuracy=step / 20)
    path = monitor.savePlot(tmp_path / "progress.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_without_matplotlib_the_plot_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monitor = dlf.trainingProgressMonitor(Metrics="Loss", Visible=False)
    with pytest.raises(
        DLFormatError, match=r"trainingProgressMonitor savePlot needs matplotlib, the dlformat\[plot\] extra"
    ):
        monitor.savePlot(tmp_path / "p.png")


BAD = [
    (
        lambda m: m.recordMetrics(1, Accuracy=1.0),
        r"recordMetrics: 'Accuracy' is not a metric of this monitor; its metrics are: Loss",
    ),
    (
        lambda m: m.recordMetrics(1, Loss=torch.ones(2)),
        r"recordMetrics: metric 'Loss' must be a numeric scalar; got a Tensor of shape \(2,\)",
    ),
    (
        lambda m: m.recordMetrics("one", Loss=1.0),
        r'recordMetrics: the step must be a numeric scalar; got "one"',
    ),
    (
        lambda m: m.updateInfo(Epoch=1),
        r"updateInfo: 'Epoch' is not an information field of this monitor; its fields are: none",
    ),
    (
        lambda m: setattr(m, "Progress", 120),
        r"trainingProgressMonitor Progress must be in 0..100 \(percent\); got 120",
    ),
    (
        lambda m: m.groupSubPlot("G", ["Nope"]),
        r"groupSubPlot: 'Nope' given; the metrics of this monitor are: Loss",
    ),
    (lambda m: m.yscale("Loss", "cubic"), r'yscale scale must be one of "linear", "log"; got "cubic"'),
    (
        lambda m: dlf.recordMetrics("monitor", 1),
        r"recordMetrics needs a trainingProgressMonitor as its first argument",
    ),
    (
        lambda m: dlf.trainingProgressMonitor(Metrics=["Training Loss"]),
        r"trainingProgressMonitor Metrics must be names usable as Name=value keywords",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_naming_the_value(call, message):
    monitor = dlf.trainingProgressMonitor(Metrics="Loss", Visible=False)
    with pytest.raises(DLFormatError, match=message):
        call(monitor)
