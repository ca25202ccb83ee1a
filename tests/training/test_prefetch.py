"""PreprocessingEnvironment (and the legacy DispatchInBackground): mini-batches cut ahead in
threads come in the same order with the same values, so the trained network is the serial one's."""

from __future__ import annotations

import threading

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training._prefetch import prefetched

ENVIRONMENTS = ["serial", "background", "parallel"]


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_mini_batches_come_in_order(environment):
    assert list(prefetched(environment, lambda p: p * p, 6)) == [0, 1, 4, 9, 16, 25]
    assert list(prefetched(environment, lambda p: p, 0)) == []


@pytest.mark.parametrize("environment", ["background", "parallel"])
def test_they_are_cut_in_another_thread(environment):
    threads = set()

    def cut(position):
        threads.add(threading.current_thread().name)
        return position

    assert list(prefetched(environment, cut, 4)) == [0, 1, 2, 3]
    assert all(name.startswith("dlformat-minibatch") for name in threads)


def test_background_cuts_one_ahead_and_a_stop_leaves_the_rest_uncut():
    cut_positions = []

    def cut(position):
        cut_positions.append(position)
        return position

    for position in prefetched("background", cut, 100):
        if position == 3:
            break
    # the one after the stop may have been under way already; none after it is cut
    assert cut_positions in ([0, 1, 2, 3], [0, 1, 2, 3, 4])


@pytest.mark.parametrize("environment", ["background", "parallel"])
def test_an_error_while_cutting_reaches_training(environment):
    def cut(position):
        if position == 2:
            raise DLFormatError("bad mini-batch 2")
        return position

    with pytest.raises(DLFormatError, match="bad mini-batch 2"):
        list(prefetched(environment, cut, 5))


def _trained(**preprocessing):
    torch.manual_seed(5)
    sequences = [torch.randn(3, int(n)) for n in torch.randint(5, 12, (20,))]
    responses = torch.stack([x[:, -2:].mean().reshape(1) for x in sequences])
    layers = [dlf.sequenceInputLayer(3), dlf.lstmLayer(4, OutputMode="last"), dlf.fullyConnectedLayer(1)]
    options = dlf.trainingOptions(
        "adam", MaxEpochs=2, MiniBatchSize=6, Shuffle="every-epoch", Verbose=False, **preprocessing
    )
    net, info = dlf.trainnet(sequences, responses, layers, "mse", options)
    return net, info


@pytest.mark.parametrize(
    "preprocessing",
    [
        {"PreprocessingEnvironment": "background"},
        {"PreprocessingEnvironment": "parallel"},
        {"DispatchInBackground": True},
    ],
)
def test_training_with_mini_batches_cut_ahead_is_trainings_without(preprocessing):
    """Padded variable-length sequences, shuffled every epoch: the same network, bit for bit."""
    serial, serial_info = _trained()
    ahead, ahead_info = _trained(**preprocessing)
    assert serial_info.TrainingHistory.Loss == ahead_info.TrainingHistory.Loss
    for (_, _, expected), (_, _, got) in zip(serial.Learnables, ahead.Learnables, strict=True):
        assert torch.equal(got, expected)
