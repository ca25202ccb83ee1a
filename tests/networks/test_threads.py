"""One network, many threads: every call's state is local to the call (issue 24, item 1).

Each thread runs the same shared network on its own data with its own batch size; every value
must equal, bit for bit, what the same call gives alone. A run that kept its per-batch state on
the shared layers mixed the threads' states: wrong numbers, or "HiddenState must be 50×1 or 50×3;
got 50×2".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat._display import Table
from dlformat.io import load_network

THREADS = 6
CALLS = 4  # per thread, each with its own batch size and data


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread per call: the test's threads, not torch's pool, make the concurrency
    (and 6 threads each spinning up torch's pool on a small machine only make it slow)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _plain(value: Any) -> Any:
    """A result as plain tensors and arrays (dlarrays, tuples and lists of them, State tables)."""
    if isinstance(value, dlf.DLArray):
        return dlf.extractdata(value)
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, Table):
        return [_plain(row) for row in value]
    return value


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))  # labels: arrays or categoricals


def assert_threads_match_serial(call: Callable[[Any], Any], inputs: list[Any]) -> None:
    """``call`` of every input from THREADS threads at once, each result equal to the serial one."""
    expected = [_plain(call(X)) for X in inputs]
    start = threading.Barrier(THREADS)

    def worker(first: int) -> list[tuple[int, Any]]:
        start.wait()  # all threads run together
        done = []
        for index in range(first, len(inputs), THREADS):
            try:
                done.append((index, _plain(call(inputs[index]))))
            except Exception as error:  # reported below with the serial result
                done.append((index, error))
        return done

    with ThreadPoolExecutor(THREADS) as pool:
        results = [item for chunk in pool.map(worker, range(THREADS)) for item in chunk]
    assert len(results) == len(inputs)
    wrong = [index for index, got in results if not _equal(got, expected[index])]
    errors = [f"{index}: {got}" for index, got in results if isinstance(got, Exception)]
    assert not wrong, f"{len(wrong)} of {len(inputs)} threaded calls differ from serial ones; {errors[:2]}"


def sequences(channels: int, steps: int = 30, seed: int = 0) -> list[dlf.DLArray]:
    """THREADS × CALLS "CBT" batches of 1 to 4 observations, each its own data."""
    generator = torch.Generator().manual_seed(seed)
    sizes = [1 + index % 4 for index in range(THREADS * CALLS)]
    return [dlf.dlarray(torch.randn(channels, batch, steps, generator=generator), "CBT") for batch in sizes]


def images(seed: int = 0) -> list[dlf.DLArray]:
    generator = torch.Generator().manual_seed(seed)
    sizes = [1 + index % 5 for index in range(THREADS * CALLS)]
    return [dlf.dlarray(torch.randn(8, 8, 3, batch, generator=generator), "SSCB") for batch in sizes]


RECURRENT = {
    "lstm": lambda: dlf.lstmLayer(16),
    "bilstm": lambda: dlf.bilstmLayer(8),
    "gru": lambda: dlf.gruLayer(16),
    "lstm-last": lambda: dlf.lstmLayer(16, OutputMode="last"),
    "gru-looped": lambda: dlf.gruLayer(8, ResetGateMode="before-multiplication"),
}


def recurrent_net(kind: str) -> dlf.DLNetwork:
    torch.manual_seed(0)
    return dlf.dlnetwork(
        [dlf.sequenceInputLayer(3), RECURRENT[kind](), RECURRENT[kind](), dlf.fullyConnectedLayer(2)]
    )


def cnn() -> dlf.DLNetwork:
    torch.manual_seed(0)
    net = dlf.dlnetwork(
        [
            dlf.imageInputLayer([8, 8, 3], Normalization="none"),
            dlf.convolution2dLayer(3, 4, Padding="same"),
            dlf.batchNormalizationLayer(),
            dlf.reluLayer(),
            dlf.dropoutLayer(0.3),
            dlf.maxPooling2dLayer(2, Stride=2),
            dlf.fullyConnectedLayer(3),
            dlf.softmaxLayer(),
        ]
    )
    # statistics other than the start values, so that predict uses real ones
    dlf.forward(net, images(seed=1)[4])
    return net


@pytest.mark.parametrize("kind", list(RECURRENT))
def test_predict_of_a_recurrent_dlnetwork_from_threads_equals_serial(kind):
    net = recurrent_net(kind)
    assert_threads_match_serial(lambda X: dlf.predict(net, X), sequences(3))
    assert len(net.State) and all(value.shape[1] == 1 for value in net.State.Value)  # untouched


@pytest.mark.parametrize("kind", ["lstm", "bilstm", "gru"])
def test_forward_and_returned_state_from_threads_equal_serial(kind):
    net = recurrent_net(kind)
    assert_threads_match_serial(lambda X: dlf.forward(net, X, ReturnState=True), sequences(3, seed=2))
    assert_threads_match_serial(lambda X: net.predict(X, ReturnState=True), sequences(3, seed=3))


def test_predict_of_a_cnn_with_batch_normalization_from_threads_equals_serial():
    net = cnn()
    state = [value.clone() for value in net.State.Value]
    assert_threads_match_serial(lambda X: dlf.predict(net, X), images())
    assert all(torch.equal(a, b) for a, b in zip(net.State.Value, state, strict=True))


def test_minibatchpredict_from_threads_equals_serial():
    net = recurrent_net("lstm")
    generator = np.random.default_rng(0)
    inputs = [
        [
            generator.standard_normal((int(steps), 3)).astype(np.float32)
            for steps in generator.integers(2, 20, 5)
        ]
        for _ in range(THREADS * CALLS)
    ]
    assert_threads_match_serial(
        lambda X: dlf.minibatchpredict(net, X, MiniBatchSize=2, UniformOutput=False), inputs
    )


def series_network() -> Any:
    torch.manual_seed(0)
    layers = [
        dlf.sequenceInputLayer(3),
        dlf.lstmLayer(8, InputSize=3),
        dlf.gruLayer(8, InputSize=8, OutputMode="last"),
        dlf.fullyConnectedLayer(2, InputSize=8),
        dlf.softmaxLayer(),
        dlf.classificationLayer(Classes=["a", "b"]),
    ]
    return dlf.assembleNetwork(layers)


def test_series_network_predict_and_classify_from_threads_equal_serial():
    net = series_network()
    assert_threads_match_serial(lambda X: dlf.predict(net, X), sequences(3, seed=4))
    assert_threads_match_serial(lambda X: dlf.classify(net, X), sequences(3, seed=5))


def test_legacy_predict_of_chunked_sequences_from_threads_equals_serial():
    """SequenceLength as a number runs chunks one after another, the state carried between them:
    within the call, never through the network's State."""
    net = series_network()
    generator = np.random.default_rng(1)
    inputs = [
        [
            generator.standard_normal((3, int(steps))).astype(np.float32)
            for steps in generator.integers(3, 25, 3)
        ]
        for _ in range(THREADS * CALLS)
    ]
    before = [value.clone() for value in net.body.State.Value]
    assert_threads_match_serial(lambda X: net.predict(X, SequenceLength=4, MiniBatchSize=2), inputs)
    assert all(torch.equal(a, b) for a, b in zip(net.body.State.Value, before, strict=True))


def test_dag_network_predict_from_threads_equals_serial():
    torch.manual_seed(0)
    lgraph = dlf.layerGraph(
        [
            dlf.imageInputLayer([8, 8, 3], Normalization="none", Name="in"),
            dlf.convolution2dLayer(3, 3, NumChannels=3, Padding="same", Name="conv"),
            dlf.batchNormalizationLayer(NumChannels=3, Name="bn"),
            dlf.additionLayer(2, Name="add"),
            dlf.globalAveragePooling2dLayer(Name="gap"),
            dlf.fullyConnectedLayer(2, InputSize=3, Name="fc"),
            dlf.softmaxLayer(Name="softmax"),
            dlf.classificationLayer(Classes=["x", "y"], Name="out"),
        ]
    )
    net = dlf.assembleNetwork(dlf.connectLayers(lgraph, "in", "add/in2"))
    assert_threads_match_serial(lambda X: dlf.classify(net, X), images(seed=6))


@pytest.mark.parametrize(
    ("file", "channels"),
    [("agoro_gru_ph_model.mat", 1), ("mdl_anom__Results_TrainedNetwork.mat", None)],
    ids=["gru", "bilstm"],
)
def test_real_saved_recurrent_network_from_threads_equals_serial(networks: Path, file, channels):
    net = load_network(networks / file)
    size = channels or net.Layers[0].InputSize
    assert_threads_match_serial(lambda X: dlf.predict(net, X), sequences(int(size), steps=20, seed=7))


class Counting(dlf.Layer):
    """A custom layer that assigns its state, computes a while (other threads run meanwhile) and
    reads its state back in the same call."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_state("Count", torch.zeros(1))

    def predict(self, X):
        self.Count = self.Count + dlf.extractdata(X).sum()
        work = torch.ones(300, 300)
        torch.mm(work, work)  # releases the GIL
        return X * self.Count


def test_a_custom_layers_state_is_local_to_each_call():
    net = dlf.dlnetwork([dlf.featureInputLayer(2), Counting(Name="count")])
    generator = torch.Generator().manual_seed(0)
    inputs = [
        dlf.dlarray(torch.randn(2, 1 + i % 3, generator=generator), "CB") for i in range(THREADS * CALLS)
    ]
    assert_threads_match_serial(lambda X: net.predict(X, ReturnState=True), inputs)
    assert float(net.Layers["count"].Count) == 0.0  # recurrent-style state is not kept


def test_a_network_layer_runs_its_nested_network_in_the_outer_calls_state():
    """A nested network's call starts from the outer call's state and hands its kept updates to it:
    its recurrent state is local to each call, its batch normalization update reaches the nested
    network when the outer training call ends."""
    torch.manual_seed(0)
    block = dlf.networkLayer(
        [dlf.lstmLayer(8, Name="lstm"), dlf.batchNormalizationLayer(Name="bn")], Name="block"
    )
    net = dlf.dlnetwork([dlf.sequenceInputLayer(3), block, dlf.fullyConnectedLayer(2)])
    assert_threads_match_serial(lambda X: dlf.predict(net, X), sequences(3, seed=8))
    nested = block.Network
    assert all(value.shape[1] == 1 for value in nested.State.Value[:2])  # LSTM state untouched
    mean = nested.Layers["bn"].TrainedMean.clone()
    dlf.forward(net, sequences(3, seed=9)[3])
    assert not torch.equal(nested.Layers["bn"].TrainedMean, mean)
