"""``fullyconnect`` against a float64 NumPy reference of MATLAB's definition: per observation, the
S..C block flattened column-major (first S fastest, C slowest), then ``W * x + b``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def canonical(x: np.ndarray, fmt: str) -> tuple[np.ndarray, str]:
    """``x`` labelled ``fmt`` with its axes stably sorted into S < C < B < T < U."""
    order = sorted(range(len(fmt)), key=lambda axis: RANK[fmt[axis]])
    return x.transpose(order), "".join(fmt[axis] for axis in order)


def reference(x: np.ndarray, fmt: str, weights: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, str]:
    """MATLAB's fullyconnect on ``x`` labelled ``fmt`` (any order): result and its format."""
    x, fmt = canonical(x, fmt)
    features = sum(label in "SC" for label in fmt)  # S and C lead in canonical order
    matrix = weights.reshape(weights.shape[0], -1, order="F")  # OutputSize × h × w × c, column-major
    kept = x.shape[features:]
    y = np.empty((weights.shape[0], *kept))
    for index in np.ndindex(*kept):
        column = x[(Ellipsis, *index)].reshape(-1, order="F")
        y[(slice(None), *index)] = matrix @ column + np.broadcast_to(bias.reshape(-1), (weights.shape[0],))
    return y, "C" + fmt[features:]


def data(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES = [
    # input shape as given, its format, the weights' shape
    pytest.param((3, 2), "CB", (4, 3), id="CB"),
    pytest.param((2, 3), "BC", (4, 3), id="BC-given-batch-first"),
    pytest.param((5,), "C", (2, 5), id="C"),
    pytest.param((3, 2, 4), "CBT", (5, 3), id="CBT"),
    pytest.param((4, 2, 3), "TBC", (5, 3), id="TBC"),
    pytest.param((3, 6), "CT", (2, 3), id="CT"),
    pytest.param((4, 3, 2), "SCB", (5, 12), id="SCB"),
    pytest.param((4, 3, 2, 2), "SSCB", (5, 24), id="SSCB-2D-weights"),
    pytest.param((4, 3, 2, 2), "SSCB", (5, 4, 3, 2), id="SSCB-4D-weights"),
    pytest.param((2, 4, 3, 2), "CSSB", (5, 4, 3, 2), id="CSSB"),
    pytest.param((3, 2, 2, 3, 2), "SSSCB", (4, 3, 2, 2, 3), id="SSSCB"),
    pytest.param((4, 2, 2, 3), "SCBT", (6, 8), id="SCBT"),
    pytest.param((4, 3), "SC", (2, 4, 3), id="SC"),
]


@pytest.mark.parametrize(("shape", "fmt", "weights_shape"), CASES)
def test_formatted_input(shape, fmt, weights_shape):
    x, w, b = data(shape, 1), data(weights_shape, 2), data(weights_shape[0], 3)
    expected, expected_fmt = reference(x, fmt, w, b)
    Y = F.fullyconnect(dlf.dlarray(torch.from_numpy(x), fmt), torch.from_numpy(w), torch.from_numpy(b))
    assert dlf.dims(Y) == expected_fmt
    assert Y.dtype == torch.float64 and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_matlab_documentation_example():
    """MATLAB: a 12×12×32×1 "SSCB" input with 10×12×12×32 weights gives a 10(C)×1(B) output."""
    x, w, b = data((12, 12, 32, 1), 4), data((10, 12, 12, 32), 5), data((10, 1), 6)
    Y = F.fullyconnect(dlf.dlarray(torch.from_numpy(x), "SSCB"), torch.from_numpy(w), torch.from_numpy(b))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (10, 1)
    expected = np.einsum("ohwc,hwc->o", w, x[..., 0]) + b[:, 0]  # the sum MATLAB's product spells out
    np.testing.assert_allclose(dlf.extractdata(Y).numpy()[:, 0], expected, rtol=0, atol=1e-11)


def test_column_major_flattening_on_a_hand_example():
    """2(S)×2(S)×1(C): features ordered x(1,1), x(2,1), x(1,2), x(2,2), the first S fastest."""
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64).reshape(2, 2, 1, 1)  # x[i, j]
    Y = F.fullyconnect(dlf.dlarray(x, "SSCB"), torch.tensor([[1.0, 10.0, 100.0, 1000.0]]), 0)
    # x(1,1)=1, x(2,1)=3, x(1,2)=2, x(2,2)=4
    assert dlf.extractdata(Y).reshape(-1).tolist() == [1 + 30 + 200 + 4000]


@pytest.mark.parametrize(
    ("shape", "data_format", "result_shape"),
    [
        ((3, 2), "CB", (4, 2)),
        ((2, 3), "BC", (4, 2)),
        ((5, 3, 2), "TCB", (4, 2, 5)),  # unformatted result in the order of "CBT"
        ((3, 2), "CBT", (4, 2, 1)),
        ((3, 1, 2), "SCB", None),
    ],
)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_input_with_data_format(shape, data_format, result_shape, kind):
    x = data(shape, 7)
    padded = x.reshape(shape + (1,) * (len(data_format) - len(shape)))
    features = np.prod([size for size, label in zip(padded.shape, data_format, strict=True) if label in "SC"])
    w, b = data((4, features), 8), data(4, 9)
    expected, _ = reference(padded, data_format, w, b)
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = F.fullyconnect(X, torch.from_numpy(w), torch.from_numpy(b), DataFormat=data_format)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    assert tuple(Y.shape) == (result_shape or expected.shape)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("bias", "single"),
    [
        pytest.param(lambda b: torch.from_numpy(b), False, id="vector"),
        pytest.param(lambda b: torch.from_numpy(b).reshape(-1, 1), False, id="column"),
        pytest.param(lambda b: b.reshape(1, -1), False, id="numpy-row"),
        pytest.param(lambda b: dlf.dlarray(torch.from_numpy(b)), False, id="dlarray"),
        pytest.param(lambda b: torch.from_numpy(b[:1]), True, id="one-element"),
        pytest.param(lambda b: float(b[0]), True, id="number"),
        pytest.param(lambda b: np.float64(b[0]), True, id="numpy-scalar"),
    ],
)
def test_bias_forms(bias, single):
    x, w, b = data((3, 2), 10), data((4, 3), 11), data(4, 12)
    expected, _ = reference(x, "CB", w, np.full(4, b[0]) if single else b)
    Y = F.fullyconnect(dlf.dlarray(torch.from_numpy(x), "CB"), torch.from_numpy(w), bias(b))
    assert Y.dtype == torch.float64 and tuple(Y.shape) == (4, 2)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_weights_as_unformatted_dlarray_and_numpy():
    x, w, b = data((3, 2), 13), data((4, 3), 14), data(4, 15)
    expected, _ = reference(x, "CB", w, b)
    X = dlf.dlarray(torch.from_numpy(x), "CB")
    for weights in (w, dlf.dlarray(torch.from_numpy(w))):
        Y = F.fullyconnect(X, weights, b)
        np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


# -- precision ---------------------------------------------------------------------------------
f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64


@pytest.mark.parametrize(
    ("x_dtype", "w_dtype", "b_dtype", "expected", "tolerance"),
    [
        (f64, f64, f64, f64, 1e-12),
        (f64, f32, f32, f32, 1e-5),  # MATLAB: single wins over double
        (f32, f64, f64, f32, 1e-5),
        (f64, f64, f32, f32, 1e-5),  # the bias counts too
        (f64, f64, None, f64, 1e-12),  # a number is a double: float64 data stays float64
        (f32, f32, None, f32, 1e-5),
        (bf16, f32, f32, f32, 3e-2),  # narrower types: torch's promotion
        (bf16, bf16, None, bf16, 1e-1),
        (bf16, f64, f64, bf16, 1e-1),
        (f16, bf16, f32, f32, 1e-2),
    ],
)
def test_precision_rule(x_dtype, w_dtype, b_dtype, expected, tolerance):
    x, w, b = data((3, 2), 16), data((4, 3), 17), data(4, 18)
    X = dlf.dlarray(torch.from_numpy(x).to(x_dtype), "CB")
    bias = 0.25 if b_dtype is None else torch.from_numpy(b).to(b_dtype)
    Y = F.fullyconnect(X, torch.from_numpy(w).to(w_dtype), bias)
    assert Y.dtype == expected and dlf.dims(Y) == "CB"
    # the reference sees the values each operand actually holds
    held = [t.to(f64).numpy() for t in (X._data, torch.from_numpy(w).to(w_dtype))]
    b_held = np.full(4, 0.25) if b_dtype is None else torch.from_numpy(b).to(b_dtype).to(f64).numpy()
    expected_values, _ = reference(held[0], "CB", held[1], b_held)
    np.testing.assert_allclose(
        dlf.extractdata(Y).to(f64).numpy(), expected_values, rtol=tolerance, atol=tolerance
    )


def test_logical_data_takes_the_weights_type_and_integer_data_is_refused():
    # MATLAB's dlarray holds single, double or logical data
    Y = F.fullyconnect(
        dlf.dlarray(torch.tensor([[True], [True]]), "CB"), torch.tensor([[1.0, 2.0]], dtype=f64), 0
    )
    assert Y.dtype == f64 and dlf.extractdata(Y).tolist() == [[3.0]]
    with pytest.raises(
        DLFormatError, match=r"fullyconnect needs floating-point or logical data .* got dtype torch.int64"
    ):
        F.fullyconnect(dlf.dlarray(torch.tensor([[1], [2]]), "CB"), torch.tensor([[1.0, 2.0]], dtype=f64), 0)


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("X", "weights", "bias", "message"),
    [
        (
            dlf.dlarray(torch.ones(3, 2, 2), "CBU"),
            torch.ones(4, 3),
            0,
            'fullyconnect cannot take format "CBU": "U" dimensions have no meaning it could flatten or keep',
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "BT"),
            torch.ones(4, 3),
            0,
            'fullyconnect needs data with a "C" dimension; got format "BT"',
        ),
        (
            dlf.dlarray(torch.ones(4, 3, 2), "SCB"),
            torch.ones(5, 3),
            0,
            r'fullyconnect: the "SCB" input of size 4×3×2 flattens to 12 features; the weights take 3 \(5×3\)',
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            torch.ones(4, 2, 2),
            0,
            r'fullyconnect: the "CB" input of size 3×2 flattens to 3 features; the weights take 4 \(4×4\)',
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            torch.ones(4, 3),
            torch.ones(3),
            r"fullyconnect bias must have 4 elements \(OutputSize\) or 1; got 3",
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            torch.ones(3),
            0,
            r"fullyconnect weights must be OutputSize × InputSize \(or OutputSize × h × w × c\); got 3",
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            torch.tensor(1.0),
            0,
            "fullyconnect weights must be OutputSize × InputSize .*; got a scalar",
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            "glorot",
            0,
            'fullyconnect weights must be a dlarray, a tensor, a NumPy array or a number; got "glorot"',
        ),
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            torch.ones(4, 3),
            None,
            "fullyconnect bias must be a dlarray, a tensor, a NumPy array or a number; got None",
        ),
    ],
)
def test_errors(X, weights, bias, message):
    with pytest.raises(DLFormatError, match=message):
        F.fullyconnect(X, weights, bias)


def test_data_format_errors():
    with pytest.raises(
        DLFormatError,
        match='fullyconnect: DataFormat is only for unformatted data; the input already has format "CB"',
    ):
        F.fullyconnect(dlf.dlarray(torch.ones(3, 2), "CB"), torch.ones(4, 3), 0, DataFormat="CB")
    with pytest.raises(
        DLFormatError, match=r'fullyconnect needs a formatted dlarray, or DataFormat="\.\.\."'
    ):
        F.fullyconnect(torch.ones(3, 2), torch.ones(4, 3), 0)
    with pytest.raises(
        DLFormatError, match='fullyconnect: DataFormat "CB" labels 2 dimensions; the data has 3'
    ):
        F.fullyconnect(torch.ones(3, 2, 2), torch.ones(4, 3), 0, DataFormat="CB")


# -- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "fmt", "weights_shape"),
    [((2, 3, 2), "SCB", (2, 2, 3)), ((3, 2, 2), "CBT", (2, 3)), ((3, 2), "CB", (2, 3))],
)
def test_gradcheck(shape, fmt, weights_shape):
    x = torch.from_numpy(data(shape, 19)).requires_grad_()
    w = torch.from_numpy(data(weights_shape, 20)).requires_grad_()
    b = torch.from_numpy(data(weights_shape[0], 21)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x, w, b: F.fullyconnect(dlf.dlarray(x, fmt), w, b)._data, (x, w, b)
    )


def test_gradients_reach_the_learnables_of_a_formatted_input():
    """d(sum Y)/dW[o, f] = sum over observations of the flattened x[f]; d(sum Y)/db = number of observations."""
    x = data((2, 3, 4), 22)
    w = torch.zeros(5, 6, dtype=f64, requires_grad=True)
    b = torch.zeros(5, dtype=f64, requires_grad=True)
    F.fullyconnect(dlf.dlarray(torch.from_numpy(x), "SCB"), w, b)._data.sum().backward()
    flattened = x.reshape(6, 4, order="F").sum(axis=1)
    np.testing.assert_allclose(w.grad.numpy(), np.tile(flattened, (5, 1)), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(b.grad.numpy(), np.full(5, 4.0))


@pytest.mark.parametrize(
    "bias",
    [
        pytest.param(lambda b: b.reshape(-1, 1), id="column"),
        pytest.param(lambda b: b, id="vector"),
        pytest.param(lambda b: b[:1], id="one-element"),
    ],
)
def test_features_by_observations_fast_path_matches_the_flattening_path(bias):
    """ "CB" data runs one addmm on the data as it is; the same values labelled "SCB" with one S
    go through the general flatten-permute-linear path: equal values and gradients."""
    x, w, b = (torch.from_numpy(data(shape, seed)) for shape, seed in (((3, 5), 23), ((4, 3), 24), (4, 25)))
    results = []
    for fmt, shaped in (("CB", x), ("SCB", x.reshape(1, 3, 5))):
        leaves = [t.clone().requires_grad_() for t in (shaped, w, b)]
        Y = F.fullyconnect(dlf.dlarray(leaves[0], fmt), leaves[1], bias(leaves[2]))
        assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (4, 5)
        weighting = torch.from_numpy(data((4, 5), 26))
        gradients = torch.autograd.grad((Y._data * weighting).sum(), leaves)
        results.append((Y._data.detach(), gradients[0].reshape(3, 5), *gradients[1:]))
    for fast, general in zip(*results, strict=True):
        torch.testing.assert_close(fast, general, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "shape", "memory", "outputs"),
    [
        ("SSCB", (5, 4, 3, 6), (3, 2, 0, 1), 3),  # batch-first images ("BCSS" memory): weights reordered
        ("SSCB", (5, 4, 3, 6), (0, 1, 2, 3), 3),  # canonical memory: weights reordered, rows strided
        ("SCBT", (7, 2, 3, 5), (3, 2, 1, 0), 3),  # column-major memory: MATLAB's order is a view
        ("SSCB", (2, 3, 4, 6), (3, 2, 0, 1), 50),  # more outputs than observations: the data copied
    ],
)
def test_flattening_in_memory_order_equals_matlabs_order(fmt, shape, memory, outputs):
    """However the input is stored, fullyconnect gives MATLAB's column-major flattening (the
    first S fastest, C slowest) and its gradients; where it reads the rows in the data's memory
    order, it reorders the weights' columns to match."""
    generator = torch.Generator().manual_seed(5)
    stored = torch.randn(tuple(shape[axis] for axis in memory), generator=generator, dtype=torch.float64)
    x = stored.permute(tuple(memory.index(axis) for axis in range(4))).requires_grad_()
    kept = [axis for axis, label in enumerate(fmt) if label in "BT"]
    features = [axis for axis, label in enumerate(fmt) if label in "SC"]
    weights = torch.randn(
        outputs, int(np.prod([shape[axis] for axis in features])), generator=generator, dtype=torch.float64
    ).requires_grad_()
    bias = torch.randn(outputs, generator=generator, dtype=torch.float64)
    Y = F.fullyconnect(dlf.dlarray(x, fmt), weights, bias)
    # MATLAB's definition in NumPy: features flattened column-major (the first S fastest)
    array, matrix = x.detach().numpy(), weights.detach().numpy()
    moved = np.moveaxis(array, features + kept, list(range(4)))
    columns = moved.reshape(matrix.shape[1], -1, order="F")  # features × observations (and times)
    expected = (matrix @ columns + bias.numpy()[:, None]).reshape(
        (outputs, *(shape[axis] for axis in kept)), order="F"
    )
    np.testing.assert_allclose(Y._data.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    # gradients of the sum of upstream · Y: upstream · columnsᵀ for the weights, Wᵀ · upstream
    # folded back into the input's shape for the input
    upstream = np.random.default_rng(6).normal(size=expected.shape)
    flat_upstream = upstream.reshape(outputs, -1, order="F")
    input_gradient = np.moveaxis(
        (matrix.T @ flat_upstream).reshape(moved.shape, order="F"), list(range(4)), features + kept
    )
    ours = torch.autograd.grad((Y._data * torch.from_numpy(upstream)).sum(), [x, weights])
    np.testing.assert_allclose(ours[0].numpy(), input_gradient, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours[1].numpy(), flat_upstream @ columns.T, rtol=1e-12, atol=1e-12)
