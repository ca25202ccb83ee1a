"""OutputFcn: the calls (start, each iteration, done), the info struct's fields for trainnet and
for trainNetwork, and stopping training when a function returns true."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

import dlformat as dlf

from . import _toy


class Recorder:
    """An output function that keeps a copy of each info struct and asks to stop at ``stop_at``."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.calls: list[dict] = []
        self.stop_at = stop_at

    def __call__(self, info) -> bool:
        self.calls.append({name: info[name] for name in info.keys()})
        return info.State == "iteration" and info.Iteration == self.stop_at


def validating(**given):
    return _toy.options(ValidationData=(_toy.XV, _toy.LABELSV), ValidationFrequency=3, **given)


def test_trainnet_calls_at_start_each_iteration_and_done_with_its_fields():
    recorder = Recorder()
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy",
                           validating(OutputFcn=recorder, Metrics="accuracy"))  # fmt: skip
    calls = recorder.calls
    assert [c["State"] for c in calls] == ["start", *["iteration"] * 8, "done"]
    assert list(calls[1]) == ["Epoch", "Iteration", "TimeElapsed", "LearnRate", "TrainingLoss",
                              "ValidationLoss", "TrainingAccuracy", "ValidationAccuracy", "State"]  # fmt: skip
    assert calls[0]["Iteration"] is None and calls[0]["TrainingLoss"] is None
    iterations = calls[1:-1]
    assert [c["Iteration"] for c in iterations] == list(range(1, 9))
    assert [c["Epoch"] for c in iterations] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [c["TrainingLoss"] for c in iterations] == list(info.TrainingHistory.Loss)
    assert [c["TrainingAccuracy"] for c in iterations] == list(info.TrainingHistory.Accuracy)
    assert [c["LearnRate"] for c in iterations] == [0.05] * 8
    validated = [c["Iteration"] for c in iterations if c["ValidationLoss"] is not None]
    assert validated == list(info.ValidationHistory.Iteration) == [1, 3, 6, 8]
    assert [c["ValidationLoss"] for c in iterations if c["ValidationLoss"] is not None] == list(
        info.ValidationHistory.Loss
    )
    elapsed = [c["TimeElapsed"] for c in calls]
    assert all(isinstance(t, datetime.timedelta) for t in elapsed) and elapsed == sorted(elapsed)
    assert calls[-1]["Iteration"] == 8 and calls[-1]["ValidationLoss"] == info.ValidationHistory.Loss[-1]


def test_trainnetwork_passes_its_legacy_fields():
    recorder = Recorder()
    _, info = dlf.trainNetwork(_toy.X, _toy.LABELS, _toy.layers(True), validating(OutputFcn=[recorder]))
    calls = recorder.calls
    assert list(calls[1]) == ["Epoch", "Iteration", "TimeSinceStart", "TrainingLoss", "ValidationLoss",
                              "BaseLearnRate", "TrainingAccuracy", "TrainingRMSE", "ValidationAccuracy",
                              "ValidationRMSE", "State"]  # fmt: skip
    iterations = calls[1:-1]
    assert np.array_equal([c["TrainingAccuracy"] for c in iterations], info.TrainingAccuracy)
    assert all(c["TrainingRMSE"] is None and c["ValidationRMSE"] is None for c in iterations)
    accuracy = [np.nan if c["ValidationAccuracy"] is None else c["ValidationAccuracy"] for c in iterations]
    assert np.array_equal(accuracy, info.ValidationAccuracy, equal_nan=True)
    assert all(isinstance(c["TimeSinceStart"], float) for c in calls)


@pytest.mark.parametrize("stop_at", [1, 3, 6])
def test_returning_true_stops_after_that_iteration(stop_at):
    recorder, watcher = Recorder(stop_at), Recorder()
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy",
                           _toy.options(OutputFcn=[recorder, watcher]))  # fmt: skip
    assert len(info.TrainingHistory) == stop_at == info.OutputNetworkIteration
    assert info.StopReason == "Stopped by OutputFcn"
    states = [c["State"] for c in watcher.calls]  # every function is still called, done included
    assert states == ["start", *["iteration"] * stop_at, "done"]


def test_trainnetwork_stops_too(capsys):
    options = _toy.options(OutputFcn=Recorder(2), Verbose=True)
    _, info = dlf.trainNetwork(_toy.X, _toy.LABELS, _toy.layers(True), options)
    assert len(info.TrainingLoss) == 2
    assert capsys.readouterr().out.rstrip().endswith("Training finished: Stopped by OutputFcn.")


def test_the_info_struct_displays_as_matlab_struct():
    shown = []
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy",
                 _toy.options(MaxEpochs=1, OutputFcn=lambda info: shown.append(repr(info))))  # fmt: skip
    assert shown[0].splitlines()[0] == "  struct with fields:"
    assert "ValidationLoss: []" in shown[0] and "State: start" in shown[0]


def test_what_a_function_returns_at_start_is_not_used():
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy",
                           _toy.options(OutputFcn=lambda info: True))  # fmt: skip
    assert len(info.TrainingHistory) == 1 and info.StopReason == "Stopped by OutputFcn"


def test_options_with_functions_round_trip_and_display():
    def stopNow(info):
        return False

    options = _toy.options(OutputFcn=stopNow, Metrics=["accuracy", stopNow])
    assert dlf.TrainingOptions.from_config(options.get_config()).get_config() == options.get_config()
    assert "OutputFcn: @stopNow" in repr(options) and "Metrics: {1×2 cell}" in repr(options)
