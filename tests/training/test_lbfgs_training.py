"""trainingOptions("lbfgs") and trainnet with it: full-batch L-BFGS whose first iterations equal
the NumPy transcription in test_lbfgs on a least-squares problem, the stop reasons, the options."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from tests.training.test_lbfgs import numpy_lbfgs

rng = np.random.default_rng(3)
X = rng.standard_normal((12, 2))  # N×C, featureInputLayer's layout
T = X @ np.array([[1.5], [-0.5]]) + 0.3 + 0.1 * rng.standard_normal((12, 1))


def network():
    torch.manual_seed(1)
    net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)])
    net.to(torch.float64)
    return net


def mse(w):
    """The loss trainnet's "mse" computes (mean squared error) and its gradient, w = [W1 W2 b]."""
    residual = X @ w[:2] + w[2] - T[:, 0]
    gradient = 2 / len(X) * np.concatenate([X.T @ residual, [residual.sum()]])
    return np.mean(residual**2), gradient


def start_of(net):
    weights = dict(((layer, name), value) for layer, name, value in net.Learnables)
    return np.concatenate(
        [
            weights[("fc", "Weights")].detach().numpy().ravel(),
            weights[("fc", "Bias")].detach().numpy().ravel(),
        ]
    )


@pytest.mark.parametrize("method", ["weak-wolfe", "strong-wolfe", "backtracking"])
def test_the_first_iterations_equal_the_reference(method):
    net = network()
    options = dlf.trainingOptions("lbfgs", MaxIterations=4, LineSearchMethod=method, Verbose=False)
    trained, info = dlf.trainnet(X, T, net, "mse", options)
    iterates, _ = numpy_lbfgs(mse, start_of(net), 4, method)
    losses = [row[1] for row in info.TrainingHistory.rows]
    np.testing.assert_allclose(losses, [mse(w)[0] for w in iterates], rtol=1e-10)
    np.testing.assert_allclose(start_of(trained), iterates[-1], rtol=1e-10)
    assert info.TrainingHistory.columns == ("Iteration", "Loss", "GradientNorm", "StepNorm")
    assert info.StopReason == "Max iterations completed" and info.OutputNetworkIteration == 4


def test_training_drives_the_loss_down_and_stops_at_the_gradient_tolerance():
    options = dlf.trainingOptions("lbfgs", Verbose=False, GradientTolerance=1e-8, StepTolerance=1e-12)
    trained, info = dlf.trainnet(X, T, network(), "mse", options)
    solution, *_ = np.linalg.lstsq(np.hstack([X, np.ones((12, 1))]), T[:, 0], rcond=None)
    np.testing.assert_allclose(start_of(trained), solution, atol=1e-7)
    assert info.StopReason == "Met gradient tolerance" and len(info.TrainingHistory) < 50
    assert info.TrainingHistory.rows[-1][2] < 1e-8


def test_the_step_tolerance_and_validation(capsys):
    options = dlf.trainingOptions(
        "lbfgs", StepTolerance=1e-3, GradientTolerance=1e-12, ValidationData=(X[:4], T[:4]),
        ValidationFrequency=2, Metrics="rmse", VerboseFrequency=1,
    )  # fmt: skip
    _, info = dlf.trainnet(X, T, network(), "mse", options)
    assert info.StopReason == "Met step tolerance" and info.TrainingHistory.rows[-1][-1] < 1e-3
    assert info.ValidationHistory.columns == ("Iteration", "Loss", "RMSE")
    assert info.ValidationHistory.rows[0][0] == 1 and info.ValidationHistory.rows[-1][0] == len(
        info.TrainingHistory
    )
    printed = capsys.readouterr().out
    assert "Iteration" in printed and "GradientNorm" in printed and "StepNorm" in printed
    assert printed.strip().endswith("Training stopped: Met step tolerance")


def test_the_options():
    options = dlf.trainingOptions("lbfgs")
    assert options.matlab_class == "TrainingOptionsLBFGS"
    assert (options.MaxIterations, options.LineSearchMethod, options.HistorySize) == (1000, "weak-wolfe", 10)
    assert (options.InitialInverseHessianFactor, options.MaxNumLineSearchIterations) == (1.0, 20)
    assert (options.GradientTolerance, options.StepTolerance, options.InitialStepSize) == (1e-5, 1e-5, None)
    assert "TrainingOptionsLBFGS with properties" in repr(options) and "MaxEpochs" not in repr(options)
    assert dlf.TrainingOptions.from_config(options.get_config()) == options


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"MiniBatchSize": 32}, "'MiniBatchSize' is not an option for solver 'lbfgs'"),
        ({"InitialLearnRate": 0.1}, "'InitialLearnRate' is not an option for solver 'lbfgs'"),
        ({"LineSearchMethod": "exact"}, "LineSearchMethod must be one of"),
        ({"InitialStepSize": 0.1}, "initial step size is not ported"),
        ({"GradientTolerance": 0}, "GradientTolerance"),
        ({"HistorySize": 2.5}, "HistorySize must be a positive integer"),
        ({"MaxIterations": 0}, "MaxIterations must be a positive integer"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainingOptions("lbfgs", **options)


def test_train_network_refuses_lbfgs():
    options = dlf.trainingOptions("lbfgs", Verbose=False)
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer()]
    with pytest.raises(DLFormatError, match='trainNetwork does not train with the "lbfgs" solver'):
        dlf.trainNetwork(X, T, layers, options)


def test_output_functions_and_checkpoints_run_as_for_the_other_solvers(tmp_path):
    calls = []

    def stop_at_three(info):
        calls.append((info["State"], info["Iteration"] if info["State"] != "start" else None))
        return info["State"] == "iteration" and info["Iteration"] == 3

    options = dlf.trainingOptions(
        "lbfgs", Verbose=False, GradientTolerance=1e-12, StepTolerance=1e-12, OutputFcn=stop_at_three,
        CheckpointPath=str(tmp_path), CheckpointFrequency=2, CheckpointFrequencyUnit="iteration",
    )  # fmt: skip
    _, info = dlf.trainnet(X, T, network(), "mse", options)
    assert calls == [("start", None), ("iteration", 1), ("iteration", 2), ("iteration", 3), ("done", 3)]
    assert info.StopReason == "Stopped by OutputFcn" and len(info.TrainingHistory) == 3
    (checkpoint,) = sorted(tmp_path.glob("net_checkpoint__2__*.pt"))
    assert isinstance(dlf.io.load_network(checkpoint), dlf.DLNetwork)


def test_lbfgs_refuses_data_parallel_training():
    options = dlf.trainingOptions("lbfgs", Verbose=False, ExecutionEnvironment="parallel")
    with pytest.raises(
        DLFormatError, match=r'the "lbfgs" solver trains in one process; ExecutionEnvironment "parallel"'
    ):
        dlf.trainnet(X, T, network(), "mse", options)


def test_the_progress_figure_of_an_lbfgs_run_draws_no_epoch_lines(tmp_path, monkeypatch):
    from dlformat.training import _progress_plot

    drawn = []
    monkeypatch.setattr(
        _progress_plot.ProgressFigure,
        "_fill",
        lambda self, figure, its, vals, ends, status: drawn.append(list(ends)),
    )
    options = dlf.trainingOptions("lbfgs", MaxIterations=3, Verbose=False, Plots=str(tmp_path / "p.png"),
                                  GradientTolerance=1e-12, StepTolerance=1e-12)  # fmt: skip
    dlf.trainnet(X, T, network(), "mse", options)
    assert drawn and all(ends == [] for ends in drawn)  # an epoch is an iteration: no line for each


def test_a_start_at_the_minimum_meets_the_gradient_tolerance():
    # targets the network fits exactly: the gradient is 0 at the start, so the line search has no
    # descent direction; the reason is the gradient tolerance, not a failed line search
    net = network()
    fitted = dlf.extractdata(dlf.predict(net, dlf.dlarray(torch.tensor(X), "BC"))).numpy().T
    options = dlf.trainingOptions("lbfgs", Verbose=False)
    trained, info = dlf.trainnet(X, fitted, net, "mse", options)
    assert info.StopReason == "Met gradient tolerance" and len(info.TrainingHistory) == 1
    np.testing.assert_array_equal(start_of(trained), start_of(net))
