"""``layernorm`` against a float64 NumPy reference of MATLAB's definition: mean and biased variance
over the OperationDimension's dimensions, then ``* scaleFactor + offset`` per channel."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def canonical(x: np.ndarray, fmt: str) -> tuple[np.ndarray, str]:
    order = sorted(range(len(fmt)), key=lambda axis: RANK[fmt[axis]])
    return x.transpose(order), "".join(fmt[axis] for axis in order)


def normalized_over(fmt: str, operation: str) -> tuple[int, ...]:
    """MATLAB's OperationDimension: the dimensions one mean and variance span."""
    if operation == "auto":
        operation = "channel-only" if "T" in fmt or "S" not in fmt else "spatial-channel"
    if operation == "channel-only":
        return (fmt.index("C"),)
    if operation == "spatial-channel":
        return tuple(axis for axis, label in enumerate(fmt) if label in "SC")
    assert operation == "batch-excluded"
    return tuple(axis for axis, label in enumerate(fmt) if label != "B")


def reference(x, fmt, offset, scale, epsilon=1e-5, operation="auto"):
    x, fmt = canonical(x, fmt)
    axes = normalized_over(fmt, operation)
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)  # biased: divided by N
    shape = [1] * x.ndim
    shape[fmt.index("C")] = -1
    y = (x - mean) / np.sqrt(variance + epsilon)
    return y * np.reshape(scale, shape) + np.reshape(offset, shape), fmt


def data(shape, seed):
    rng = np.random.default_rng(seed)
    # each entry its own mean and spread, so a wrong grouping shows
    return rng.standard_normal(shape) * rng.uniform(0.5, 3.0, shape) + rng.uniform(-2.0, 2.0, shape)


def learnables(channels, seed=100):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(channels), rng.uniform(0.5, 2.0, channels)


CASES = [
    # shape as given, its format, OperationDimension
    ((3, 4), "CB", "auto"),
    ((4, 3), "BC", "auto"),
    ((5,), "C", "auto"),
    ((3, 2, 5), "CBT", "auto"),  # T: channels only
    ((5, 2, 3), "TBC", "auto"),
    ((3, 6), "CT", "auto"),
    ((4, 3, 2), "SCB", "auto"),  # S without T: spatial and channels
    ((4, 5, 3, 2), "SSCB", "auto"),
    ((4, 3, 2, 5), "SCBT", "auto"),  # S and T: channels only
    ((3, 2, 4), "CBU", "auto"),
    ((4, 5, 3, 2), "SSCB", "channel-only"),
    ((3, 2, 5), "CBT", "spatial-channel"),  # no S: channels only
    ((4, 3, 2, 5), "SCBT", "spatial-channel"),
    ((3, 2, 5), "CBT", "batch-excluded"),  # C and T
    ((4, 3, 2, 5), "SCBT", "batch-excluded"),
    ((4, 5, 3, 2), "SSCB", "batch-excluded"),
    ((3, 2, 4), "CBU", "batch-excluded"),
    ((3, 4), "CB", "batch-excluded"),
]


@pytest.mark.parametrize(("shape", "fmt", "operation"), CASES)
def test_formatted_input(shape, fmt, operation):
    x = data(shape, 1)
    channels = shape[fmt.index("C")]
    offset, scale = learnables(channels)
    expected, expected_fmt = reference(x, fmt, offset, scale, operation=operation)
    Y = F.layernorm(
        dlf.dlarray(torch.from_numpy(x), fmt),
        torch.from_numpy(offset),
        torch.from_numpy(scale),
        OperationDimension=operation,
    )
    assert dlf.dims(Y) == expected_fmt and Y.dtype == torch.float64 and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "shape", "groups"),
    [("CBT", (3, 2, 5), 10), ("SCB", (4, 3, 2), 2), ("SCBT", (4, 3, 2, 5), 40)],
)
def test_auto_groups_have_zero_mean_and_unit_variance(fmt, shape, groups):
    """The defining property, independent of the reference: with scale 1 and offset 0 each group
    MATLAB's "auto" names has mean 0 and (biased) variance var/(var + epsilon)."""
    x = data(shape, 2)
    Y = dlf.extractdata(F.layernorm(dlf.dlarray(torch.from_numpy(x), fmt), np.zeros(3), np.ones(3))).numpy()
    channel_axis = fmt.index("C")
    if "T" in fmt:  # one group per (S, B, T) position: move C last and split off the rest
        groups_view = np.moveaxis(Y, channel_axis, -1).reshape(-1, 3)
        source = np.moveaxis(x, channel_axis, -1).reshape(-1, 3)
    else:  # one group per observation
        groups_view = np.moveaxis(Y, fmt.index("B"), 0).reshape(shape[fmt.index("B")], -1)
        source = np.moveaxis(x, fmt.index("B"), 0).reshape(shape[fmt.index("B")], -1)
    assert groups_view.shape[0] == groups
    variance = source.var(axis=1)
    np.testing.assert_allclose(groups_view.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(groups_view.var(axis=1), variance / (variance + 1e-5), rtol=1e-12)


def test_epsilon_default_is_1e_5():
    """A small variance makes the default Epsilon visible in the result."""
    x = np.array([[1.0, 1.0], [1.002, 1.0], [0.998, 1.004]])  # "CB": variances about 2.7e-6 and 3.6e-6
    offset, scale = np.zeros(3), np.ones(3)
    Y = dlf.extractdata(F.layernorm(dlf.dlarray(torch.from_numpy(x), "CB"), offset, scale)).numpy()
    np.testing.assert_allclose(Y, reference(x, "CB", offset, scale, 1e-5)[0], rtol=1e-12, atol=1e-12)
    assert not np.allclose(Y, reference(x, "CB", offset, scale, 1e-6)[0], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "options",
    [
        ("epsilon", 1e-3),
        ("Epsilon", 0.5, "OperationDimension", "batch-excluded"),
        ("EPSILON", 2, "operationdimension", "Channel-Only"),
        ("OperationDimension", "SPATIAL-CHANNEL"),
    ],
)
def test_name_value_options(options):
    x = data((4, 3, 2), 3)
    offset, scale = learnables(3)
    pairs = dict(zip(options[::2], options[1::2], strict=True))
    epsilon = next((value for name, value in pairs.items() if name.lower() == "epsilon"), 1e-5)
    operation = next((value for name, value in pairs.items() if name.lower() == "operationdimension"), "auto")
    expected, _ = reference(x, "SCB", offset, scale, epsilon, operation.lower())
    Y = F.layernorm(dlf.dlarray(torch.from_numpy(x), "SCB"), offset, scale, *options)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("shape", "data_format", "result_shape"),
    [
        ((3, 4), "CB", (3, 4)),
        ((4, 3), "BC", (3, 4)),
        ((5, 3, 2), "TCB", (3, 2, 5)),  # unformatted result in the order of "CBT"
        ((2, 4, 3), "BSC", (4, 3, 2)),  # "SCB"
    ],
)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_input_with_data_format(shape, data_format, result_shape, kind):
    x = data(shape, 4)
    offset, scale = learnables(3)
    expected, _ = reference(x, data_format, offset, scale)
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = F.layernorm(X, offset, scale, DataFormat=data_format)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    assert tuple(Y.shape) == result_shape == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(lambda v: torch.from_numpy(v).reshape(-1, 1), id="column"),
        pytest.param(lambda v: v.reshape(1, -1), id="numpy-row"),
        pytest.param(lambda v: dlf.dlarray(torch.from_numpy(v), "C"), id="formatted-dlarray"),
        pytest.param(lambda v: torch.from_numpy(v).reshape(1, 3, 1), id="3-D"),
    ],
)
def test_learnables_of_any_shape(form):
    x = data((3, 4), 5)
    offset, scale = learnables(3)
    Y = F.layernorm(dlf.dlarray(torch.from_numpy(x), "CB"), form(offset), form(scale))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(x, "CB", offset, scale)[0], atol=1e-12)


def test_one_channel_takes_numbers_as_learnables():
    x = data((1, 2, 5), 6)
    Y = F.layernorm(dlf.dlarray(torch.from_numpy(x), "CBT"), 0.5, 2.0, OperationDimension="batch-excluded")
    assert Y.dtype == torch.float64  # numbers are doubles: they do not narrow float64 data
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(),
        reference(x, "CBT", [0.5], [2.0], operation="batch-excluded")[0],
        rtol=0,
        atol=1e-12,
    )


# -- precision ---------------------------------------------------------------------------------
f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64


@pytest.mark.parametrize(
    ("x_dtype", "learnable_dtype", "expected", "tolerance"),
    [
        (f64, f64, f64, 1e-12),
        (f64, f32, f32, 1e-5),  # MATLAB: single wins over double
        (f32, f64, f32, 1e-5),
        (f32, f32, f32, 1e-5),
        (bf16, f32, f32, 1e-5),  # bfloat16 data, float32 learnables: float32
        (bf16, bf16, bf16, 2e-2),  # normalized in float32, returned in bfloat16
        (f16, f16, f16, 2e-3),
        (f16, f64, f16, 2e-3),
    ],
)
def test_precision_rule(x_dtype, learnable_dtype, expected, tolerance):
    x = torch.from_numpy(data((3, 2, 5), 7)).to(x_dtype)
    offset, scale = (torch.from_numpy(v).to(learnable_dtype) for v in learnables(3))
    Y = F.layernorm(dlf.dlarray(x, "CBT"), offset, scale)
    assert Y.dtype == expected and dlf.dims(Y) == "CBT"
    held = [t.to(f64).numpy() for t in (x, offset, scale)]
    expected_values, _ = reference(held[0], "CBT", held[1], held[2])
    got = dlf.extractdata(Y).to(f64).numpy()
    np.testing.assert_allclose(got, expected_values, rtol=tolerance, atol=tolerance)


# -- errors ------------------------------------------------------------------------------------
X_CB = dlf.dlarray(torch.ones(3, 2), "CB")


@pytest.mark.parametrize(
    ("X", "offset", "scale", "options", "message"),
    [
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3),
            {"Epsilon": 0},
            r"Epsilon must be a positive number; got 0 \(int\)",
        ),
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3),
            {"Epsilon": -1e-5},
            "Epsilon must be a positive number; got -1e-05",
        ),
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3),
            {"Epsilon": "auto"},
            'Epsilon must be a positive number; got "auto"',
        ),
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3),
            {"OperationDimension": "time"},
            'OperationDimension must be one of "auto", "channel-only", "spatial-channel", "batch-excluded"; got "time"',
        ),
        (
            X_CB,
            torch.zeros(2),
            torch.ones(3),
            {},
            r"layernorm offset must have one value per channel \(3\); got 2",
        ),
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3, 2),
            {},
            r"layernorm scaleFactor must have one value per channel \(3\); got 3×2",
        ),
        (
            X_CB,
            0.0,
            torch.ones(3),
            {},
            r"layernorm offset must have one value per channel \(3\); got a scalar",
        ),
        (
            X_CB,
            "zeros",
            torch.ones(3),
            {},
            "layernorm offset must be a dlarray, a tensor, a NumPy array or a number",
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "BT"),
            torch.zeros(3),
            torch.ones(3),
            {},
            'layernorm needs data with a "C" dimension; got format "BT"',
        ),
        (
            X_CB,
            torch.zeros(3),
            torch.ones(3),
            {"DataFormat": "CB"},
            'layernorm: DataFormat is only for unformatted data; the input already has format "CB"',
        ),
        (
            torch.ones(3, 2),
            torch.zeros(3),
            torch.ones(3),
            {},
            r'layernorm needs a formatted dlarray, or DataFormat="\.\.\."',
        ),
    ],
)
def test_errors(X, offset, scale, options, message):
    with pytest.raises(DLFormatError, match=message):
        F.layernorm(X, offset, scale, **options)


# -- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "fmt", "operation"),
    [((3, 2, 4), "CBT", "auto"), ((2, 3, 2), "SCB", "auto"), ((3, 2, 4), "CBT", "batch-excluded")],
)
def test_gradcheck(shape, fmt, operation):
    x = torch.from_numpy(data(shape, 8)).requires_grad_()
    offset, scale = (torch.from_numpy(v).requires_grad_() for v in learnables(3))
    assert torch.autograd.gradcheck(
        lambda x, o, s: F.layernorm(dlf.dlarray(x, fmt), o, s, OperationDimension=operation)._data,
        (x, offset, scale),
    )


# -- crosschannelnorm ---------------------------------------------------------------------------


def windowed_reference(x, channel, window, alpha=1e-4, beta=0.75, k=2.0):
    """MathWorks' crosschannelnorm: x / (K + α·ss/windowSize)^β, ss the sum of squares over the
    floor((w−1)/2) channels before and floor(w/2) after, in float64."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), channel, 0)
    padded = np.concatenate(
        [np.zeros(((window - 1) // 2, *x.shape[1:])), x**2, np.zeros((window // 2, *x.shape[1:]))]
    )
    ss = np.stack([padded[c : c + window].sum(axis=0) for c in range(x.shape[0])])
    return np.moveaxis(x / (k + alpha * ss / window) ** beta, 0, channel)


@pytest.mark.parametrize(
    ("fmt", "shape", "window", "options"),
    [
        ("SSCB", (3, 4, 6, 2), 5, {}),
        ("SSCB", (3, 4, 6, 2), 4, {"Alpha": 0.3, "Beta": 0.5, "K": 1}),
        ("CBT", (7, 2, 3), 2, {"alpha": 1.0}),
        ("SCB", (5, 3, 2), 9, {"Beta": 1.0}),
    ],
)
def test_crosschannelnorm_matches_the_formula(fmt, shape, window, options):
    x = np.random.default_rng(0).normal(size=shape) * 2
    Y = F.crosschannelnorm(dlf.dlarray(torch.from_numpy(x), fmt), window, **options)
    named = {key.capitalize() if key != "k" else "K": value for key, value in options.items()}
    expected = windowed_reference(x, fmt.index("C"), window, **{key.lower(): v for key, v in named.items()})
    assert dlf.dims(Y) == fmt
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-14)


def test_crosschannelnorm_unformatted_half_and_errors():
    x = torch.rand(4, 3, 6, dtype=torch.float16)
    Y = F.crosschannelnorm(x, 3, DataFormat="SBC")
    assert not dlf.dims(Y) and Y.dtype == torch.float16
    expected = windowed_reference(x.double().numpy().transpose(0, 2, 1), 1, 3)  # back in "SCB" order
    np.testing.assert_allclose(dlf.extractdata(Y).double().numpy(), expected, rtol=2e-3)
    with pytest.raises(
        DLFormatError, match=r"crosschannelnorm: windowSize must be a positive integer; got 0"
    ):
        F.crosschannelnorm(dlf.dlarray(torch.ones(3, 2), "CB"), 0)
    with pytest.raises(DLFormatError, match=r'crosschannelnorm needs data with a "C" dimension'):
        F.crosschannelnorm(dlf.dlarray(torch.ones(3, 2), "SB"), 3)
    with pytest.raises(DLFormatError, match=r"crosschannelnorm: K must be a finite real scalar"):
        F.crosschannelnorm(dlf.dlarray(torch.ones(3, 2), "CB"), 3, K=float("nan"))


@pytest.mark.parametrize(
    ("shape", "stored", "operation", "in_place"),
    [
        ((2, 5, 3), "BTC", "auto", True),  # batch-first memory, channels fastest: torch's own layout
        ((3, 2, 5), "CBT", "auto", False),
        ((2, 3, 4, 5), "BCSS", "auto", True),  # spatial-channel over channels-first memory
        ((2, 4, 5, 3), "BSSC", "spatial-channel", True),
        ((2, 3, 4, 5), "BCSS", "batch-excluded", True),
        ((5, 2, 3), "TBC", "batch-excluded", False),
    ],
)
def test_layernorm_in_any_memory_order(shape, stored, operation, in_place):
    """Any memory order gives the reference values; where the normalized dimensions are stored
    innermost (torch's kernel then reads the input as it lies), the result is laid out as the
    input is."""
    x = data(shape, 11)
    channels = shape[stored.index("C")]
    offset, scale = learnables(channels)
    X = dlf.dlarray(torch.from_numpy(x), stored)
    Y = F.layernorm(X, offset, scale, OperationDimension=operation)
    expected, _ = reference(x, stored, offset, scale, operation=operation)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)
    assert (dlf.extractdata(Y).stride() == dlf.extractdata(X).stride()) == in_place
