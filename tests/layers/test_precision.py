"""MATLAB's precision rule in every layer (issue 23, item 4): float64 data through float64
learnables computes in float64, and single wins where a float32 value takes part ("Combining
single values with double values yields a single matrix", MathWorks, *Valid Combinations of Unlike
Classes*; docs/porting.md, "Precision").

The recurrent layers' default states are zeros the layer makes itself: they have no precision of
their own and take the data's and learnables' (they were float32 zeros, which made float64 data
and learnables compute in float32). Every layer of the contract table runs on float64 data with
float64 learnables in a float32 module; the recurrent and batch normalization layers are checked
against float64 NumPy references of MATLAB's equations.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import dlformat as dlf

from ..functional.test_recurrent import gru_reference, lstm_reference
from .test_contract import LAYERS, call, make_input

TOLERANCE = {"rtol": 1e-12, "atol": 1e-12}
D, B, T, H = 3, 2, 6, 4


def with_float64_learnables(layer: dlf.Layer, fmt: str, sizes) -> dlf.Layer:
    """``layer`` (a float32 module) with its learnables in float64 and its state as it started."""
    if not layer.Initialized:  # lazy learnables: created by a first input, then the state reset
        call(layer.eval(), make_input(fmt, sizes))
        layer.resetState()
    for name in layer.learnables:
        setattr(layer, name, getattr(layer, name).detach().double())
    return layer.eval()


@pytest.mark.parametrize(("factory", "fmt", "sizes"), LAYERS)
def test_every_layer_computes_float64_data_with_float64_learnables_in_float64(factory, fmt, sizes):
    """The output is float64 and equals, to 1e-12, the same layer made float64 whole (state and
    all): no float32 value takes part anywhere."""
    layer = with_float64_learnables(factory(), fmt, sizes)
    assert all(getattr(layer, name).dtype == torch.float64 for name in layer.learnables)
    whole = copy.deepcopy(layer).double()
    X = make_input(fmt, sizes, dtype=torch.float64)
    Y = call(layer, X)
    assert Y.dtype == torch.float64, f"{type(layer).__name__} computed in {Y.dtype}"
    torch.testing.assert_close(dlf.extractdata(Y), dlf.extractdata(call(whole, X)), **TOLERANCE)


def numpy(value) -> np.ndarray:
    return (dlf.extractdata(value) if isinstance(value, dlf.DLArray) else value).detach().numpy()


def sequence(seed: int = 0) -> tuple[np.ndarray, dlf.DLArray]:
    x = 1.5 * np.random.default_rng(seed).standard_normal((D, B, T))
    return x, dlf.dlarray(torch.from_numpy(x), "CBT")


def draws(rows: int, columns: int, seed: int) -> np.ndarray:
    return 0.5 * np.random.default_rng(seed).standard_normal((rows, columns))


def lstm_weights(directions: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    rows = 4 * directions * H
    return {
        "InputWeights": draws(rows, D, seed),
        "RecurrentWeights": draws(rows, H, seed + 1),
        "Bias": draws(rows, 1, seed + 2),
    }


def bilstm_reference(x, W, R, b):
    zeros, rows = np.zeros((H, B)), 4 * H
    forward, hf, cf = lstm_reference(x, zeros, zeros, W[:rows], R[:rows], b[:rows])
    backward, hb, cb = lstm_reference(x[:, :, ::-1], zeros, zeros, W[rows:], R[rows:], b[rows:])
    return np.concatenate([forward, backward[:, :, ::-1]]), np.concatenate([hf, hb]), np.concatenate([cf, cb])


GRU_MODES = ["after-multiplication", "before-multiplication", "recurrent-bias-after-multiplication"]


def gru_weights(mode: str, seed: int = 0) -> dict[str, np.ndarray]:
    bias_rows = 6 * H if mode == "recurrent-bias-after-multiplication" else 3 * H
    return {
        "InputWeights": draws(3 * H, D, seed),
        "RecurrentWeights": draws(3 * H, H, seed + 1),
        "Bias": draws(bias_rows, 1, seed + 2),
    }


def test_lstm_with_float64_learnables_given_computes_matlabs_float64_values():
    """As load_network builds a layer MATLAB saved in double: the learnables given, no state."""
    x, X = sequence(1)
    given = lstm_weights()
    layer = dlf.lstmLayer(H, **given)
    assert layer.HiddenState.dtype == torch.float32  # the start zeros, made in the default dtype
    Y = layer(X)
    zeros = np.zeros((H, B))
    expected, h, c = lstm_reference(x, zeros, zeros, *given.values())
    assert Y.dtype == torch.float64
    np.testing.assert_allclose(numpy(Y), expected, **TOLERANCE)
    np.testing.assert_allclose(numpy(layer.HiddenState), h, **TOLERANCE)
    np.testing.assert_allclose(numpy(layer.CellState), c, **TOLERANCE)
    assert layer.HiddenState.dtype == torch.float64  # the computed state keeps the call's precision


@pytest.mark.parametrize("mode", ["sequence", "last"])
def test_bilstm_with_float64_learnables_given(mode):
    x, X = sequence(2)
    given = lstm_weights(directions=2, seed=3)
    layer = dlf.bilstmLayer(H, OutputMode=mode, **given)
    Y = layer(X)
    expected, _, c = bilstm_reference(x, *given.values())
    if mode == "last":
        expected = expected[:, :, -1]
    assert Y.dtype == torch.float64
    np.testing.assert_allclose(numpy(Y), expected, **TOLERANCE)
    np.testing.assert_allclose(numpy(layer.CellState), c, **TOLERANCE)


@pytest.mark.parametrize("mode", GRU_MODES)
def test_gru_with_float64_learnables_given(mode):
    x, X = sequence(4)
    given = gru_weights(mode, seed=5)
    layer = dlf.gruLayer(H, ResetGateMode=mode, **given)
    Y = layer(X)
    expected, h = gru_reference(x, np.zeros((H, B)), *given.values(), mode)
    assert Y.dtype == torch.float64
    np.testing.assert_allclose(numpy(Y), expected, **TOLERANCE)
    np.testing.assert_allclose(numpy(layer.HiddenState), h, **TOLERANCE)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_projected_layers_with_float64_learnables(kind):
    x, X = sequence(6)
    generator = np.random.default_rng(7)
    gates = 4 if kind == "lstm" else 3
    given = {
        "InputWeights": generator.standard_normal((gates * H, 2)),
        "RecurrentWeights": generator.standard_normal((gates * H, 3)),
        "Bias": generator.standard_normal((gates * H, 1)),
        "InputProjector": generator.standard_normal((D, 2)),
        "OutputProjector": generator.standard_normal((H, 3)),
    }
    construct = dlf.lstmProjectedLayer if kind == "lstm" else dlf.gruProjectedLayer
    layer = construct(H, 3, 2, **given)
    Y = layer(X)
    W = given["InputWeights"] @ given["InputProjector"].T
    R = given["RecurrentWeights"] @ given["OutputProjector"].T
    zeros = np.zeros((H, B))
    if kind == "lstm":
        expected = lstm_reference(x, zeros, zeros, W, R, given["Bias"])[0]
    else:
        expected = gru_reference(x, zeros, W, R, given["Bias"])[0]
    assert Y.dtype == torch.float64
    np.testing.assert_allclose(numpy(Y), expected, **TOLERANCE)


def test_learnables_assigned_float64_after_construction_compute_in_float64():
    x, X = sequence(8)
    layer = dlf.gruLayer(H, InputSize=D)
    given = gru_weights("after-multiplication", seed=9)
    for name, value in given.items():
        setattr(layer, name, value)
    expected = gru_reference(x, np.zeros((H, B)), *given.values())[0]
    np.testing.assert_allclose(numpy(layer(X)), expected, **TOLERANCE)


def test_a_network_keeps_float64_through_predict_and_update_state():
    """predictAndUpdateState assigns the float64 state a call computed: the next call goes on in
    float64 from it (a value assigned to the start zeros takes its own precision)."""
    x, X = sequence(10)
    given = lstm_weights(seed=11)
    net = dlf.dlnetwork([dlf.sequenceInputLayer(D), dlf.lstmLayer(H, **given)])
    zeros = np.zeros((H, B))
    first, h, c = lstm_reference(x[:, :, :3], zeros, zeros, *given.values())
    second = lstm_reference(x[:, :, 3:], h, c, *given.values())[0]
    steps = X._data
    np.testing.assert_allclose(numpy(net.predict(dlf.dlarray(steps[:, :, :3], "CBT"))), first, **TOLERANCE)
    Y = dlf.predictAndUpdateState(net, dlf.dlarray(steps[:, :, :3], "CBT"))
    assert Y.dtype == torch.float64 and all(value.dtype == torch.float64 for value in net.State.Value)
    np.testing.assert_allclose(numpy(net.predict(dlf.dlarray(steps[:, :, 3:], "CBT"))), second, **TOLERANCE)
    dlf.resetState(net)
    np.testing.assert_allclose(numpy(net.predict(dlf.dlarray(steps[:, :, :3], "CBT"))), first, **TOLERANCE)


def test_single_still_wins():
    """float64 data with float32 learnables, or with a float32 state the user gave, is float32."""
    _, X = sequence(12)
    given = lstm_weights(seed=13)
    single = dlf.lstmLayer(H, **{name: value.astype(np.float32) for name, value in given.items()})
    assert single(X).dtype == torch.float32
    stated = dlf.lstmLayer(H, **given, HiddenState=np.zeros((H, 1), dtype=np.float32))
    assert stated(X).dtype == torch.float32


def test_batch_normalization_with_float64_learnables_and_its_start_statistics():
    """predict: (x - 0) / sqrt(1 + eps) · scale + offset in float64; forward keeps the updated
    statistics in float64 (MathWorks' rule: decay · batch statistic + (1 - decay) · trained)."""
    generator = np.random.default_rng(14)
    scale, offset = generator.standard_normal((3, 1)), generator.standard_normal((3, 1))
    layer = dlf.batchNormalizationLayer(NumChannels=3, Scale=scale, Offset=offset)
    x = generator.standard_normal((3, 5))
    X = dlf.dlarray(torch.from_numpy(x), "CB")
    expected = x / np.sqrt(1 + 1e-5) * scale + offset
    Y = layer(X, training=False)
    assert Y.dtype == torch.float64
    np.testing.assert_allclose(numpy(Y), expected, **TOLERANCE)
    layer(X, training=True)
    mean = 0.1 * x.mean(axis=1, keepdims=True)
    variance = 0.1 * x.var(axis=1, keepdims=True) + 0.9
    assert layer.TrainedMean.dtype == torch.float64
    np.testing.assert_allclose(numpy(layer.TrainedMean), mean, **TOLERANCE)
    np.testing.assert_allclose(numpy(layer.TrainedVariance), variance, **TOLERANCE)
