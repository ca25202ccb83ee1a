"""The activations against float64 NumPy references of MATLAB's definitions: ``relu`` max(x, 0);
``leakyrelu`` x or scale·x (scale 0.01 by default); ``gelu`` x·Φ(x) or its tanh approximation;
``sigmoid`` 1/(1 + e^-x); ``softmax`` along ``C``; and the activations of clippedReluLayer,
eluLayer, swishLayer, softplusLayer and preluLayer (each layer's MathWorks page)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import erf

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError
from dlformat.functional import _activations

f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64


def sigmoid_reference(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


ELEMENTWISE = {
    "relu": (F.relu, lambda x: np.maximum(x, 0.0)),
    "leakyrelu": (F.leakyrelu, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leakyrelu-0.2": (lambda X: F.leakyrelu(X, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "leakyrelu-keyword": (lambda X: F.leakyrelu(X, scaleFactor=3), lambda x: np.where(x > 0, x, 3.0 * x)),
    "leakyrelu-negative": (lambda X: F.leakyrelu(X, -0.5), lambda x: np.where(x > 0, x, -0.5 * x)),
    "gelu": (F.gelu, lambda x: x * 0.5 * (1 + erf(x / math.sqrt(2)))),
    "gelu-none": (lambda X: F.gelu(X, Approximation="none"), lambda x: x * 0.5 * (1 + erf(x / math.sqrt(2)))),
    "gelu-tanh": (
        lambda X: F.gelu(X, Approximation="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "gelu-tanh-pair": (
        lambda X: F.gelu(X, "approximation", "TANH"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "sigmoid": (F.sigmoid, sigmoid_reference),
}


def values(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    x.reshape(-1)[:4] = [0.0, -0.0, 1e-3, -1e-3]  # around the kink
    return x


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize(("shape", "fmt"), [((3, 4, 2, 2), "SSCB"), ((3, 2, 5), "CBT"), ((5,), "C")])
def test_elementwise_formatted(name, shape, fmt):
    function, reference = ELEMENTWISE[name]
    x = values(shape)
    Y = function(dlf.dlarray(torch.from_numpy(x), fmt))
    assert dlf.dims(Y) == fmt and Y.dtype == f64 and tuple(Y.shape) == shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(x), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_elementwise_unformatted(name, kind):
    function, reference = ELEMENTWISE[name]
    x = values((4, 3), 1)
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = function(X)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == "" and Y.dtype == f64 and tuple(Y.shape) == (4, 3)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(x), rtol=1e-14, atol=1e-15)


def test_elementwise_keeps_a_non_canonical_format_as_stored():
    x = values((2, 5, 3), 2)  # given as "BTC"
    Y = F.relu(dlf.dlarray(torch.from_numpy(x), "BTC"))
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), np.maximum(x, 0).transpose(2, 0, 1))


@pytest.mark.parametrize(
    ("name", "x", "expected"),
    [
        ("leakyrelu", -2.0, -0.02),  # MATLAB's default scale 0.01
        ("leakyrelu", 2.0, 2.0),
        ("relu", -2.0, 0.0),
        ("gelu", 1.0, 0.8413447460685429),  # Φ(1)
        ("gelu-tanh", 1.0, 0.8411919906082768),
        ("sigmoid", 0.0, 0.5),
        ("sigmoid", -1000.0, 0.0),
        ("sigmoid", 1000.0, 1.0),
        ("gelu", -40.0, -0.0),
    ],
)
def test_elementwise_known_values(name, x, expected):
    Y = ELEMENTWISE[name][0](dlf.dlarray(torch.tensor([x], dtype=f64), "C"))
    assert dlf.extractdata(Y).item() == pytest.approx(expected, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize(("dtype", "tolerance"), [(f32, 1e-6), (bf16, 1e-2), (f16, 2e-3)])
def test_elementwise_keeps_the_dtype(name, dtype, tolerance):
    function, reference = ELEMENTWISE[name]
    X = torch.from_numpy(values((3, 4), 3)).to(dtype)
    Y = function(dlf.dlarray(X, "CB"))
    assert Y.dtype == dtype and dlf.dims(Y) == "CB"
    held = X.to(f64).numpy()
    np.testing.assert_allclose(
        dlf.extractdata(Y).to(f64).numpy(), reference(held), rtol=tolerance, atol=tolerance
    )


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_logical_data_computes_in_the_default_dtype(name):
    """MATLAB's logical dlarray computes as single."""
    function, reference = ELEMENTWISE[name]
    Y = function(dlf.dlarray(torch.tensor([True, False]), "C"))
    assert Y.dtype == f32 and dlf.dims(Y) == "C"
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(np.array([1.0, 0.0])), rtol=1e-6)


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (F.relu, "relu"),
        (F.leakyrelu, "leakyrelu"),
        (F.gelu, "gelu"),
        (F.sigmoid, "sigmoid"),
        (F.softmax, "softmax"),
    ],
)
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8])
def test_integer_data_is_an_error(function, name, dtype):
    with pytest.raises(
        DLFormatError,
        match=rf"{name} needs floating-point or logical data \(MATLAB's dlarray holds single, double or logical\); "
        rf"got dtype {dtype}",
    ):
        function(dlf.dlarray(torch.ones(2, 3, dtype=dtype), "CB"))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda X: F.gelu(X, Approximation="erf"), 'Approximation must be one of "none", "tanh"; got "erf"'),
        (lambda X: F.gelu(X, Approximation=1), 'Approximation must be one of "none", "tanh"; got 1'),
        (lambda X: F.leakyrelu(X, "a"), 'scaleFactor must be a finite real scalar; got "a"'),
        (lambda X: F.leakyrelu(X, math.inf), "scaleFactor must be a finite real scalar; got inf"),
        (lambda X: F.leakyrelu(X, torch.ones(2)), "scaleFactor must be a finite real scalar"),
        (lambda X: F.gelu(X, Mode="tanh"), "gelu has no option 'Mode'; the options are: .*Approximation"),
    ],
)
def test_option_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call(dlf.dlarray(torch.ones(2, 3), "CB"))


# -- softmax -----------------------------------------------------------------------------------
RANK = {label: rank for rank, label in enumerate("SCBTU")}


def softmax_reference(x: np.ndarray, fmt: str) -> tuple[np.ndarray, str]:
    """Softmax along C of ``x`` labelled ``fmt`` (any order), in canonical order."""
    order = sorted(range(len(fmt)), key=lambda axis: RANK[fmt[axis]])
    x, fmt = x.transpose(order), "".join(fmt[axis] for axis in order)
    axis = fmt.index("C")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True), fmt


@pytest.mark.parametrize(
    ("shape", "fmt"),
    [
        ((4, 3), "CB"),
        ((3, 4), "BC"),
        ((5,), "C"),
        ((3, 2, 5), "CBT"),
        ((5, 2, 3), "TBC"),
        ((2, 3, 4, 2), "SSCB"),
        ((2, 3, 2, 4), "SCBT"),
        ((3, 2, 4), "CBU"),
    ],
)
def test_softmax_formatted(shape, fmt):
    x = values(shape, 4)
    expected, expected_fmt = softmax_reference(x, fmt)
    Y = F.softmax(dlf.dlarray(torch.from_numpy(x), fmt))
    assert dlf.dims(Y) == expected_fmt and Y.dtype == f64 and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy().sum(axis=expected_fmt.index("C")), 1.0, rtol=1e-14)


def test_softmax_hand_example():
    Y = F.softmax(dlf.dlarray(torch.tensor([[0.0, 1000.0], [math.log(3), 1000.0]], dtype=f64), "CB"))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-15)


@pytest.mark.parametrize(
    ("shape", "data_format", "result_shape"),
    [
        ((4, 3), "CB", (4, 3)),
        ((3, 4), "BC", (4, 3)),
        ((5, 3, 2), "TCB", (3, 2, 5)),
        ((3, 2), "CBT", (3, 2, 1)),
    ],
)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_softmax_unformatted_with_data_format(shape, data_format, result_shape, kind):
    x = values(shape, 5)
    expected, _ = softmax_reference(x.reshape(shape + (1,) * (len(data_format) - len(shape))), data_format)
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = F.softmax(X, DataFormat=data_format)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    assert tuple(Y.shape) == result_shape == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("options", [("DataFormat", "BC"), ("dataformat", "BC"), ("DATAFORMAT", "BC")])
def test_softmax_name_value_pairs(options):
    x = values((3, 4), 6)
    Y = F.softmax(torch.from_numpy(x), *options)
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (4, 3)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), softmax_reference(x, "BC")[0], rtol=1e-14)


@pytest.mark.parametrize(("dtype", "tolerance"), [(f32, 1e-6), (bf16, 1.01 * 2**-8), (f16, 1.01 * 2**-11)])
def test_softmax_keeps_the_dtype(dtype, tolerance):
    """Half-precision data is computed in float32: the result is the exact softmax rounded once
    (within the unit roundoff of its dtype)."""
    X = torch.from_numpy(values((6, 4), 7)).to(dtype)
    Y = F.softmax(dlf.dlarray(X, "CB"))
    assert Y.dtype == dtype
    expected, _ = softmax_reference(X.to(f64).numpy(), "CB")
    np.testing.assert_allclose(dlf.extractdata(Y).to(f64).numpy(), expected, rtol=tolerance, atol=0)


def test_softmax_of_logical_data():
    Y = F.softmax(dlf.dlarray(torch.tensor([[True], [False]]), "CB"))
    assert Y.dtype == f32
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy()[:, 0], [math.e / (math.e + 1), 1 / (math.e + 1)], rtol=1e-6
    )


@pytest.mark.parametrize(
    ("X", "options", "message"),
    [
        (dlf.dlarray(torch.ones(3, 2), "BT"), {}, 'softmax needs data with a "C" dimension; got format "BT"'),
        (torch.ones(3, 2), {"DataFormat": "SB"}, 'softmax needs data with a "C" dimension; got format "SB"'),
        (torch.ones(3, 2), {}, r'softmax needs a formatted dlarray, or DataFormat="\.\.\."'),
        (dlf.dlarray(torch.ones(3, 2)), {}, "softmax needs a formatted dlarray.*got an unformatted dlarray"),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            {"DataFormat": "CB"},
            'softmax: DataFormat is only for unformatted data; the input already has format "CB"',
        ),
        (
            torch.ones(3, 2, 2),
            {"DataFormat": "CB"},
            'softmax: DataFormat "CB" labels 2 dimensions; the data has 3',
        ),
    ],
)
def test_softmax_errors(X, options, message):
    with pytest.raises(DLFormatError, match=message):
        F.softmax(X, **options)


# -- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "function",
    [
        pytest.param(lambda X: F.softmax(X), id="softmax"),
        pytest.param(lambda X: F.gelu(X), id="gelu"),
        pytest.param(lambda X: F.gelu(X, Approximation="tanh"), id="gelu-tanh"),
        pytest.param(lambda X: F.sigmoid(X), id="sigmoid"),
        pytest.param(lambda X: F.leakyrelu(X, 0.3), id="leakyrelu"),
    ],
)
def test_gradcheck(function):
    x = torch.from_numpy(values((3, 2, 2), 8)[..., ::-1].copy())
    x[np.abs(x.numpy()) < 1e-2] = 0.5  # away from the kinks
    x.requires_grad_()
    assert torch.autograd.gradcheck(lambda x: function(dlf.dlarray(x, "CBT"))._data, (x,))


# -- the activations of layers without a MATLAB function (tensor functions, not exported) ----------
GRID = np.concatenate([np.linspace(-40, 40, 81), [-1e-8, 0.0, 1e-8, 0.3, -0.3]])


@pytest.mark.parametrize(
    ("function", "reference"),
    [
        (lambda t: _activations.clipped_relu(t, 2.5), lambda x: np.minimum(np.maximum(x, 0), 2.5)),
        (lambda t: _activations.elu(t, 0.7), lambda x: np.where(x >= 0, x, 0.7 * np.expm1(x))),
        (_activations.swish, lambda x: x / (1 + np.exp(-x))),
        (_activations.softplus, lambda x: np.logaddexp(x, 0)),  # exact also where exp(x) overflows single
        (
            lambda t: _activations.prelu(t, torch.tensor(0.2, dtype=t.dtype)),
            lambda x: np.where(x > 0, x, 0.2 * x),
        ),
    ],
    ids=["clipped_relu", "elu", "swish", "softplus", "prelu"],
)
def test_layer_activations_match_numpy_in_float64_and_have_gradients(function, reference):
    x = torch.from_numpy(GRID).requires_grad_()
    y = function(x)
    np.testing.assert_allclose(y.detach().numpy(), reference(GRID), rtol=1e-14, atol=1e-300)
    y.sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()
