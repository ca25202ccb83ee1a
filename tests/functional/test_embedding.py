"""``embed`` against MATLAB's definition: 1-based index ``k`` becomes column ``k`` of the weights
(``weights[:, k-1]``), placed along ``C``; an index that is not an integer in 1 .. NumWords is an error."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def reference(indices: np.ndarray, fmt: str, weights: np.ndarray) -> tuple[np.ndarray, str]:
    """MATLAB's embed of ``indices`` labelled ``fmt`` (any order, C of size 1 or absent)."""
    if "C" in fmt:
        assert indices.shape[fmt.index("C")] == 1
        indices = np.squeeze(indices, axis=fmt.index("C"))
        fmt = fmt.replace("C", "")
    out = np.empty((weights.shape[0], *indices.shape))
    for index in np.ndindex(*indices.shape):
        out[(slice(None), *index)] = weights[:, int(indices[index]) - 1]
    fmt = "C" + fmt  # channels first, then the indices' dimensions as given
    order = sorted(range(len(fmt)), key=lambda axis: RANK[fmt[axis]])
    return out.transpose(order), "".join(fmt[axis] for axis in order)


def table(dimension=4, words=5, dtype=torch.float64):
    return torch.from_numpy(np.random.default_rng(0).standard_normal((dimension, words))).to(dtype)


def indices(shape, words=5, seed=1):
    return np.random.default_rng(seed).integers(1, words + 1, size=shape).astype(np.float64)


@pytest.mark.parametrize(
    ("shape", "fmt", "expected_fmt"),
    [
        ((1, 3), "BT", "CBT"),
        ((2, 3), "BT", "CBT"),
        ((3, 2), "TB", "CBT"),
        ((1, 2, 3), "CBT", "CBT"),
        ((3, 2, 1), "TBC", "CBT"),
        ((4,), "B", "CB"),
        ((1, 4), "CB", "CB"),
        ((6,), "T", "CT"),
        ((3, 1, 2), "SCB", "SCB"),
        ((3, 2), "SB", "SCB"),
        ((2, 3, 2), "SSB", "SSCB"),
        ((2, 3), "BU", "CBU"),
    ],
)
def test_formatted_indices(shape, fmt, expected_fmt):
    x, weights = indices(shape), table()
    expected, fmt_expected = reference(x, fmt, weights.numpy())
    assert fmt_expected == expected_fmt  # the reference agrees with the stated rule
    Y = F.embed(dlf.dlarray(torch.from_numpy(x), fmt), weights)
    assert dlf.dims(Y) == expected_fmt and tuple(Y.shape) == expected.shape
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), expected)


def test_hand_example_is_one_based():
    weights = torch.tensor([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    Y = F.embed(dlf.dlarray(torch.tensor([[3.0, 1.0, 2.0]]), "BT"), weights)
    assert dlf.dims(Y) == "CBT"
    assert dlf.extractdata(Y)[:, 0, :].tolist() == [[30.0, 10.0, 20.0], [3.0, 1.0, 2.0]]


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64, torch.float16]
)
def test_index_types(dtype):
    x = np.array([[1, 5, 2, 4]])
    Y = F.embed(dlf.dlarray(torch.from_numpy(x).to(dtype), "BT"), table())
    expected, _ = reference(x, "BT", table().numpy())
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), expected)


@pytest.mark.parametrize(
    ("weights_dtype", "index_dtype"),
    [
        (torch.float64, torch.float32),
        (torch.float32, torch.float64),
        (torch.bfloat16, torch.float64),
        (torch.float16, torch.int64),
    ],
)
def test_result_takes_the_weights_dtype(weights_dtype, index_dtype):
    weights = table(dtype=weights_dtype)
    Y = F.embed(dlf.dlarray(torch.tensor([[2, 3]]).to(index_dtype), "BT"), weights)
    assert Y.dtype == weights_dtype
    np.testing.assert_array_equal(
        dlf.extractdata(Y).to(torch.float64).numpy()[:, 0, :], weights.to(torch.float64).numpy()[:, [1, 2]]
    )


@pytest.mark.parametrize(
    ("shape", "data_format", "result_shape"),
    [
        ((2, 3), "BT", (4, 2, 3)),
        ((3, 2), "TB", (4, 2, 3)),  # unformatted result in the order of "CBT"
        ((3, 2, 1), "TBC", (4, 2, 3)),
        ((5,), "B", (4, 5)),
        ((2, 3), "SB", (2, 4, 3)),  # "SCB"
    ],
)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_indices_with_data_format(shape, data_format, result_shape, kind):
    x, weights = indices(shape), table()
    expected, _ = reference(x, data_format, weights.numpy())
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = F.embed(X, weights, DataFormat=data_format)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    assert tuple(Y.shape) == result_shape == expected.shape
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), expected)


def test_weights_as_numpy_and_unformatted_dlarray():
    weights = table().numpy()
    x = dlf.dlarray(torch.tensor([[4.0, 1.0]]), "BT")
    for given in (weights, dlf.dlarray(torch.from_numpy(weights))):
        Y = F.embed(x, given)
        np.testing.assert_array_equal(dlf.extractdata(Y).numpy()[:, 0, :], weights[:, [3, 0]])


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (0.0, "0"),
        (6.0, "6"),
        (-1.0, "-1"),
        (1.5, "1.5"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (100, "100"),
    ],
)
def test_indices_outside_the_table_are_errors(bad, shown):
    x = torch.tensor([[1.0, 2.0, bad]]) if isinstance(bad, float) else torch.tensor([[1, 2, bad]])
    with pytest.raises(
        DLFormatError,
        match=rf"embed got index {shown}, outside 1 \.\. 5 \(the weights' columns; indices are 1-based, as in MATLAB\)",
    ):
        F.embed(dlf.dlarray(x, "BT"), table())


@pytest.mark.parametrize(
    ("X", "weights", "options", "message"),
    [
        (
            dlf.dlarray(torch.ones(2, 1, 3), "CBT"),
            table(),
            {},
            r'embed reads one index per element, so the input\'s "C" must have size 1 \(or be absent\); it has size 2',
        ),
        (
            dlf.dlarray(torch.ones(1, 3), "BT"),
            torch.ones(4, 5, 1),
            {},
            "embed weights must be a Dimension × NumWords matrix; got 3 dimensions",
        ),
        (
            dlf.dlarray(torch.ones(1, 3), "BT"),
            torch.ones(5),
            {},
            "embed weights must be a Dimension × NumWords matrix; got 1 dimensions",
        ),
        (
            dlf.dlarray(torch.ones(1, 3), "BT"),
            "narrow-normal",
            {},
            "embed weights must be a dlarray, a tensor, a NumPy array or a number",
        ),
        (
            dlf.dlarray(torch.ones(1, 3), "BT"),
            table(),
            {"DataFormat": "BT"},
            'embed: DataFormat is only for unformatted data; the input already has format "BT"',
        ),
        (torch.ones(1, 3), table(), {}, r'embed needs a formatted dlarray, or DataFormat="\.\.\." to label'),
    ],
)
def test_errors(X, weights, options, message):
    with pytest.raises(DLFormatError, match=message):
        F.embed(X, weights, **options)


def test_gradient_counts_each_word():
    """d(sum Y)/dW[:, k] is the number of times index k+1 occurs (MATLAB's embed is a lookup)."""
    x = indices((3, 4), seed=2)
    weights = table().requires_grad_()
    F.embed(dlf.dlarray(torch.from_numpy(x), "BT"), weights)._data.sum().backward()
    counts = np.bincount(x.astype(int).reshape(-1) - 1, minlength=5)
    np.testing.assert_array_equal(weights.grad.numpy(), np.tile(counts, (4, 1)).astype(np.float64))


def test_gradcheck_weights():
    x = dlf.dlarray(torch.tensor([[1.0, 3.0, 3.0], [2.0, 1.0, 5.0]]), "BT")
    weights = table(3, 5).requires_grad_()
    assert torch.autograd.gradcheck(lambda w: F.embed(x, w)._data, (weights,))
