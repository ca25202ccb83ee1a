"""Training stops when the loss is not finite (issue 24 item 9): MATLAB stops with "Training loss
is NaN"; dlformat does so for every solver of trainnet and trainNetwork, says it in StopReason,
the verbose table and info, and returns the network of the last finite iteration (the failing
iteration's update is not applied, the State its forward pass computed is put back).

References are float64 NumPy computations of MATLAB's documented formulas (trainnet's "mse" and
sgdm's update, batch normalization's running mean), independent of the code under test."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import dlformat as dlf

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 2))
T = RNG.standard_normal((8, 1))
X_NAN = X.copy()
X_NAN[5, 1] = np.nan  # in the second mini-batch of 4 (Shuffle "never")
W0, B0 = np.array([[0.5, -0.3]]), np.array([[0.1]])
MINI_BATCH = ("sgdm", "adam", "rmsprop")


def network(output: bool = False, batchnorm: bool = False, dtype: torch.dtype = torch.float64) -> list:
    fc = dlf.fullyConnectedLayer(1, Weights=torch.tensor(W0, dtype=dtype), Bias=torch.tensor(B0, dtype=dtype))
    middle = [dlf.batchNormalizationLayer(dtype=torch.float64)] if batchnorm else []
    return [dlf.featureInputLayer(2), *middle, fc, *([dlf.regressionLayer()] if output else [])]


def options(solver: str, **more):
    """One solver's options: 3 epochs of 2 mini-batches in order, or 5 full-batch iterations."""
    given = {"MaxEpochs": 3, "MiniBatchSize": 4, "Shuffle": "never"} if solver in MINI_BATCH else {}
    given.update({"MaxIterations": 5} if solver in ("lbfgs", "lm") else {})
    return dlf.trainingOptions(solver, **{"Verbose": False, **given, **more})


def train(caller: str, solver: str, x: np.ndarray, dtype: torch.dtype = torch.float64, **more):
    if caller == "trainnet":
        net, info = dlf.trainnet(x, T, network(dtype=dtype), "mse", options(solver, **more))
        return net, list(info.TrainingHistory.Loss), info.StopReason
    net, info = dlf.trainNetwork(x, T, network(output=True, dtype=dtype), options(solver, **more))
    return net, list(info.TrainingLoss), None


def fc_learnables(net) -> tuple[np.ndarray, np.ndarray]:
    fc = next(layer for layer in net.Layers if isinstance(layer, dlf.FullyConnectedLayer))
    return fc.Weights.detach().numpy(), fc.Bias.detach().numpy()


CASES = [("trainnet", s) for s in (*MINI_BATCH, "lbfgs", "lm")] + [("trainNetwork", s) for s in MINI_BATCH]


@pytest.mark.parametrize(("caller", "solver"), CASES)
def test_nan_data_stops_training_with_matlabs_reason(caller, solver):
    net, losses, reason = train(caller, solver, X_NAN)
    # the mini-batch solvers fail at the second mini-batch; the full-batch ones at once
    failing = 2 if solver in MINI_BATCH else 1
    assert len(losses) == failing and np.isnan(losses[-1]) and np.isfinite(losses[:-1]).all()
    if reason is not None:
        assert reason == "Training loss is NaN"
    assert all(np.isfinite(value).all() for value in fc_learnables(net))


@pytest.mark.parametrize("caller", ["trainnet", "trainNetwork"])
def test_the_failing_update_is_not_applied(caller):
    """After the NaN at iteration 2 the learnables are those of iteration 1: one sgdm step
    (v = −α(g + λw), w ← w + v, the bias's L2 factor 0) from W0, B0 on the first mini-batch."""
    net, losses, _ = train(caller, "sgdm", X_NAN)
    assert len(losses) == 2
    x, t = X_NAN[:4], T[:4]
    y = x @ W0.T + B0.T
    scale = 2 / y.size if caller == "trainnet" else 1 / y.shape[0]  # mse; regressionLayer's half-MSE
    gW, gb = scale * (y - t).T @ x + 1e-4 * W0, scale * (y - t).sum(0, keepdims=True).T
    W, b = fc_learnables(net)
    np.testing.assert_allclose(W, W0 - 0.01 * gW, rtol=1e-12)
    np.testing.assert_allclose(b, B0 - 0.01 * gb, rtol=1e-12)


@pytest.mark.parametrize("solver", ["lbfgs", "lm"])
def test_full_batch_solvers_take_no_step_from_a_nan_loss(solver):
    net, losses, reason = train("trainnet", solver, X_NAN)
    assert reason == "Training loss is NaN" and len(losses) == 1
    W, b = fc_learnables(net)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(b, B0)


def test_batch_normalization_state_of_the_failing_iteration_is_put_back():
    """TrainedMean after iteration 1 (MathWorks: decay · batch mean + (1 − decay) · trained, decay
    0.1, from 0), not the NaN that iteration 2's forward pass computed."""
    layers = network(batchnorm=True)
    net, info = dlf.trainnet(X_NAN, T, layers, "mse", options("adam"))
    assert info.StopReason == "Training loss is NaN" and len(info.TrainingHistory) == 2
    trained_mean = next(layer for layer in net.Layers if isinstance(layer, dlf.BatchNormalizationLayer))
    expected = 0.1 * X_NAN[:4].mean(axis=0)
    np.testing.assert_allclose(trained_mean.TrainedMean.numpy().reshape(-1), expected, rtol=1e-12)


# a rate that diverges: sgdm's steps grow by a factor each iteration; adam's and rmsprop's are
# bounded by the rate, so a huge rate on small data (small gradients: v does not overflow first)
DIVERGING = {"sgdm": (1.0, 10.0), "adam": (1e-3, 1e24), "rmsprop": (1e-3, 1e24)}


@pytest.mark.parametrize(("caller", "solver"), [(c, s) for c, s in CASES if s in MINI_BATCH])
def test_a_diverging_rate_stops_at_the_infinite_loss(caller, solver):
    """Single precision: the loss overflows to Inf while the learnables are still finite."""
    scale, rate = DIVERGING[solver]
    net, losses, reason = train(caller, solver, X * scale, torch.float32, InitialLearnRate=rate, MaxEpochs=50)
    assert np.isposinf(losses[-1]) and np.isfinite(losses[:-1]).all() and len(losses) < 100
    if reason is not None:
        assert reason == "Training loss is Inf"
    assert all(np.isfinite(value).all() for value in fc_learnables(net))


def test_no_validation_runs_on_the_failing_iteration():
    _, info = dlf.trainnet(
        X_NAN, T, network(), "mse", options("sgdm", ValidationData=(X[:4], T[:4]), ValidationFrequency=1)
    )
    assert list(info.ValidationHistory.Iteration) == [1]


@pytest.mark.parametrize(
    ("caller", "row", "footer"),
    [
        ("trainnet", r"\s+2\s+1\s+\d\d:\d\d:\d\d\s+0\.01\s+NaN\n", "Training stopped: Training loss is NaN\n"),
        ("trainNetwork", r"\|\s+1 \|\s+2 \|.*\|\s+NaN \|\s+NaN \|\s+0\.0100 \|\n", "Training finished: Training loss is NaN.\n"),
    ],
)  # fmt: skip
def test_the_verbose_table_shows_the_nan_and_the_reason(caller, row, footer, capsys):
    more = {"Verbose": True, "VerboseFrequency": 50}
    if caller == "trainnet":
        dlf.trainnet(X_NAN, T, network(), "mse", options("sgdm", **more))
    else:
        dlf.trainNetwork(X_NAN, T, network(output=True), options("sgdm", **more))
    printed = capsys.readouterr().out
    assert printed.endswith(footer)
    assert re.search(row, printed), printed


def test_output_functions_see_the_failing_iteration_and_the_reason():
    seen = []

    def record(info) -> bool:
        seen.append((info.State, info.Iteration, info.TrainingLoss))
        return False

    dlf.trainNetwork(X_NAN, T, network(output=True), options("sgdm", OutputFcn=record))
    iterations = [entry for entry in seen if entry[0] == "iteration"]
    assert [entry[1] for entry in iterations] == [1, 2] and np.isnan(iterations[-1][2])
    assert seen[-1][0] == "done"
