"""trainnet with ExecutionEnvironment "parallel": two gloo CPU workers, each on its share of every
mini-batch, end with the same weights as one process training on the whole mini-batches (and
with bit-identical networks on both ranks: trainnet compares their digests and errs otherwise)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training import _distributed

RNG = np.random.default_rng(3)
X = torch.tensor(RNG.standard_normal((24, 3)), dtype=torch.float64)
LABELS = np.where(RNG.standard_normal(24) > 0, "up", "down")


def mlp():
    torch.manual_seed(0)
    layers = [
        dlf.featureInputLayer(3),
        dlf.fullyConnectedLayer(5),
        dlf.reluLayer(),
        dlf.fullyConnectedLayer(2),
        dlf.softmaxLayer(),
    ]
    return dlf.dlnetwork(layers).to(torch.float64)


def train(environment, network=mlp):
    options = dlf.trainingOptions(
        "adam", InitialLearnRate=0.05, MaxEpochs=3, MiniBatchSize=7, Shuffle="every-epoch",
        Metrics="accuracy", Verbose=False, ExecutionEnvironment=environment,
    )  # fmt: skip
    torch.manual_seed(11)  # the shuffling: the workers take the caller's random state
    return dlf.trainnet(X, LABELS, network(), "crossentropy", options)


def test_two_cpu_workers_equal_one_process(monkeypatch):
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    parallel, parallel_info = train("parallel")
    single, single_info = train("cpu")
    start = mlp()
    for (_, _, got), (_, _, expected), (_, _, initial) in zip(
        parallel.Learnables, single.Learnables, start.Learnables, strict=True
    ):
        assert not torch.equal(expected, initial)
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)
    # MiniBatchSize 7 over 2 workers: shares of 4 and 3, the loss and accuracy of the whole mini-batch
    np.testing.assert_allclose(
        parallel_info.TrainingHistory.Loss, single_info.TrainingHistory.Loss, rtol=1e-10
    )
    np.testing.assert_allclose(
        parallel_info.TrainingHistory.Accuracy, single_info.TrainingHistory.Accuracy, rtol=1e-10
    )


def normalized():
    torch.manual_seed(0)
    layers = [
        dlf.featureInputLayer(3),
        dlf.batchNormalizationLayer(),
        dlf.fullyConnectedLayer(2),
        dlf.softmaxLayer(),
    ]
    return dlf.dlnetwork(layers).to(torch.float64)


def test_state_is_averaged_over_the_workers(monkeypatch):
    """Batch normalization right after the input: its running mean sees only the data, and the
    workers' running means, averaged by their shares, are the one process's running mean (the
    running variance is not: it misses the spread between the workers' batch means)."""
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    parallel, _ = train("parallel", normalized)
    single, _ = train("cpu", normalized)
    mean = next(value for _, name, value in parallel.State if name == "TrainedMean")
    expected = next(value for _, name, value in single.State if name == "TrainedMean")
    assert not torch.equal(expected, torch.zeros_like(expected))
    torch.testing.assert_close(mean, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("size", "expected"), [(2, [[0, 1, 2, 3], [4, 5, 6]]), (3, [[0, 1, 2], [3, 4], [5, 6]])]
)
def test_a_mini_batch_is_divided_among_the_ranks_in_order(size, expected):
    indices = torch.arange(7)
    shares = [_distributed.Group(rank, size).share(indices).tolist() for rank in range(size)]
    assert shares == expected


@pytest.mark.parametrize("environment", ["gpu", "multi-gpu"])
def test_gpu_environments_without_cuda_are_clear_errors(monkeypatch, environment):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DLFormatError, match=f'"{environment}": no CUDA device'):
        train(environment)


def test_worker_count_must_be_a_positive_integer(monkeypatch):
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "two")
    with pytest.raises(DLFormatError, match="DLFORMAT_NUM_WORKERS must be a positive integer"):
        train("parallel")


def test_functions_that_cannot_be_pickled_are_a_clear_error(monkeypatch):
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False, ExecutionEnvironment="parallel")
    with pytest.raises(DLFormatError, match="must be defined at module level"):
        dlf.trainnet(X, LABELS, mlp(), lambda Y, T: dlf.crossentropy(Y, T), options)


def stop_at_four(info):
    """An output function asking to stop at iteration 4: rank 0 calls it; every rank stops."""
    return info["State"] == "iteration" and info["Iteration"] == 4


def test_an_output_function_on_rank_0_stops_every_worker(monkeypatch):
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    options = dlf.trainingOptions(
        "adam", MaxEpochs=3, MiniBatchSize=7, Verbose=False, ExecutionEnvironment="parallel",
        OutputFcn=stop_at_four, Metrics="fscore",
    )  # fmt: skip
    _, info = dlf.trainnet(X, LABELS, mlp(), "crossentropy", options)
    assert info.StopReason == "Stopped by OutputFcn" and len(info.TrainingHistory) == 4


def test_an_error_a_worker_raises_reaches_the_caller_as_a_dlformat_error(monkeypatch):
    # this check runs inside each worker, once training starts: spawn's own exception would hide it
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=1, Verbose=False, ExecutionEnvironment="parallel", OutputNetwork="best-validation"
    )
    with pytest.raises(DLFormatError, match='OutputNetwork "best-validation" needs ValidationData'):
        dlf.trainnet(X, LABELS, mlp(), "crossentropy", options)
