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


@pytest.mark.parametrize(
    ("loads", "count", "expected"),
    [
        ((1.0, 1.0), 7, [4, 3]),  # equal loads: the split without WorkerLoad
        ((1.0, 2.0, 1.0), 8, [2, 4, 2]),
        ((3.0, 1.0), 7, [5, 2]),  # 7 * 3/4 = 5.25 observations: rank 0 ends at 5
        ((0.5, 0.25, 0.25), 10, [5, 3, 2]),  # ends at round(5), round(7.5) = 8, 10
    ],
)
def test_worker_loads_divide_a_mini_batch_in_proportion(loads, count, expected):
    """WorkerLoad's vector: worker i takes W(i)/sum(W) of each mini-batch, in order."""
    groups = [_distributed.Group(rank, len(loads), loads=loads) for rank in range(len(loads))]
    assert groups[0].shares(count) == expected
    parts = [group.share(torch.arange(count)).tolist() for group in groups]
    assert parts == [list(range(sum(expected[:r]), sum(expected[: r + 1]))) for r in range(len(loads))]


@pytest.mark.parametrize(
    ("load", "pool", "expected"),
    [(None, 4, 4), (0.5, 4, 2), (0.3, 4, 1), (0.1, 4, 1), (1.0, 3, 3), (2, 4, 2), ((1.0, 2.0), 4, 2)],
)
def test_worker_load_picks_how_many_workers_train(load, pool, expected):
    assert _distributed.training_workers(load, pool) == expected


def test_worker_load_asking_for_more_workers_than_the_machine_has_is_an_error(monkeypatch):
    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    with pytest.raises(DLFormatError, match="WorkerLoad 3 asks for 3 training workers; this machine has 2"):
        _distributed.training_workers(3, 2)
    with pytest.raises(DLFormatError, match=r"WorkerLoad \[1 1 1\] asks for 3 training workers"):
        _distributed.training_workers((1.0, 1.0, 1.0), 2)


def test_worker_load_under_torchrun_must_use_every_started_process():
    with pytest.raises(DLFormatError, match=r"WorkerLoad 0.5 asks for 1 training workers, but 2 processes"):
        _distributed.training_workers(0.5, 2, started=True)
    assert _distributed.training_workers((1.0, 3.0), 2, started=True) == 2


def test_unequal_worker_loads_train_as_one_process(monkeypatch):
    """WorkerLoad [1 3]: shares of 2 and 5 of each 7 observations; the gradients, weighted by the
    shares, are still the whole mini-batch's, so the network is the one process's."""
    monkeypatch.delenv(_distributed.WORKERS_VARIABLE, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    options = dlf.trainingOptions(
        "adam", InitialLearnRate=0.05, MaxEpochs=2, MiniBatchSize=7, Shuffle="every-epoch",
        Verbose=False, ExecutionEnvironment="parallel", WorkerLoad=[1, 3],
    )  # fmt: skip
    torch.manual_seed(11)
    parallel, _ = dlf.trainnet(X, LABELS, mlp(), "crossentropy", options)
    options.ExecutionEnvironment = "cpu"
    torch.manual_seed(11)
    single, _ = dlf.trainnet(X, LABELS, mlp(), "crossentropy", options)
    for (_, _, got), (_, _, expected) in zip(parallel.Learnables, single.Learnables, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


def test_a_worker_load_that_leaves_a_worker_no_observations_is_an_error(monkeypatch):
    group = _distributed.Group(0, 2, loads=(1.0, 20.0))
    assert group.shares(7) == [0, 7]
    monkeypatch.setattr(_distributed, "group_for", lambda *args: group)
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=7, Verbose=False)
    with pytest.raises(
        DLFormatError, match="7 observations cannot be divided among 2 workers with their WorkerLoad"
    ):
        dlf.trainnet(X, LABELS, mlp(), "crossentropy", options)
