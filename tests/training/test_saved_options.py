"""Training options MATLAB saved in a .mat file (a TrainingOptionsSGDM object, as
dlformat.io.loadmat reads it) used as dlformat's trainingOptions: the solver from the class, the
values the object held (its saveobj struct), clear errors for values with no Python form."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io._mcos import FunctionHandle, MatlabObject


def saved(solver: str, **held):
    """An options object in the form loadmat gives: class defaults beside saveobj's struct."""
    defaults = {"MaxEpochs": np.array([[30.0]]), "Verbose": np.array([[True]])}
    return MatlabObject(
        f"nnet.cnn.TrainingOptions{solver}", {**defaults, "any": {"Version": np.array([[7.0]]), **held}}
    )


def test_the_options_saved_in_a_matlab_workspace_are_its_values(networks):
    """vikas_net.mat (MATLAB R2022b) saved `options` with the user's values in its saveobj struct;
    its ValidationData is an ImageDatastore, which must be replaced by name."""
    from dlformat.io import loadmat

    options = loadmat(networks / "vikas_net.mat", ["options"])["options"]
    with pytest.raises(
        DLFormatError,
        match=r"the saved option ValidationData is a MATLAB object of class matlab\.io\.datastore\.ImageDatastore.*"
        r"dlf\.trainingOptions\(options, ValidationData=\.\.\.\)",
    ):
        dlf.trainingOptions(options)
    ours = dlf.trainingOptions(options, validationdata=None)
    assert ours.SolverName == "sgdm"
    held = {"MaxEpochs": 25, "MiniBatchSize": 128, "Verbose": False, "ValidationFrequency": 30,
            "Shuffle": "every-epoch", "Plots": "training-progress", "InitialLearnRate": 0.01, "Momentum": 0.9,
            "L2Regularization": 1e-4, "BatchNormalizationStatistics": "population",
            "OutputNetwork": "last-iteration", "SequenceLength": "longest", "ValidationData": None}  # fmt: skip
    assert {name: getattr(ours, name) for name in held} == held


def test_trainnet_and_trainNetwork_take_a_saved_object_as_their_options():
    torch.manual_seed(0)
    X, T = torch.randn(16, 3), torch.randn(16, 1)
    options = saved("ADAM", MaxEpochs=np.array([[2.0]]), MiniBatchSize=np.array([[8.0]]), Verbose=np.array([[False]]),
                    InitialLearnRate=np.array([[0.05]]), WorkerLoad=np.zeros((0, 0)), OutputFcn=np.zeros((0, 0)),
                    Shuffle="never")  # fmt: skip
    _, info = dlf.trainnet(X, T, [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(1)], "mse", options)
    assert len(info.TrainingHistory) == 4 and info.TrainingHistory.LearnRate[0] == 0.05
    layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(1), dlf.regressionLayer()]
    _, legacy = dlf.trainNetwork(X, T, layers, options)
    assert legacy.BaseLearnRate.tolist() == [0.05] * 4


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            saved(
                "SGDM", OutputFcn=FunctionHandle("@(info)stopIfAccuracyNotImproving(info,3)", "anonymous", "")
            ),
            r"the saved option OutputFcn is the MATLAB function handle @\(info\)stopIfAccuracyNotImproving\(info,3\)",
            id="function-handle",
        ),
        pytest.param(
            saved("SGDM", LearnRateSchedule=MatlabObject("piecewiseLearnRate", {})),
            r"the saved option LearnRateSchedule is a MATLAB object of class piecewiseLearnRate",
            id="schedule-object",
        ),
        pytest.param(
            MatlabObject("nnet.cnn.TrainingOptionsNAG", {}),
            r"a saved 'nnet\.cnn\.TrainingOptionsNAG' has no solver dlformat knows; the solvers are: sgdm, adam",
            id="unknown-solver",
        ),
        pytest.param(saved("SGDM", MaxEpochs=np.array([[0.0]])), r"MaxEpochs", id="bad-saved-value"),
    ],
)
def test_saved_values_with_no_python_form_are_errors_naming_the_option(options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainingOptions(options)


def test_saved_names_lists_and_the_legacy_dispatch_option():
    options = dlf.trainingOptions(
        saved(
            "RMSProp",
            Metrics=np.array(["rmse", "mape"], dtype=object),
            PreprocessingEnvironment="background",
            DispatchInBackground=np.array([[True]]),  # MATLAB keeps the legacy name beside it
            SquaredGradientDecayFactor=np.array([[0.95]]),
        )
    )
    assert options.SolverName == "rmsprop" and options.SquaredGradientDecayFactor == 0.95
    assert options.PreprocessingEnvironment == "background"
    assert options.Metrics == ("rmse", "mape")
    assert options.MaxEpochs == 30  # not held: dlformat's default (the class default is beside it)
