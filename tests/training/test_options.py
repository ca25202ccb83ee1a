"""trainingOptions: MATLAB's defaults per solver, checks, display, config round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dlformat as dlf
from dlformat import DLFormatError

# MathWorks' trainingOptions page: the documented defaults
COMMON = {
    "MaxEpochs": 30,
    "MiniBatchSize": 128,
    "Shuffle": "once",
    "LearnRateSchedule": "none",
    "LearnRateDropFactor": 0.1,
    "LearnRateDropPeriod": 10,
    "L2Regularization": 1e-4,
    "GradientThresholdMethod": "l2norm",
    "GradientThreshold": math.inf,
    "Verbose": True,
    "VerboseFrequency": 50,
    "ValidationData": None,
    "ValidationFrequency": 50,
    "ValidationPatience": math.inf,
    "OutputNetwork": "auto",
    "Plots": "none",
    "SequenceLength": "longest",
    "SequencePaddingDirection": "right",
    "SequencePaddingValue": 0.0,
    "ExecutionEnvironment": "auto",
}


@pytest.mark.parametrize(
    ("solver", "own", "matlab_class"),
    [
        ("sgdm", {"InitialLearnRate": 0.01, "Momentum": 0.9}, "TrainingOptionsSGDM"),
        (
            "adam",
            {
                "InitialLearnRate": 0.001,
                "GradientDecayFactor": 0.9,
                "SquaredGradientDecayFactor": 0.999,
                "Epsilon": 1e-8,
            },
            "TrainingOptionsADAM",
        ),
        (
            "rmsprop",
            {"InitialLearnRate": 0.001, "SquaredGradientDecayFactor": 0.9, "Epsilon": 1e-8},
            "TrainingOptionsRMSProp",
        ),
    ],
)
def test_defaults_are_matlabs(solver, own, matlab_class):
    options = dlf.trainingOptions(solver)
    for name, value in {**COMMON, **own}.items():
        assert getattr(options, name) == value, name
    assert options.matlab_class == matlab_class
    assert repr(options).startswith(f"  {matlab_class} with properties:")


def test_display_is_matlabs():
    lines = repr(dlf.trainingOptions("sgdm")).splitlines()
    assert lines[2].split() == ["Momentum:", "0.9000"]
    shown = {line.split(":")[0].strip(): line.split(": ", 1)[1] for line in lines[2:]}
    assert shown["InitialLearnRate"] == "0.0100"
    assert shown["L2Regularization"] == "1.0000e-04"
    assert shown["GradientThreshold"] == "Inf"
    assert shown["Shuffle"] == "'once'"
    assert shown["Verbose"] == "1"
    assert shown["ValidationData"] == "[]"


def test_pairs_case_and_round_trip():
    options = dlf.trainingOptions("adam", "initiallearnrate", 0.01, MAXEPOCHS=3, Shuffle="Every-Epoch")
    assert (options.InitialLearnRate, options.MaxEpochs, options.Shuffle) == (0.01, 3, "every-epoch")
    again = dlf.TrainingOptions.from_config(options.get_config())
    assert again == options and again.get_config() == options.get_config()


def test_setting_an_option_checks_it():
    options = dlf.trainingOptions("sgdm")
    options.MaxEpochs = 5
    assert options.MaxEpochs == 5
    with pytest.raises(DLFormatError, match="MaxEpochs must be a positive integer"):
        options.MaxEpochs = 0


@pytest.mark.parametrize(
    ("solver", "options", "message"),
    [
        ("sgdx", {}, 'solverName must be one of "sgdm"'),
        ("sgdm", {"Epsilon": 1e-6}, "'Epsilon' is not an option for solver 'sgdm'"),
        ("adam", {"Momentum": 0.5}, "'Momentum' is not an option for solver 'adam'"),
        ("sgdm", {"InitalLearnRate": 1e-4}, "'InitalLearnRate' is not an option"),
        ("sgdm", {"InitialLearnRate": 0}, "InitialLearnRate must be a positive number"),
        ("sgdm", {"Momentum": 1.5}, r"Momentum must be a number in \[0, 1\]"),
        ("adam", {"GradientDecayFactor": 1}, r"GradientDecayFactor must be a number in \[0, 1\)"),
        ("sgdm", {"MiniBatchSize": 2.5}, "MiniBatchSize must be a positive integer"),
        ("sgdm", {"Shuffle": "always"}, 'Shuffle must be one of "once", "every-epoch", "never"'),
        ("sgdm", {"L2Regularization": -1}, "L2Regularization must be a finite scalar >= 0"),
        ("sgdm", {"GradientThreshold": 0}, "GradientThreshold must be a positive number"),
        ("sgdm", {"GradientThresholdMethod": "l1norm"}, "GradientThresholdMethod must be one of"),
        ("sgdm", {"ValidationPatience": 1.5}, "ValidationPatience must be a positive integer"),
        ("sgdm", {"ValidationData": [1, 2, 3]}, "ValidationData must be a pair"),
        ("sgdm", {"Verbose": "yes"}, "Verbose must be true or false"),
        ("sgdm", {"OutputNetwork": "best"}, "OutputNetwork must be one of"),
        ("sgdm", {"LearnRateSchedule": "step"}, 'LearnRateSchedule must be one of "none", "piecewise"'),
        ("sgdm", {"LearnRateSchedule": "warmup"}, '"warmup" is not yet ported'),
        ("sgdm", {"LearnRateDropFactor": 2}, r"LearnRateDropFactor must be a number in \[0, 1\]"),
        ("sgdm", {"Plots": "progress.jpg"}, r'Plots must be "none", "training-progress" or an image file'),
        ("sgdm", {"Plots": "/nonexistent/p.png"}, "the folder of '/nonexistent/p.png' does not exist"),
        ("sgdm", {"CheckpointPath": "/nonexistent/x"}, "'/nonexistent/x' is not an existing folder"),
        ("sgdm", {"OutputFcn": [print, 3]}, "OutputFcn must be a function stop = f"),
        ("sgdm", {"Metrics": ["accuracy", "Accuracy"]}, "names a metric twice"),
        ("sgdm", {"Metrics": 3}, "Metrics must be a metric name"),
        ("sgdm", {"Metrics": [lambda Y, T: 0]}, "a metric function needs a name"),
        ("sgdm", {"Metrics": "f1"}, 'Metrics must be one of "accuracy", "rmse", "fscore"'),
        ("sgdm", {"InputDataFormats": "SSXB"}, "is not a data format"),
        ("sgdm", {"SequenceLength": "middle"}, "SequenceLength must be one of"),
        ("sgdm", {"WorkerLoad": 0}, r"WorkerLoad must be \[\], a fraction in \(0, 1\]"),
        ("sgdm", {"WorkerLoad": 2.5}, "a number of workers above 1 must be a whole number; got 2.5"),
        ("sgdm", {"WorkerLoad": [1, 0]}, r"vector of positive finite loads, one per worker.*got \[1, 0\]"),
        ("sgdm", {"WorkerLoad": True}, "WorkerLoad must be"),
        ("sgdm", {"DispatchInBackground": "yes"}, "DispatchInBackground must be true or false"),
        (
            "sgdm",
            {"PreprocessingEnvironment": "threads"},
            'must be one of "serial", "background", "parallel"',
        ),
    ],
)
def test_bad_values_are_clear_errors(solver, options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainingOptions(solver, **options)


def test_pairs_must_be_names_and_values():
    with pytest.raises(DLFormatError, match="'Name', value pairs"):
        dlf.trainingOptions("sgdm", "MaxEpochs")
    with pytest.raises(DLFormatError, match="twice"):
        dlf.trainingOptions("sgdm", "MaxEpochs", 3, maxepochs=4)


def test_display_of_validation_data_and_lists():
    options = dlf.trainingOptions("sgdm", ValidationData=([1.0], [2.0]), Metrics=["accuracy", "rmse"])
    shown = {line.split(":")[0].strip(): line.split(": ", 1)[1] for line in repr(options).splitlines()[2:]}
    assert shown["ValidationData"] == "{1×2 cell}"
    assert shown["Metrics"] == "{'accuracy'  'rmse'}"


@pytest.mark.parametrize(
    ("given", "kept", "shown"),
    [
        (None, None, "[]"),
        ([], None, "[]"),
        (0.5, 0.5, "0.5000"),
        (4, 4, "4"),
        ([1, 2, 1], (1.0, 2.0, 1.0), "[1 2 1]"),
        (np.ones(3), (1.0, 1.0, 1.0), "[1 1 1]"),
        # one entry is MATLAB's scalar ([4] is 4): a count, or a fraction, not a one-worker vector
        ([4], 4, "4"),
        (np.array([0.5]), 0.5, "0.5000"),
    ],
)
def test_worker_load_forms(given, kept, shown):
    """WorkerLoad: [] (the default), a fraction of each machine's workers, a number of workers or a
    vector of per-worker loads (its use: tests/training/test_distributed.py)."""
    options = dlf.trainingOptions("sgdm", WorkerLoad=given)
    assert options.WorkerLoad == kept
    lines = dict(line.split(": ", 1) for line in repr(options).splitlines()[2:])
    assert lines["WorkerLoad".rjust(len(max(lines, key=len)))] == shown
    assert dlf.TrainingOptions.from_config(options.get_config()) == options


def test_dispatch_in_background_is_the_legacy_name_of_background_preprocessing():
    options = dlf.trainingOptions("sgdm", DispatchInBackground=True)
    assert options.PreprocessingEnvironment == "background" and options.DispatchInBackground is True
    options.DispatchInBackground = False
    assert options.PreprocessingEnvironment == "serial" and options.DispatchInBackground is False
    assert "DispatchInBackground" not in repr(options)  # shown as PreprocessingEnvironment
