"""reluLayer, geluLayer, dropoutLayer and softmaxLayer against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat import functional as F


def test_relu_keeps_format_and_clips():
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    Y = dlf.reluLayer()(dlf.dlarray(x, "SCB"))
    assert dlf.dims(Y) == "SCB"
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), np.maximum(x.numpy(), 0))


@pytest.mark.parametrize("approximation", ["none", "tanh"])
def test_gelu_matches_its_formula(approximation):
    x = np.linspace(-4, 4, 41)
    if approximation == "none":
        expected = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    else:
        expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    Y = dlf.geluLayer(Approximation=approximation)(dlf.dlarray(torch.from_numpy(x)[:, None], "CB"))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy()[:, 0], expected, rtol=1e-12, atol=1e-14)


def test_dropout_scales_survivors_in_training_and_is_identity_in_inference():
    layer = dlf.dropoutLayer(0.25)
    X = dlf.dlarray(torch.ones(200, 100, dtype=torch.float64), "CB")
    layer.eval()
    assert torch.equal(dlf.stripdims(layer(X)), torch.ones(200, 100, dtype=torch.float64))
    layer.train()
    values = dlf.stripdims(layer(X))
    assert set(values.unique().tolist()) == {0.0, 1 / 0.75}
    assert abs((values == 0).double().mean().item() - 0.25) < 0.02
    with pytest.raises(DLFormatError, match=r"Probability must be a number in \[0, 1\); got 1\.5"):
        dlf.dropoutLayer(1.5)


@pytest.mark.parametrize(("fmt", "shape"), [("CBT", (5, 2, 3)), ("SCB", (3, 5, 2)), ("SSCB", (2, 2, 5, 2))])
def test_softmax_runs_over_channels(fmt, shape):
    x = torch.randn(shape, dtype=torch.float64)
    Y = dlf.softmaxLayer()(dlf.dlarray(x, fmt))
    channel = fmt.index("C")
    e = np.exp(x.numpy() - x.numpy().max(axis=channel, keepdims=True))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), e / e.sum(axis=channel, keepdims=True), rtol=1e-12)
    with pytest.raises(DLFormatError, match=r'needs a dlarray with a "C" dimension; got format "BT"'):
        dlf.softmaxLayer()(dlf.dlarray(torch.randn(2, 3), "BT"))


# -- the activation layers against NumPy formulas (each layer's MathWorks page) -------------------
X_VALUES = np.concatenate([np.linspace(-30, 30, 61), [-1e-3, 0.0, 1e-3, 0.7, -0.7]])


def numpy_sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    (lambda: dlf.leakyReluLayer(), lambda x: np.where(x >= 0, x, 0.01 * x)),
    (lambda: dlf.leakyReluLayer(0.3), lambda x: np.where(x >= 0, x, 0.3 * x)),
    (lambda: dlf.leakyReluLayer("Scale", 2), lambda x: np.where(x >= 0, x, 2 * x)),
    (lambda: dlf.clippedReluLayer(6), lambda x: np.minimum(np.maximum(x, 0), 6)),
    (lambda: dlf.eluLayer(), lambda x: np.where(x >= 0, x, np.exp(x) - 1)),
    (lambda: dlf.eluLayer(0.5), lambda x: np.where(x >= 0, x, 0.5 * (np.exp(x) - 1))),
    (lambda: dlf.tanhLayer(), np.tanh),
    (lambda: dlf.sigmoidLayer(), numpy_sigmoid),
    (lambda: dlf.swishLayer(), lambda x: x * numpy_sigmoid(x)),
    (lambda: dlf.softplusLayer(), lambda x: np.log1p(np.exp(x))),
    # mishLayer: x·tanh(ln(1 + eˣ)), the formula of MathWorks' (dlhdl.layer.)mishLayer page
    (lambda: dlf.mishLayer(), lambda x: x * np.tanh(np.logaddexp(0, x))),
    (lambda: dlf.identityLayer(), lambda x: x),
    (lambda: dlf.preluLayer(), lambda x: np.where(x > 0, x, 0.25 * x)),
]


@pytest.mark.parametrize(("make", "reference"), ACTIVATIONS)
@pytest.mark.parametrize(("fmt", "shape"), [("CB", (66, 1)), ("SSCBT", (3, 2, 11, 1, 1))])
def test_activations_match_their_formulas_in_any_format(make, reference, fmt, shape):
    layer = make()
    x = X_VALUES.reshape(shape, order="F")
    Y = layer(
        dlf.dlarray(torch.from_numpy(x).to(layer._like.dtype if layer.learnables else torch.float64), fmt)
    )
    if layer.learnables:  # preluLayer's Alpha is float32: MATLAB's single wins over double
        assert Y.dtype == torch.float32
        np.testing.assert_allclose(dlf.extractdata(Y).double().numpy(), reference(x), rtol=1e-6)
        return
    assert dlf.dims(Y) == fmt and Y.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(x), rtol=1e-13, atol=1e-15)


def test_prelu_alpha_expands_as_matlab_expands_arrays():
    x = np.random.default_rng(1).standard_normal((4, 5, 3, 2))
    alpha = np.array([0.1, 0.2, 0.3]).reshape(1, 1, 3)  # one per channel of "SSCB"
    layer = dlf.preluLayer(Alpha=torch.from_numpy(alpha), dtype=torch.float64)
    Y = layer(dlf.dlarray(torch.from_numpy(x), "SSCB"))
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(), np.where(x > 0, x, alpha[..., None] * x), rtol=1e-15
    )
    dlf.stripdims(Y).sum().backward()
    expected_gradient = np.where(x > 0, 0, x).sum(axis=(0, 1, 3)).reshape(1, 1, 3)
    np.testing.assert_allclose(layer.Alpha.grad.numpy(), expected_gradient, rtol=1e-12)
    column = dlf.preluLayer(Alpha=torch.tensor([[0.5], [2.0]], dtype=torch.float64), dtype=torch.float64)
    Z = column(dlf.dlarray(-torch.ones(2, 3, dtype=torch.float64), "CB"))  # C×1 Alpha: per channel
    assert dlf.extractdata(Z).tolist() == [[-0.5] * 3, [-2.0] * 3]


def test_activation_properties_defaults_and_names():
    assert dlf.leakyReluLayer().Scale == 0.01 and dlf.eluLayer().Alpha == 1.0
    assert dlf.clippedReluLayer(6).Ceiling == 6.0
    prelu = dlf.preluLayer()
    assert prelu.learnables == ("Alpha",) and prelu.Alpha.tolist() == [[0.25]]
    layers = [
        dlf.leakyReluLayer(),
        dlf.clippedReluLayer(1),
        dlf.eluLayer(),
        dlf.tanhLayer(),
        dlf.sigmoidLayer(),
        dlf.swishLayer(),
        dlf.softplusLayer(),
        prelu,
        dlf.mishLayer(),
        dlf.identityLayer(),
    ]
    assert [layer.default_name for layer in layers] == [
        "leakyrelu",
        "clippedrelu",
        "elu",
        "tanh",
        "sigmoid",
        "swish",
        "softplus",
        "prelu",
        "mish",
        "identity",
    ]
    assert [layer.matlab_type for layer in layers[:3]] == ["Leaky ReLU", "Clipped ReLU", "ELU"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.clippedReluLayer(), "missing a required argument: 'Ceiling'"),
        (lambda: dlf.clippedReluLayer(0), "Ceiling must be a positive number; got 0"),
        (lambda: dlf.eluLayer([1, 2]), "Alpha must be a finite real scalar"),
        (lambda: dlf.leakyReluLayer("a"), "Scale must be a finite real scalar"),
        (
            lambda: dlf.preluLayer(Alpha=torch.ones(5))(dlf.dlarray(torch.ones(3, 2), "CB")),
            r'PReLULayer Alpha of size 5 does not expand against the "CB" input of size 3×2',
        ),
        (
            lambda: dlf.tanhLayer()(torch.ones(3, 2)),
            r"TanhLayer needs a formatted dlarray",
        ),
    ],
)
def test_activation_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


@pytest.mark.parametrize(
    ("fmt", "shape"), [("SSCB", (5, 6, 40, 30)), ("CBT", (40, 30, 7)), ("SSCBT", (3, 4, 40, 30, 2))]
)
def test_spatial_dropout_drops_whole_channels_per_observation(fmt, shape):
    layer = dlf.spatialDropoutLayer(Probability=0.25)
    X = dlf.dlarray(torch.ones(shape, dtype=torch.float64), fmt)
    assert torch.equal(dlf.extractdata(layer(X, training=False)), torch.ones(shape, dtype=torch.float64))
    values = dlf.extractdata(layer(X, training=True)).numpy()
    assert set(np.unique(values)) <= {0.0, 1 / 0.75}
    channel, batch = fmt.index("C"), fmt.index("B")
    others = tuple(axis for axis in range(len(fmt)) if axis not in (channel, batch))
    # one decision per channel and observation: every S and T element agrees with it
    assert (values.min(axis=others) == values.max(axis=others)).all()
    dropped = (values.max(axis=others) == 0).mean()
    assert abs(dropped - 0.25) < 0.08  # 1200 draws


def test_spatial_dropout_options_and_errors():
    layer = dlf.spatialDropoutLayer()
    assert (layer.Probability, layer.default_name) == (0.5, "spatialdropout")
    assert dlf.spatialDropoutLayer("Probability", 0.1, "Name", "sd").Name == "sd"
    with pytest.raises(DLFormatError, match=r"spatialDropoutLayer: too many positional arguments"):
        dlf.spatialDropoutLayer(0.1)
    with pytest.raises(DLFormatError, match=r"Probability must be a number in \[0, 1\); got 1"):
        dlf.spatialDropoutLayer(Probability=1)
    with pytest.raises(
        DLFormatError, match=r'SpatialDropoutLayer needs a dlarray with a "C" dimension; got format "SB"'
    ):
        layer(dlf.dlarray(torch.ones(3, 2), "SB"), training=True)


@pytest.mark.parametrize(
    ("layer", "function"),
    [(dlf.reluLayer, F.relu), (dlf.sigmoidLayer, F.sigmoid), (dlf.softmaxLayer, F.softmax)],
)
@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (torch.randn(4, 3, 5, 2), "SSCB"),
        (torch.randn(3, 2, 6, dtype=torch.float64), "CBT"),
        (torch.randn(5, 2).half(), "CB"),
        (torch.randn(5, 2) > 0, "CB"),  # logical data computes as single
    ],
)
def test_activation_layers_compute_what_their_functions_do(layer, function, data, fmt):
    """The layers call the tensor computation directly (they have checked the input already):
    the same values, dtype, format and gradients as the functional call."""
    x = data.requires_grad_() if data.is_floating_point() else data
    Y, expected = layer()(dlf.dlarray(x, fmt)), function(dlf.dlarray(x, fmt))
    assert dlf.dims(Y) == fmt and Y.dtype == expected.dtype
    torch.testing.assert_close(Y._data, expected._data, rtol=0, atol=0)
    if data.is_floating_point():
        upstream = torch.randn(Y.shape).to(Y.dtype)
        ours = torch.autograd.grad((Y._data * upstream).sum(), x)
        theirs = torch.autograd.grad((expected._data * upstream).sum(), x)
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)


def test_mish_gradient_is_its_derivative():
    """d/dx x·tanh(sp(x)) = tanh(sp(x)) + x·(1 − tanh²(sp(x)))·σ(x), sp the softplus."""
    x = torch.linspace(-8, 8, 33, dtype=torch.float64, requires_grad=True)
    dlf.stripdims(dlf.mishLayer()(dlf.dlarray(x[:, None], "CB"))).sum().backward()
    v = x.detach().numpy()
    t = np.tanh(np.logaddexp(0, v))
    np.testing.assert_allclose(x.grad.numpy(), t + v * (1 - t**2) * numpy_sigmoid(v), rtol=1e-12, atol=1e-15)


def test_identity_passes_its_input_itself_in_any_dtype():
    X = dlf.dlarray(torch.arange(6, dtype=torch.int64).reshape(2, 3), "CB")
    layer = dlf.identityLayer(Name="skip")
    assert layer(X) is X and layer(X, training=True) is X
    assert (layer.NumInputs, layer.InputNames, layer.NumOutputs, layer.OutputNames) == (
        1,
        ("in",),
        1,
        ("out",),
    )
