"""MATLAB's rescale and normalize on dlarrays: NumPy float64 references written from the MathWorks
pages' definitions; the size and the format are kept (docs/dlarray_functions.md#scaling)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(7)
DATA = RNG.standard_normal((3, 4, 5))  # "CBT"


def X():
    return dlf.dlarray(torch.tensor(DATA), "CBT")


def values(Y):
    return dlf.stripdims(Y).numpy()


def np_rescale(a, lower=0.0, upper=1.0, low=None, high=None):
    low = a.min() if low is None else low
    high = a.max() if high is None else high
    return lower + (np.clip(a, low, high) - low) / (high - low) * (upper - lower)


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((), {}, np_rescale(DATA)),
        ((-1, 1), {}, np_rescale(DATA, -1, 1)),
        ((), {"InputMin": -0.5, "InputMax": 0.5}, np_rescale(DATA, low=-0.5, high=0.5)),
        ((2, 3, "InputMin", -0.5), {}, np_rescale(DATA, 2, 3, low=-0.5)),  # MATLAB's Name, value pair
        ((), {"inputmax": 0.0}, np_rescale(DATA, high=0.0)),  # names in any case, as MATLAB's
    ],
)
def test_rescale_matches_its_definition_and_keeps_the_format(args, kwargs, expected):
    Y = dlf.rescale(X(), *args, **kwargs)
    assert dlf.dims(Y) == "CBT" and Y.dtype == torch.float64
    np.testing.assert_allclose(values(Y), expected, rtol=1e-12, atol=1e-15)


def test_rescale_of_the_mathworks_example_with_column_ranges():
    a = np.array([[0.4, -4], [0.5, -5], [0.9, 9], [0.2, 1]])
    colmin, colmax = a.min(axis=0, keepdims=True), a.max(axis=0, keepdims=True)
    R = dlf.rescale(torch.tensor(a), "InputMin", torch.tensor(colmin), "InputMax", torch.tensor(colmax))
    assert dlf.dims(R) == ""
    np.testing.assert_allclose(values(R), (a - colmin) / (colmax - colmin), rtol=1e-12)
    np.testing.assert_allclose(values(R)[0], [0.2857, 0.0714], atol=5e-5)  # the page's printed values


def test_rescale_bounds_align_by_label():
    low = dlf.min(X(), [], "CB")  # one minimum per time step: 1×1×5 "CBT"
    high = dlf.max(X(), [], "CB")
    Y = dlf.rescale(X(), InputMin=low, InputMax=high)
    reference = (DATA - DATA.min((0, 1), keepdims=True)) / np.ptp(DATA, (0, 1), keepdims=True)
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_allclose(values(Y), reference, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.rescale(X(), 1, -1), "lower bound l must not exceed the upper bound u"),
        (lambda: dlf.rescale(dlf.dlarray(torch.ones(3), "T")), "input range is empty"),
        (lambda: dlf.rescale(X(), InputMin=1, InputMax=1), "input range is empty"),
        (lambda: dlf.rescale(X(), "InputRange", 1), "rescale has no option 'InputRange'"),
        (lambda: dlf.rescale(X(), None, 1), "l must be a number or an array"),
        (lambda: dlf.rescale(dlf.dlarray(torch.arange(3)), 0, 1), "needs floating-point or logical data"),
    ],
)
def test_rescale_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def zscore(a, axis):
    return (a - a.mean(axis, keepdims=True)) / a.std(axis, ddof=1, keepdims=True)


def pnorm(a, axis, p):
    return a / (
        np.abs(a).max(axis, keepdims=True)
        if p == np.inf
        else (np.abs(a) ** p).sum(axis, keepdims=True) ** (1 / p)
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), zscore(DATA, 0)),  # the first non-singleton dimension
        ((2,), zscore(DATA, 1)),
        (("T",), zscore(DATA, 2)),
        (("T", "zscore", "std"), zscore(DATA, 2)),
        ((3, "norm"), pnorm(DATA, 2, 2)),
        ((3, "norm", 1), pnorm(DATA, 2, 1)),
        ((3, "norm", np.inf), pnorm(DATA, 2, np.inf)),
        (("B", "range"), (DATA - DATA.min(1, keepdims=True)) / np.ptp(DATA, 1, keepdims=True)),
        (("B", "range", [-1, 3]), -1 + 4 * (DATA - DATA.min(1, keepdims=True)) / np.ptp(DATA, 1, keepdims=True)),
        (("C", "center"), DATA - DATA.mean(0, keepdims=True)),
        (("C", "center", "mean"), DATA - DATA.mean(0, keepdims=True)),
        (("C", "center", 2.5), DATA - 2.5),
        (("C", "scale"), DATA / DATA.std(0, ddof=1, keepdims=True)),
        (("C", "scale", "first"), DATA / DATA[:1]),
        (("C", "scale", 4.0), DATA / 4.0),
        (("C", "center", "mean", "scale", "std"), zscore(DATA, 0)),
        (("C", "scale", 2.0, "center", 1.0), (DATA - 1.0) / 2.0),  # centred first, in either order
    ],
)  # fmt: skip
def test_normalize_matches_its_definition_and_keeps_the_format(args, expected):
    Y = dlf.normalize(X(), *args)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == DATA.shape
    np.testing.assert_allclose(values(Y), expected, rtol=1e-10, atol=1e-12)


def test_normalize_of_the_mathworks_vector_example():
    N = dlf.normalize(torch.arange(1.0, 6.0, dtype=torch.float64).reshape(1, 5))  # MATLAB: normalize(1:5)
    np.testing.assert_allclose(values(N), [[-1.2649, -0.6325, 0, 0.6325, 1.2649]], atol=5e-5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("zscore", "robust"), "'robust' needs its median and median absolute deviation"),
        (("medianiqr",), "'medianiqr' needs its median and interquartile range"),
        (("center", "median"), "'median' needs MATLAB's median"),
        (("scale", "mad"), "'mad' needs the median absolute deviation"),
        (("norm", "range"), "only 'center' and 'scale' can be used together"),
        (("range", [1, 0]), "'range' takes an interval"),
        (("norm", -1), "'norm' takes a positive p or Inf"),
        ((1, "zscore", "var"), "'zscore' takes the type 'std'"),
        ((4,), "out of range for a dlarray with 3 dimensions"),
        (("S",), 'has no "S" dimension'),
        ((1, 7), "method 7 is not one of"),
    ],
)
def test_normalize_errors(args, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.normalize(X(), *args)


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("zscore", "'zscore' divides by 0 along the dimension \\(a constant vector\\)"),
        ("scale", "'scale' divides by 0"),
        ("range", "'range' divides by 0"),
        ("norm", "'norm' divides by 0 along the dimension \\(a zero vector\\)"),
    ],
)
def test_normalize_refuses_a_zero_spread(method, message):
    constant = dlf.dlarray(
        torch.tensor([[2.0, 2.0, 2.0], [1.0, 0.0, 3.0]]) * (0 if method == "norm" else 1), "CB"
    )
    constant = dlf.cat("C", constant[0:1, :], dlf.dlarray(torch.tensor([[1.0, 0.0, 3.0]]), "CB"))
    with pytest.raises(DLFormatError, match=message):
        dlf.normalize(constant, "B", method)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("B", "scale", "first"), r"'scale' divides by 0 along the dimension \(a first element of 0\)"),
        (("B", "scale", 0.0), r"'scale' divides by 0 along the dimension \(a scale of 0\)"),
        (("B", "center", 1.0, "scale", 0), r"\(a scale of 0\)"),
    ],
)
def test_normalize_refuses_a_scale_of_zero(args, message):
    X = dlf.dlarray(torch.tensor([[0.0, 2.0, 3.0]]), "CB")
    with pytest.raises(DLFormatError, match=message):
        dlf.normalize(X, *args)


# NaN left out of the statistics ("omitnan"), per element row by row; the last row is all NaN
NAN_DATA = np.array(
    [[1.0, 2.0, math.nan, 4.0], [2.0, 3.0, 4.0, 8.0], [-3.0, math.nan, 0.5, 1.0], [math.nan] * 4]
)


def without_nan(method, kind, row):
    kept = row[~np.isnan(row)]
    if kept.size == 0:
        return np.full_like(row, math.nan)
    mean, std = kept.mean(), kept.std(ddof=1)
    if method == "zscore":
        return (row - mean) / std
    if method == "norm":
        return row / (np.abs(kept).max() if kind == np.inf else (np.abs(kept) ** kind).sum() ** (1 / kind))
    if method == "range":
        return kind[0] + (row - kept.min()) / (kept.max() - kept.min()) * (kind[1] - kind[0])
    if method == "center":
        return row - mean
    if method == "scale":
        return row / (row[0] if kind == "first" else std)
    return (row - mean) / std  # center and scale


@pytest.mark.parametrize(
    ("args", "method", "kind"),
    [
        ((), "zscore", None),
        (("zscore", "std"), "zscore", None),
        (("norm",), "norm", 2),
        (("norm", 1), "norm", 1),
        (("norm", 3), "norm", 3),
        (("norm", "inf"), "norm", np.inf),
        (("range",), "range", (0, 1)),
        (("range", [-1, 3]), "range", (-1, 3)),
        (("center",), "center", None),
        (("scale",), "scale", None),
        (("scale", "first"), "scale", "first"),  # the first element as it is, NaN or not
        (("center", "mean", "scale", "std"), "both", None),
    ],
)
def test_normalize_leaves_nan_out_of_its_statistics(args, method, kind):
    N = dlf.normalize(dlf.dlarray(torch.tensor(NAN_DATA), "CB"), "B", *args)
    expected = np.stack([without_nan(method, kind, row) for row in NAN_DATA])
    assert dlf.dims(N) == "CB"
    np.testing.assert_allclose(values(N), expected, rtol=1e-12, atol=1e-14)  # NaN where expected is NaN


def test_normalize_nan_values_of_octaves_matlab_compatible_tests():
    # GNU Octave's normalize.m tests for its bug 50571 ("normalize ignores NaN values"), 2-D data along 2
    A = dlf.dlarray(torch.tensor([[1.0, 2.0, math.nan], [2.0, 3.0, 4.0]], dtype=torch.float64))
    h = math.sqrt(2) / 2
    cases = [
        ((2,), [[-h, h, math.nan], [-1, 0, 1]]),
        ((2, "norm", 1), [[1 / 3, 2 / 3, math.nan], [2 / 9, 1 / 3, 4 / 9]]),
        ((2, "norm", math.inf), [[0.5, 1, math.nan], [0.5, 0.75, 1]]),
        ((2, "range", [1, 2]), [[1, 2, math.nan], [1, 1.5, 2]]),
        ((2, "center", "mean"), [[-0.5, 0.5, math.nan], [-1, 0, 1]]),
    ]
    for args, expected in cases:
        np.testing.assert_allclose(values(dlf.normalize(A, *args)), expected, rtol=1e-12, err_msg=str(args))


def test_normalize_of_one_value_among_nan_is_a_constant_vector():
    with pytest.raises(
        DLFormatError, match="'zscore' divides by 0 along the dimension \\(a constant vector\\)"
    ):
        dlf.normalize(dlf.dlarray(torch.tensor([[math.nan, 5.0, math.nan]]), "CB"), "B")


def test_scaling_keeps_autograd():
    W = torch.tensor(DATA, requires_grad=True)
    total = dlf.sum(
        dlf.normalize(dlf.dlarray(W, "CBT"), "T") ** 2 + dlf.rescale(dlf.dlarray(W, "CBT")), "all"
    )
    dlf.stripdims(total).backward()
    assert W.grad is not None and torch.isfinite(W.grad).all()
