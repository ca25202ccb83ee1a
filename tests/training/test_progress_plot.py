"""Plots: the training-progress figure written to a PNG/SVG/PDF file during and after training,
the live figure's fallback without a display, and the error without matplotlib."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training import _progress_plot

from . import _toy

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF-"}


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_the_figure_file_is_written_during_and_after_training(tmp_path, suffix):
    target = tmp_path / f"progress{suffix}"
    sizes = {}

    def look(info):  # the figure is written before the output functions are called
        if info.State == "iteration":
            sizes[info.Iteration] = target.stat().st_size if target.exists() else None

    options = _toy.options(Plots=str(target), Metrics="accuracy", OutputFcn=look, MaxEpochs=1)
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    assert sizes[1] is not None  # already there at the first iteration
    content = target.read_bytes()
    assert content.startswith(MAGIC[suffix])
    if suffix == ".svg":
        assert b"<svg" in content
    assert [path.name for path in tmp_path.iterdir()] == [target.name]  # no temporary file left


def test_trainnetwork_writes_the_figure_too(tmp_path):
    target = tmp_path / "legacy.png"
    dlf.trainNetwork(_toy.X, _toy.LABELS, _toy.layers(True), _toy.options(Plots=str(target), MaxEpochs=1))
    assert target.read_bytes().startswith(MAGIC[".png"])


def test_the_figure_has_a_panel_for_the_loss_and_each_metric(tmp_path, monkeypatch):
    drawn = []
    real = _progress_plot.ProgressFigure._fill

    def spy(self, figure, *args):
        real(self, figure, *args)
        drawn.append([ax.get_ylabel() for ax in figure.axes])

    monkeypatch.setattr(_progress_plot.ProgressFigure, "_fill", spy)
    options = _toy.options(Plots=str(tmp_path / "p.png"), Metrics=["accuracy", "auc"], VerboseFrequency=3)
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    assert drawn[-1] == ["Loss", "Accuracy", "AUC"]
    assert len(drawn) == 4  # iterations 1, 3 and 6 (every VerboseFrequency), and at the end


def test_the_smoothed_curve_is_an_exponential_moving_average():
    values = [4.0, 2.0, 3.0, 1.0]
    expected = [4.0]
    for value in values[1:]:
        expected.append(0.6 * expected[-1] + 0.4 * value)
    np.testing.assert_allclose(_progress_plot.smoothed(values), expected, rtol=1e-15)


def test_without_a_display_the_live_figure_is_skipped_with_one_warning(monkeypatch):
    monkeypatch.setattr(_progress_plot, "has_display", lambda: False)
    options = _toy.options(Plots="training-progress", MaxEpochs=1)
    with pytest.warns(UserWarning, match="no display is available") as warned:
        _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    assert len(warned) == 1
    assert info.StopReason == "Max epochs completed"


def test_without_matplotlib_the_options_name_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    for plots in ("training-progress", str(tmp_path / "p.png")):
        with pytest.raises(DLFormatError, match=r"needs matplotlib, the dlformat\[plot\] extra"):
            dlf.trainingOptions("adam", Plots=plots)
    assert dlf.trainingOptions("adam", Plots="none").Plots == "none"


def test_with_a_display_the_live_figure_is_drawn_with_pyplot(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(_progress_plot, "has_display", lambda: True)
    monkeypatch.setattr(plt, "pause", lambda interval: None)  # no event loop to run under Agg
    options = _toy.options(Plots="training-progress", Metrics="accuracy", MaxEpochs=1)
    try:
        dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
        figure = plt.figure("Training Progress")  # the figure training drew, left open as MATLAB's
        assert [ax.get_ylabel() for ax in figure.axes] == ["Loss", "Accuracy"]
        assert figure.axes[0].get_title() == "Training stopped: Max epochs completed"
    finally:
        plt.close("Training Progress")
