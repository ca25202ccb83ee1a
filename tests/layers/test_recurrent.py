"""``lstmLayer``, ``bilstmLayer`` and ``gruLayer``: values against the float64 NumPy references of
MATLAB's equations (tests/functional/test_recurrent.py), weight shapes and initializers,
OutputMode, state ports, the layer's state carried between calls, and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.layers import _initializers

from ..functional.test_recurrent import gru_reference, lstm_reference

D, B, T, H = 3, 2, 6, 4


def numpy(value):
    return (
        dlf.extractdata(value).detach().numpy() if isinstance(value, dlf.DLArray) else value.detach().numpy()
    )


def sequence(seed=0, shape=(D, B, T)):
    x = 1.5 * np.random.default_rng(seed).standard_normal(shape)
    return x, dlf.dlarray(torch.from_numpy(x), "CBT")


@pytest.mark.parametrize(
    ("construct", "rows"),
    [
        pytest.param(dlf.lstmLayer, 4 * 32, id="lstm"),
        pytest.param(dlf.bilstmLayer, 8 * 32, id="bilstm"),
        pytest.param(dlf.gruLayer, 3 * 32, id="gru"),
    ],
)
def test_learnable_shapes_follow_the_first_input(construct, rows):
    layer = construct(32)
    assert layer.InputSize == "auto" and layer.InputWeights is None
    layer(dlf.dlarray(torch.randn(16, 2, 5), "CBT"))
    assert tuple(layer.InputWeights.shape) == (rows, 16)
    assert tuple(layer.RecurrentWeights.shape) == (rows, 32)
    assert tuple(layer.Bias.shape) == (rows, 1)
    assert layer.InputSize == 16 and layer.NumHiddenUnits == 32


def test_default_initializers_glorot_orthogonal_unit_forget_gate():
    layer = dlf.lstmLayer(8, InputSize=5, dtype=torch.float64)
    bound = np.sqrt(6 / (5 + 4 * 8))  # MATLAB's glorot: numIn = InputSize, numOut = 4*NumHiddenUnits
    assert layer.InputWeights.abs().max() <= bound
    R = layer.RecurrentWeights.detach()
    torch.testing.assert_close(R.T @ R, torch.eye(8, dtype=torch.float64))  # orthonormal columns
    expected = np.concatenate([np.zeros(8), np.ones(8), np.zeros(16)])  # input, forget, candidate, output
    np.testing.assert_array_equal(numpy(layer.Bias)[:, 0], expected)


def test_bilstm_unit_forget_gate_in_both_directions_and_gru_bias_zeros():
    bias = numpy(dlf.bilstmLayer(2, InputSize=3).Bias)[:, 0]
    np.testing.assert_array_equal(bias, np.tile([0, 0, 1, 1, 0, 0, 0, 0], 2))
    assert not dlf.gruLayer(2, InputSize=3).Bias.any()


@pytest.mark.parametrize("shape", [(12, 3), (3, 12), (5, 5)])
def test_orthogonal_initializer_tall_wide_and_square(shape):
    q = _initializers.initialize(
        "orthogonal", shape, num_in=shape[1], num_out=shape[0], dtype=torch.float64, device=None
    )
    small = min(shape)
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    torch.testing.assert_close(gram, torch.eye(small, dtype=torch.float64))


@pytest.mark.parametrize(
    "initializer",
    [
        pytest.param("orthogonal", id="orthogonal"),  # LAPACK's Q is column-major
        pytest.param(lambda sz: torch.arange(float(sz[0] * sz[1])).reshape(sz[1], sz[0]).T, id="callable"),
    ],
)
def test_drawn_weights_are_stored_row_major_with_the_drawn_values(initializer):
    """torch's fused kernels copy a non-contiguous weight on every call: the layer stores the
    values drawn, in row-major memory."""
    drawn = _initializers.initialize(
        initializer, (12, 3), num_in=3, num_out=12, dtype=torch.float32, device=None,
        generator=torch.Generator().manual_seed(5),
    )  # fmt: skip
    if initializer == "orthogonal":
        normal = torch.empty(12, 3).normal_(0.0, 1.0, generator=torch.Generator().manual_seed(5))
        expected = torch.linalg.qr(normal)[0]
    else:
        expected = torch.arange(36.0).reshape(3, 12).T
    assert drawn.is_contiguous()
    torch.testing.assert_close(drawn, expected, rtol=0, atol=0)
    layer = dlf.lstmLayer(3, InputSize=2, RecurrentWeightsInitializer=initializer)
    assert layer.RecurrentWeights.is_contiguous()


def test_initializer_names_per_property():
    layer = dlf.lstmLayer(2, InputWeightsInitializer="orthogonal", BiasInitializer="narrow-normal")
    assert layer.InputWeightsInitializer == "orthogonal"
    with pytest.raises(DLFormatError, match="BiasInitializer"):
        dlf.lstmLayer(2, BiasInitializer="orthogonal")
    with pytest.raises(DLFormatError, match="BiasInitializer"):
        dlf.gruLayer(2, BiasInitializer="unit-forget-gate")
    with pytest.raises(DLFormatError, match="WeightsInitializer"):
        dlf.fullyConnectedLayer(2, WeightsInitializer="orthogonal")  # only the recurrent layers take it


# lstmProjectedLayer / gruProjectedLayer: MATLAB stores W' = W Q and applies W' Qᵀ (the pages'
# description; MathWorks' TensorFlow exporter exports the layer as the plain one with
# InputWeights * InputProjector' and RecurrentWeights * OutputProjector'). The references form
# those products in NumPy and run the plain layer's equations.
PROJECTORS = {"InputProjectorInitializer": "orthogonal", "OutputProjectorInitializer": "narrow-normal"}
P_OUT, P_IN = 3, 2


def weights(layer):
    """The input and recurrent weights (of a projected layer: the products they stand for) and the
    bias, in NumPy."""
    W, R = numpy(layer.InputWeights), numpy(layer.RecurrentWeights)
    if "InputProjector" in layer.learnables:
        W, R = W @ numpy(layer.InputProjector).T, R @ numpy(layer.OutputProjector).T
    return W, R, numpy(layer.Bias)


PLAIN_AND_PROJECTED = [
    pytest.param(lambda plain, **kw: plain(H, InputSize=D, **kw), id="plain"),
    pytest.param(lambda plain, **kw: PROJECTED[plain](H, P_OUT, P_IN, **PROJECTORS, **kw), id="projected"),
]
PROJECTED = {dlf.lstmLayer: dlf.lstmProjectedLayer, dlf.gruLayer: dlf.gruProjectedLayer}


@pytest.mark.parametrize("construct", PLAIN_AND_PROJECTED)
@pytest.mark.parametrize(
    ("state", "gate"),
    [("tanh", "sigmoid"), ("softsign", "hard-sigmoid")],
)
@pytest.mark.parametrize("mode", ["sequence", "last"])
def test_lstm_layer_values(construct, state, gate, mode):
    x, X = sequence(1)
    layer = construct(
        dlf.lstmLayer, OutputMode=mode, StateActivationFunction=state, GateActivationFunction=gate,
        BiasInitializer="narrow-normal", dtype=torch.float64,
    )  # fmt: skip
    Y = layer(X)
    zeros = np.zeros((H, B))
    expected, h, c = lstm_reference(x, zeros, zeros, *weights(layer), state, gate)
    if mode == "last":
        expected = expected[:, :, -1]
    assert dlf.dims(Y) == ("CBT" if mode == "sequence" else "CB")
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(layer.HiddenState), h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(layer.CellState), c, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("construct", PLAIN_AND_PROJECTED)
@pytest.mark.parametrize(
    "mode", ["after-multiplication", "before-multiplication", "recurrent-bias-after-multiplication"]
)
def test_gru_layer_values(construct, mode):
    x, X = sequence(2)
    layer = construct(dlf.gruLayer, ResetGateMode=mode, BiasInitializer="narrow-normal", dtype=torch.float64)
    Y = layer(X)
    expected, h = gru_reference(x, np.zeros((H, B)), *weights(layer), mode)
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(layer.HiddenState), h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sequence", "last"])
def test_bilstm_is_forward_then_backward_along_c(mode):
    x, X = sequence(3)
    layer = dlf.bilstmLayer(H, OutputMode=mode, BiasInitializer="narrow-normal", dtype=torch.float64)
    Y = layer(X)
    W, R, b = numpy(layer.InputWeights), numpy(layer.RecurrentWeights), numpy(layer.Bias)[:, 0]
    zeros = np.zeros((H, B))
    rows = 4 * H
    forward, hf, cf = lstm_reference(x, zeros, zeros, W[:rows], R[:rows], b[:rows])
    backward, hb, cb = lstm_reference(x[:, :, ::-1], zeros, zeros, W[rows:], R[rows:], b[rows:])
    expected = np.concatenate([forward, backward[:, :, ::-1]], axis=0)
    if mode == "last":
        expected = expected[:, :, -1]
    assert Y.shape[0] == 2 * H
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(layer.HiddenState), np.concatenate([hf, hb]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(layer.CellState), np.concatenate([cf, cb]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "construct",
    [
        pytest.param(lambda: dlf.lstmLayer(H, InputSize=D), id="lstm"),
        pytest.param(
            lambda: dlf.lstmLayer(H, InputSize=D, StateActivationFunction="softsign"), id="lstm-looped"
        ),
        pytest.param(lambda: dlf.bilstmLayer(H, InputSize=D), id="bilstm"),
        pytest.param(lambda: dlf.gruLayer(H, InputSize=D), id="gru"),
        pytest.param(
            lambda: dlf.gruLayer(H, InputSize=D, ResetGateMode="before-multiplication"), id="gru-before"
        ),
    ],
)
def test_state_carries_over_between_calls(construct):
    """Running the steps in two calls, the second starting from the state the first assigned,
    gives the steps of one call (a bidirectional layer's backward half cannot, and is left out)."""
    x, X = sequence(4)
    whole = construct().double()
    split = copy.deepcopy(whole)
    Y = whole(X)
    first = split(dlf.dlarray(torch.from_numpy(x[:, :, :2]), "CBT"))
    second = split(dlf.dlarray(torch.from_numpy(x[:, :, 2:]), "CBT"))
    joined = np.concatenate([numpy(first), numpy(second)], axis=2)
    forward = whole.NumHiddenUnits  # the channels of the forward direction
    np.testing.assert_allclose(joined[:forward], numpy(Y)[:forward], rtol=1e-12, atol=1e-12)
    if whole.directions == 1:
        for name in whole.State:
            np.testing.assert_allclose(numpy(getattr(split, name)), numpy(getattr(whole, name)), rtol=1e-12)


LAST_STEP_LAYERS = [
    pytest.param(lambda mode: dlf.lstmLayer(H, InputSize=D, OutputMode=mode), id="lstm"),
    pytest.param(
        lambda mode: dlf.lstmLayer(H, InputSize=D, OutputMode=mode, GateActivationFunction="hard-sigmoid"),
        id="lstm-looped",
    ),
    pytest.param(lambda mode: dlf.bilstmLayer(H, InputSize=D, OutputMode=mode), id="bilstm"),
    pytest.param(lambda mode: dlf.gruLayer(H, InputSize=D, OutputMode=mode), id="gru"),
    pytest.param(
        lambda mode: dlf.gruLayer(H, InputSize=D, OutputMode=mode, ResetGateMode="before-multiplication"),
        id="gru-looped",
    ),
]


@pytest.mark.parametrize("construct", LAST_STEP_LAYERS)
@pytest.mark.parametrize(("fmt", "shape"), [("CBT", (D, B, T)), ("CT", (D, T))])
def test_last_mode_equals_the_last_step_of_the_sequence_with_gradients(construct, fmt, shape):
    """OutputMode "last" takes the last step from torch's (T, B, H) result (so its gradient reaches
    the fused kernel contiguous); "sequence" then indexing its last step is the general path:
    equal values, and equal gradients for every learnable and for the data."""
    every = construct("sequence").double()
    last = construct("last").double()
    last.load_state_dict(every.state_dict())
    x = torch.from_numpy(1.5 * np.random.default_rng(30).standard_normal(shape))
    weighting = torch.from_numpy(
        np.random.default_rng(31).standard_normal((every.directions * H, *shape[1:-1]))
    )
    results = []
    for layer, pick in ((every, lambda Y: Y[..., -1]), (last, lambda Y: Y)):
        data = x.clone().requires_grad_()
        Y = layer(dlf.dlarray(data, fmt))
        assert dlf.dims(Y) == fmt if layer is every else dlf.dims(Y) == fmt[:-1]
        value = pick(dlf.stripdims(Y))
        leaves = [data, *(getattr(layer, name) for name in layer.learnables)]
        results.append((value.detach(), *torch.autograd.grad((value * weighting).sum(), leaves)))
    for general, fast in zip(*results, strict=True):
        torch.testing.assert_close(fast, general, rtol=1e-12, atol=1e-12)


def test_the_assigned_state_is_a_detached_copy_of_the_returned_state():
    """The layer stores the final state the operation computed, without re-checking it, as a
    detached copy: changing a returned state output in place leaves the layer's state alone."""
    _, X = sequence(8)
    layer = dlf.lstmLayer(H, InputSize=D, HasStateOutputs=True, dtype=torch.float64)
    _, h, c = layer(X)
    assert not layer.HiddenState.requires_grad and not layer.CellState.requires_grad
    torch.testing.assert_close(layer.HiddenState, dlf.stripdims(h).detach(), rtol=0, atol=0)
    with torch.no_grad():
        dlf.stripdims(h).zero_()
        dlf.stripdims(c).zero_()
    assert layer.HiddenState.abs().sum() > 0 and layer.CellState.abs().sum() > 0
    assert layer.HiddenState.dtype == torch.float64 and tuple(layer.CellState.shape) == (H, B)


def test_a_state_column_is_used_for_every_observation_and_assigned_state_resets():
    x, X = sequence(5)
    h0 = np.random.default_rng(6).standard_normal((H, 1))
    layer = dlf.gruLayer(H, HiddenState=h0, InputSize=D, dtype=torch.float64)
    Y = layer(X)
    W, R, b = numpy(layer.InputWeights), numpy(layer.RecurrentWeights), numpy(layer.Bias)
    expected, _ = gru_reference(x, np.tile(h0, (1, B)), W, R, b)
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    assert tuple(layer.HiddenState.shape) == (H, B)  # per observation after a call
    with pytest.raises(DLFormatError, match=f"HiddenState must be {H} × 1 or {H} × 3"):
        layer(dlf.dlarray(torch.randn(D, 3, T, dtype=torch.float64), "CBT"))
    layer.HiddenState = torch.from_numpy(h0)  # MATLAB: assign the property to set the state
    np.testing.assert_allclose(numpy(layer(X)), expected, rtol=1e-12, atol=1e-12)


def test_state_inputs_and_outputs():
    x, X = sequence(7)
    layer = dlf.lstmLayer(H, HasStateInputs=True, HasStateOutputs=True, InputSize=D, dtype=torch.float64)
    assert (layer.InputNames, layer.OutputNames, layer.State) == (
        ("in", "hidden", "cell"),
        ("out", "hidden", "cell"),
        (),
    )
    assert layer.HiddenState is None
    h0, c0 = (np.random.default_rng(seed).standard_normal((H, B)) for seed in (8, 9))
    Y, h, c = layer(X, dlf.dlarray(torch.from_numpy(h0), "CB"), dlf.dlarray(torch.from_numpy(c0), "CB"))
    W, R, b = numpy(layer.InputWeights), numpy(layer.RecurrentWeights), numpy(layer.Bias)
    expected, expected_h, expected_c = lstm_reference(x, h0, c0, W, R, b)
    assert (dlf.dims(Y), dlf.dims(h), dlf.dims(c)) == ("CBT", "CB", "CB")
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(h), expected_h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(c), expected_c, rtol=1e-12, atol=1e-12)
    with pytest.raises(DLFormatError, match="CellState cannot be set"):
        layer.CellState = torch.zeros(H, 1)
    gru = dlf.gruLayer(H, HasStateOutputs=True)
    assert (gru.InputNames, gru.OutputNames) == (("in",), ("out", "hidden"))


def test_in_a_network_after_a_sequence_input_layer():
    net = dlf.dlnetwork(
        [dlf.sequenceInputLayer(3), dlf.lstmLayer(5, OutputMode="last"), dlf.fullyConnectedLayer(2)]
    )
    Y = dlf.predict(net, dlf.dlarray(torch.randn(3, 4, 9), "CBT"))
    assert (dlf.dims(Y), tuple(Y.shape)) == ("CB", (2, 4))
    assert [layer.Name for layer in net.Layers][1] == "lstm"


@pytest.mark.parametrize(
    ("construct", "message"),
    [
        pytest.param(lambda: dlf.lstmLayer(0), "NumHiddenUnits", id="hidden-units"),
        pytest.param(lambda: dlf.lstmLayer(2, OutputMode="first"), "OutputMode", id="output-mode"),
        pytest.param(lambda: dlf.gruLayer(2, ResetGateMode="never"), "ResetGateMode", id="reset-gate-mode"),
        pytest.param(
            lambda: dlf.lstmLayer(2, HasStateInputs="yes"), "HasStateInputs must be true or false", id="flag"
        ),
        pytest.param(
            lambda: dlf.lstmLayer(2, HasStateInputs=True, HiddenState=np.zeros((2, 1))),
            "do not set HiddenState",
            id="state-with-state-inputs",
        ),
        pytest.param(
            lambda: dlf.lstmLayer(2, CellState=np.zeros((3, 1))),
            "CellState must be a floating 2 × 1",
            id="state-size",
        ),
        pytest.param(
            lambda: dlf.lstmLayer(2, InputWeights=torch.zeros(7, 3)),
            "InputWeights must have shape 8×3",
            id="weights",
        ),
        pytest.param(
            lambda: dlf.lstmLayer(2, InputWeights=torch.zeros(8)),
            "LSTMLayer InputWeights must be a matrix of size 8×InputSize; got a 1-D array of size 8$",
            id="weights-1d",
        ),
        pytest.param(
            lambda: dlf.gruLayer(
                2, ResetGateMode="recurrent-bias-after-multiplication", Bias=torch.zeros(6, 1)
            ),
            "Bias must have shape 12×1",
            id="gru-recurrent-bias-size",
        ),
        pytest.param(
            lambda: dlf.lstmLayer(2, InputWeightsLearnRateFactor=[1, 2, 3]),
            "InputWeightsLearnRateFactor must be a scalar or a vector of 4 values, one per gate block",
            id="lstm-length",
        ),
        pytest.param(
            lambda: dlf.bilstmLayer(2, BiasLearnRateFactor=[1, 2, 3, 4]),
            "a vector of 8 values",
            id="bilstm-length",
        ),
        pytest.param(
            lambda: dlf.gruLayer(2, RecurrentWeightsL2Factor=[1, -2, 3]),
            "each value of RecurrentWeightsL2Factor must be a finite scalar >= 0; got -2",
            id="negative",
        ),
        pytest.param(
            lambda: dlf.setLearnRateFactor(dlf.gruLayer(2), "Bias", [1, 2]),
            "the LearnRateFactor of Bias must be a scalar or a vector of 3 values",
            id="set-length",
        ),
    ],
)
def test_construction_errors(construct, message):
    with pytest.raises(DLFormatError, match=message):
        construct()


def test_call_errors():
    layer = dlf.lstmLayer(2, InputSize=3, Name="enc")
    with pytest.raises(DLFormatError, match="LSTMLayer 'enc' needs a dlarray with a \"C\" dimension"):
        layer(dlf.dlarray(torch.randn(2, 5), "BT"))
    with pytest.raises(DLFormatError, match="has InputSize 3"):
        layer(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))


def test_per_gate_l2_factor_scalar_in_a_one_element_list_is_accepted():
    layer = dlf.gruLayer(2, BiasL2Factor=[0.5])
    assert layer.BiasL2Factor == 0.5 and layer.factors("Bias")["L2Factor"] == 0.5


@pytest.mark.parametrize(
    ("construct", "gates"),
    [
        pytest.param(dlf.lstmLayer, (1.0, 2.0, 0.0, 0.5), id="lstm"),
        pytest.param(dlf.bilstmLayer, (1.0, 2.0, 0.0, 0.5, 3.0, 1.0, 1.0, 0.25), id="bilstm"),
        pytest.param(dlf.gruLayer, (0.5, 1.0, 2.0), id="gru"),
        pytest.param(
            lambda n, **kw: dlf.lstmProjectedLayer(n, 2, 2, **PROJECTORS, **kw), (1, 2, 3, 4), id="lstmp"
        ),
    ],
)
def test_per_gate_factor_vectors_apply_row_by_row(construct, gates):
    """MATLAB's LSTMLayer/BiLSTMLayer classes expand a per-gate vector to one value per row."""
    layer = construct(3, InputWeightsLearnRateFactor=list(gates), BiasL2Factor=np.array(gates), InputSize=2)
    assert layer.InputWeightsLearnRateFactor == gates and dlf.getL2Factor(layer, "Bias") == gates
    scale = layer.factor_scale("InputWeights", "LearnRateFactor", layer.InputWeights)
    np.testing.assert_array_equal(scale.numpy(), np.repeat(gates, 3)[:, None])
    assert scale.dtype == layer.InputWeights.dtype
    assert layer.factor_scale("RecurrentWeights", "LearnRateFactor", layer.RecurrentWeights) == 1.0
    dlf.setLearnRateFactor(layer, "RecurrentWeights", torch.tensor(gates))
    assert layer.RecurrentWeightsLearnRateFactor == gates
    rebuilt = type(layer).from_config(layer.get_config())
    assert rebuilt.factors("Bias") == layer.factors("Bias")
    with pytest.raises(DLFormatError, match="per-gate factor vector, which a torch optimizer group"):
        dlf.param_groups(layer, lr=0.1)


@pytest.mark.parametrize(
    ("construct", "gates", "shown"),
    [
        pytest.param(dlf.lstmLayer, [1, 2, 1, 1], "[1 2 1 1]", id="lstm"),
        pytest.param(dlf.bilstmLayer, [1, 2, 0, 0.5, 3, 1, 1, 0.25], "[1 2 0 0.5 3 1 1 0.25]", id="bilstm"),
        pytest.param(dlf.gruLayer, [0.5, 1, 2], "[0.5 1 2]", id="gru"),
        pytest.param(
            lambda n, **kw: dlf.lstmProjectedLayer(n, 2, 2, **PROJECTORS, **kw),
            [1, 2, 3, 4],
            "[1 2 3 4]",
            id="lstmp",
        ),
        pytest.param(
            lambda n, **kw: dlf.gruProjectedLayer(n, 2, 2, **PROJECTORS, **kw),
            [3, 1, 1],
            "[3 1 1]",
            id="grup",
        ),
    ],
)
def test_per_gate_factor_vectors_display_as_matlab_row_vectors(construct, gates, shown):
    lines = repr(construct(4, InputWeightsLearnRateFactor=gates, BiasL2Factor=2)).splitlines()
    assert f"InputWeightsLearnRateFactor: {shown}" in [line.strip() for line in lines]
    assert "BiasL2Factor: 2" in [line.strip() for line in lines]  # a scalar stays a scalar


def test_gru_recurrent_bias_mode_refuses_a_per_gate_bias_factor_when_applied():
    layer = dlf.gruLayer(
        2, InputSize=3, ResetGateMode="recurrent-bias-after-multiplication", BiasLearnRateFactor=[1, 2, 3]
    )
    with pytest.raises(DLFormatError, match="needs 3\\*NumHiddenUnits rows; Bias has 12"):
        layer.factor_scale("Bias", "LearnRateFactor", layer.Bias)


def test_a_network_call_leaves_the_recurrent_state_as_it_was():
    """MATLAB: predict (and initialize's example run) do not change net.State."""
    net = dlf.dlnetwork([dlf.sequenceInputLayer(3), dlf.lstmLayer(5), dlf.fullyConnectedLayer(2)])
    layer = net.Layers[1]
    assert not layer.HiddenState.any() and not layer.CellState.any()
    X = dlf.dlarray(torch.randn(3, 4, 9), "CBT")
    first, second = dlf.predict(net, X), dlf.predict(net, X)
    torch.testing.assert_close(dlf.stripdims(first), dlf.stripdims(second))
    assert not layer.HiddenState.any() and tuple(layer.HiddenState.shape) == (5, 1)


@pytest.mark.parametrize(
    ("construct", "gates"),
    [pytest.param(dlf.lstmProjectedLayer, 4, id="lstm"), pytest.param(dlf.gruProjectedLayer, 3, id="gru")],
)
def test_projected_shapes_sizes_and_factors(construct, gates):
    layer = construct(8, P_OUT, P_IN, **PROJECTORS)
    assert (layer.NumHiddenUnits, layer.OutputProjectorSize, layer.InputProjectorSize) == (8, P_OUT, P_IN)
    layer(dlf.dlarray(torch.randn(5, 2, 3), "CBT"))
    shapes = {name: tuple(getattr(layer, name).shape) for name in layer.learnables}
    assert shapes == {
        "InputWeights": (gates * 8, P_IN),
        "RecurrentWeights": (gates * 8, P_OUT),
        "Bias": (gates * 8, 1),
        "InputProjector": (5, P_IN),
        "OutputProjector": (8, P_OUT),
    }
    Q = layer.InputProjector.detach().double()
    torch.testing.assert_close(Q.T @ Q, torch.eye(P_IN, dtype=torch.float64), atol=1e-6, rtol=0)
    assert layer.InputProjectorLearnRateFactor == 1 and layer.OutputProjectorL2Factor == 1
    assert (
        construct(2, 1, 1, InputProjectorL2Factor=0.5, **PROJECTORS).factors("InputProjector")["L2Factor"]
        == 0.5
    )


def test_projected_input_size_from_a_given_input_projector_and_state_ports():
    layer = dlf.lstmProjectedLayer(
        H, P_OUT, P_IN, InputProjector=torch.randn(7, P_IN), OutputProjectorInitializer="glorot",
        HasStateInputs=True, HasStateOutputs=True, dtype=torch.float64,
    )  # fmt: skip
    assert layer.InputSize == 7 and layer.InputNames == ("in", "hidden", "cell")
    x = np.random.default_rng(6).standard_normal((7, B, T))
    h0, c0 = (np.random.default_rng(seed).standard_normal((H, B)) for seed in (7, 8))
    Y, h, c = layer(dlf.dlarray(torch.from_numpy(x), "CBT"), torch.from_numpy(h0), torch.from_numpy(c0))
    expected, h_ref, c_ref = lstm_reference(x, h0, c0, *weights(layer))
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(h), h_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numpy(c), c_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("construct", "message"),
    [
        pytest.param(
            lambda: dlf.lstmProjectedLayer(4, 2, 2, OutputProjectorInitializer="glorot"),
            "give InputProjectorInitializer \\(or InputProjector\\)",
            id="input-projector-default",
        ),
        pytest.param(
            lambda: dlf.gruProjectedLayer(4, 2, 2, InputProjector=torch.zeros(3, 2)),
            "give OutputProjectorInitializer \\(or OutputProjector\\)",
            id="output-projector-default",
        ),
        pytest.param(
            lambda: dlf.lstmProjectedLayer(4, 2, 2, InputProjectorInitializer="unit-forget-gate"),
            "InputProjectorInitializer",
            id="initializer-name",
        ),
        pytest.param(
            lambda: dlf.lstmProjectedLayer(4, 2, 2, InputWeights=torch.zeros(16, 3), **PROJECTORS),
            "InputWeights must have shape 16×2",
            id="weights-columns-are-the-projector-size",
        ),
        pytest.param(lambda: dlf.gruProjectedLayer(4, 0, 2, **PROJECTORS), "OutputProjectorSize", id="size"),
        *(
            pytest.param(
                lambda construct=construct, given=given: construct(4, 2, 2, **given),
                message,
                id=f"{construct.__name__}-{case}",
            )
            for construct in (dlf.lstmProjectedLayer, dlf.gruProjectedLayer)
            for case, given, message in [
                (
                    "input-projector-1d",  # no "InputSize 'auto'" blamed: the projector names its own shape
                    {"InputProjector": torch.randn(3), "OutputProjector": torch.randn(4, 2)},
                    "InputProjector must be a matrix of size InputSize×2 \\(InputSize×InputProjectorSize\\); "
                    "got a 1-D array of size 3$",
                ),
                (
                    "input-projector-3d",
                    {"InputProjector": torch.randn(3, 2, 1), "OutputProjector": torch.randn(4, 2)},
                    "InputProjector must be a matrix of size InputSize×2 .*; got a 3-D array of size 3×2×1$",
                ),
                (
                    "input-projector-columns",
                    {"InputProjector": torch.randn(3, 3), "OutputProjector": torch.randn(4, 2)},
                    "InputProjector must have shape 3×2 \\(InputSize×InputProjectorSize\\); got 3×3$",
                ),
                (
                    "input-projector-given-input-size",
                    {"InputSize": 5, "InputProjector": torch.randn(3), "OutputProjector": torch.randn(4, 2)},
                    "InputProjector must have shape 5×2 \\(InputSize×InputProjectorSize\\); got 3$",
                ),
                (
                    "output-projector-1d",
                    {"InputProjector": torch.randn(3, 2), "OutputProjector": torch.randn(4)},
                    "OutputProjector must have shape 4×2 \\(NumHiddenUnits×OutputProjectorSize\\); got 4$",
                ),
                (
                    "output-projector-transposed",
                    {"InputProjector": torch.randn(3, 2), "OutputProjector": torch.randn(2, 4)},
                    "OutputProjector must have shape 4×2 \\(NumHiddenUnits×OutputProjectorSize\\); got 2×4$",
                ),
            ]
        ),
    ],
)
def test_projected_construction_errors(construct, message):
    with pytest.raises(DLFormatError, match=message):
        construct()


def test_projected_reset_parameters_needs_the_projector_initializers_too():
    layer = dlf.lstmProjectedLayer(
        3, 2, 2, InputProjector=torch.randn(4, 2), OutputProjector=torch.randn(3, 2)
    )
    with pytest.raises(DLFormatError, match="give InputProjectorInitializer"):
        layer.reset_parameters()


# The layers' own path (functional layer_lstm / layer_gru: the layer's tensors, default
# activations, one dtype) against the general one (run_lstm / run_gru), which a float64 state on
# float32 learnables forces (the working dtype is then float32 on both paths, the same kernel on
# the same values): equal outputs, stored final states and gradients, bit for bit.
FAST_LAYERS = [
    pytest.param(lambda mode, **kw: dlf.lstmLayer(H, OutputMode=mode, **kw), id="lstm"),
    pytest.param(lambda mode, **kw: dlf.bilstmLayer(H, OutputMode=mode, **kw), id="bilstm"),
    pytest.param(lambda mode, **kw: dlf.gruLayer(H, OutputMode=mode, **kw), id="gru"),
    pytest.param(
        lambda mode, **kw: dlf.gruLayer(
            H, OutputMode=mode, ResetGateMode="recurrent-bias-after-multiplication", **kw
        ),
        id="gru-recurrent-bias",
    ),
    pytest.param(
        lambda mode, **kw: dlf.lstmProjectedLayer(H, P_OUT, P_IN, OutputMode=mode, **PROJECTORS, **kw),
        id="lstm-projected",
    ),
    pytest.param(
        lambda mode, **kw: dlf.gruProjectedLayer(H, P_OUT, P_IN, OutputMode=mode, **PROJECTORS, **kw),
        id="gru-projected",
    ),
]
# "TBC" data is stored as a permuted view of the time-first tensor (dlarray's canonical order)
FAST_FORMATS = [("CBT", (D, B, T)), ("TBC", (T, B, D)), ("CT", (D, T)), ("CB", (D, B))]


@pytest.fixture
def general_calls(monkeypatch):
    """How many calls reached the general path (run_lstm / run_gru), per layer class."""
    calls = []
    for cls in (dlf.layers.LSTMLayer, dlf.layers.GRULayer):
        general = cls.operation

        def counted(*args, general=general, **kwargs):
            calls.append(general)
            return general(*args, **kwargs)

        monkeypatch.setattr(cls, "operation", staticmethod(counted))
    return calls


def run_and_differentiate(layer, data, fmt, outputs):
    """The layer's output format, and its output, its stored final states and the gradients of a
    weighted sum of its outputs with respect to the data and every learnable."""
    data = data.clone().requires_grad_()
    result = layer(dlf.dlarray(data, fmt))
    Y, *states = result if outputs else (result,)
    weighting = torch.from_numpy(np.random.default_rng(41).standard_normal(tuple(Y.shape))).float()
    loss = (dlf.stripdims(Y) * weighting).sum() + sum(dlf.stripdims(state).square().sum() for state in states)
    leaves = [data, *(getattr(layer, name) for name in layer.learnables)]
    values = (dlf.extractdata(Y), *(getattr(layer, name) for name in layer.State))
    return dlf.dims(Y), (*values, *torch.autograd.grad(loss, leaves))


@pytest.mark.parametrize("construct", FAST_LAYERS)
@pytest.mark.parametrize("mode", ["sequence", "last"])
@pytest.mark.parametrize(("fmt", "shape"), FAST_FORMATS)
@pytest.mark.parametrize(
    ("per_observation", "outputs"),
    [(False, False), (True, False), (True, True)],
    ids=["state-column", "state-per-observation", "state-outputs"],
)
def test_the_layers_own_path_equals_the_general_path(
    construct, mode, fmt, shape, per_observation, outputs, general_calls
):
    fast = construct(mode, HasStateOutputs=outputs, BiasInitializer="narrow-normal")
    fast(dlf.dlarray(torch.randn(shape), fmt))  # creates the learnables from the input
    general = copy.deepcopy(fast)
    batch = shape[fmt.index("B")] if "B" in fmt else 1
    rows = fast.directions * H
    for seed, name in enumerate(fast.State):
        state = torch.from_numpy(
            np.random.default_rng(seed).standard_normal((rows, batch if per_observation else 1))
        )
        setattr(fast, name, state.float())
        setattr(general, name, state)  # float64: not the learnables' dtype, so the general path runs
    data = torch.from_numpy(1.5 * np.random.default_rng(40).standard_normal(shape)).float()
    del general_calls[:]
    general_format, expected = run_and_differentiate(general, data, fmt, outputs)
    assert len(general_calls) == 1
    fast_format, got = run_and_differentiate(fast, data, fmt, outputs)
    assert len(general_calls) == 1  # the fast layer's call did not reach it
    time = "T" if mode == "sequence" and "T" in fmt else ""
    assert fast_format == general_format == "C" + "B" * ("B" in fmt) + time
    for fast_value, general_value in zip(got, expected, strict=True):
        assert fast_value.dtype == torch.float32
        torch.testing.assert_close(fast_value, general_value, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("construct", "rows"),
    [
        pytest.param(lambda: dlf.lstmLayer(H, InputSize=D, Name="enc"), H, id="lstm"),
        pytest.param(lambda: dlf.bilstmLayer(H, InputSize=D, Name="enc"), 2 * H, id="bilstm"),
        pytest.param(lambda: dlf.gruLayer(H, InputSize=D, Name="enc"), H, id="gru"),
        pytest.param(
            lambda: dlf.lstmProjectedLayer(H, P_OUT, P_IN, InputSize=D, Name="enc", **PROJECTORS),
            H,
            id="projected",
        ),
    ],
)
def test_a_call_with_another_batch_size_than_the_stored_state_is_an_error(construct, rows):
    """A call stores one state column per observation; the next call with another number of
    observations raises the general path's error (the fast path leaves it that check)."""
    layer = construct()
    layer(dlf.dlarray(torch.randn(D, B, T), "CBT"))
    assert tuple(layer.HiddenState.shape) == (rows, B)
    cls = type(layer).__name__
    with pytest.raises(DLFormatError, match=f"^{cls} 'enc' HiddenState must be {rows} × 1 or {rows} × 3 "):
        layer(dlf.dlarray(torch.randn(D, 3, T), "CBT"))
    layer.resetState()
    assert tuple(layer(dlf.dlarray(torch.randn(D, 3, T), "CBT")).shape) == (rows, 3, T)


@pytest.mark.parametrize(
    ("construct", "name", "shape", "message"),
    [
        pytest.param(dlf.lstmLayer, "InputWeights", (16, D + 1), "InputWeights must have shape 16×3", id="lstm-W"),
        pytest.param(dlf.lstmLayer, "RecurrentWeights", (16, H + 1), "RecurrentWeights must have shape 16×4", id="lstm-R"),
        pytest.param(dlf.lstmLayer, "Bias", (16,), "Bias must have shape 16×1", id="lstm-b"),
        pytest.param(dlf.bilstmLayer, "InputWeights", (16, D), "InputWeights must have shape 32×3", id="bilstm-W"),
        pytest.param(dlf.gruLayer, "RecurrentWeights", (16, H), "RecurrentWeights must have shape 12×4", id="gru-R"),
        pytest.param(dlf.gruLayer, "Bias", (24, 1), "Bias must have shape 12×1", id="gru-b"),
    ],
)  # fmt: skip
def test_a_learnable_of_another_shape_is_refused_when_assigned(construct, name, shape, message):
    """The fast path takes the learnables' shapes as assigned: assignment checks them."""
    layer = construct(H, InputSize=D)
    before = getattr(layer, name).detach().clone()
    with pytest.raises(DLFormatError, match=message):
        setattr(layer, name, torch.randn(shape))
    torch.testing.assert_close(getattr(layer, name).detach(), before, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("change", "reaches_general"),
    [
        pytest.param(lambda layer: None, False, id="own-tensors"),
        pytest.param(lambda layer: setattr(layer, "Bias", layer.Bias.detach().double()), True, id="float64-bias"),
        pytest.param(
            lambda layer: setattr(layer, "HiddenState", layer.HiddenState.reshape(1, -1)), True, id="row-state"
        ),
    ],
)  # fmt: skip
def test_what_the_fast_path_leaves_to_the_general_path_gives_the_same_values(
    change, reaches_general, general_calls
):
    """A learnable of another dtype, or a state assigned as a row, runs the general path (which
    converts and reshapes them) with the same result as the layer's own tensors."""
    reference = dlf.lstmLayer(H, InputSize=D, BiasInitializer="narrow-normal")
    reference.HiddenState = torch.randn(H, 1)
    layer = copy.deepcopy(reference)
    change(layer)
    X = dlf.dlarray(torch.randn(D, B, T), "CBT")
    expected = reference(X)
    del general_calls[:]
    got = layer(X)
    assert len(general_calls) == int(reaches_general)
    torch.testing.assert_close(dlf.extractdata(got), dlf.extractdata(expected), rtol=0, atol=0)
    for name in layer.State:
        torch.testing.assert_close(getattr(layer, name), getattr(reference, name), rtol=0, atol=0)


@pytest.mark.parametrize(
    "make", [dlf.lstmLayer, dlf.bilstmLayer, dlf.gruLayer], ids=["lstm", "bilstm", "gru"]
)
@pytest.mark.parametrize("learnable", ["InputWeights", "RecurrentWeights", "Bias"])
def test_a_torch_parametrization_of_a_learnable_is_what_the_layer_runs_on(make, learnable):
    """torch.nn.utils.parametrize replaces a learnable by a computed property: the layer must read
    it as an attribute (its own path included), giving what the computed value assigned gives."""
    from torch.nn.utils import parametrize

    class Doubled(torch.nn.Module):
        def forward(self, value):
            return 2 * value

    torch.manual_seed(0)
    layer = make(3, InputSize=4).double()
    plain = copy.deepcopy(layer)
    setattr(plain, learnable, 2 * getattr(layer, learnable).detach())
    parametrize.register_parametrization(layer, learnable, Doubled())
    X = dlf.dlarray(torch.randn(4, 2, 5, dtype=torch.float64), "CBT")
    torch.testing.assert_close(layer(X)._data, plain(X)._data, rtol=0, atol=0)
