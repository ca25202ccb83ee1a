"""Reductions keep the format with the reduced dimensions as singletons; dimensions are MATLAB's
numbers (from 1), labels or "all" (docs/dlarray_functions.md#reductions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(7)
DATA = RNG.standard_normal((3, 4, 5))  # "CBT"


@pytest.fixture
def X():
    return dlf.dlarray(torch.tensor(DATA), "CBT")


DIMS = [
    (None, (0,)),  # MATLAB's default: the first dimension whose size is not 1
    (3, (2,)),
    ("T", (2,)),
    ("CT", (0, 2)),
    ([1, 3], (0, 2)),
    ((2,), (1,)),
    (np.int64(2), (1,)),
    (2.0, (1,)),
    ("all", (0, 1, 2)),
]
REDUCTIONS = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "vecnorm": lambda x, axis, keepdims: np.sqrt(np.sum(x**2, axis=axis, keepdims=keepdims)),
}


def call(name, X, dim):
    function = getattr(dlf, name)
    if name in ("max", "min"):
        return function(X, [], dim)
    if name == "vecnorm":
        return function(X, 2, dim)
    return function(X) if dim is None else function(X, dim)


@pytest.mark.parametrize(("dim", "axes"), DIMS, ids=[repr(dim) for dim, _ in DIMS])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_numpy_keeping_the_format_and_singletons(X, name, dim, axes):
    Y = call(name, X, dim)
    expected = REDUCTIONS[name](DATA, axis=axes, keepdims=True)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), expected, rtol=1e-12)


def test_the_default_dimension_skips_leading_singletons():
    X = dlf.dlarray(torch.tensor(DATA[:1]), "CBT")  # C is a singleton: the default is B
    np.testing.assert_allclose(dlf.stripdims(dlf.sum(X)).numpy(), DATA[:1].sum(1, keepdims=True))


def test_spatial_label_names_every_spatial_dimension():
    X = dlf.dlarray(torch.tensor(DATA), "SSC")
    np.testing.assert_allclose(dlf.stripdims(dlf.mean(X, "S")).numpy(), DATA.mean((0, 1), keepdims=True))


def test_a_reduced_trailing_u_is_dropped_as_dlarray_drops_it():
    Y = dlf.sum(dlf.dlarray(torch.tensor(DATA), "CBU"), "U")
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (3, 4)


def test_logical_data_sums_as_single_and_integers_stay_integers():
    assert dlf.sum(dlf.dlarray(torch.tensor([True, True, False]), "C")).dtype == torch.float32
    total = dlf.sum(dlf.dlarray(torch.tensor([1, 2, 3]), "C"))
    assert total.dtype == torch.int64 and total._data.item() == 6


def test_max_and_min_omit_nan_as_matlab_and_give_nan_only_where_all_are():
    x = np.array([[1.0, math.nan], [math.nan, math.nan], [3.0, -2.0]])  # "CB"
    X = dlf.dlarray(torch.tensor(x), "CB")
    np.testing.assert_array_equal(dlf.stripdims(dlf.max(X, [], 1)).numpy(), [[3.0, -2.0]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.min(X, [], "B")).numpy(), [[1.0], [math.nan], [-2.0]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.max(X, None, "all")).numpy(), [[3.0]])


def test_max_and_min_give_matlabs_one_based_indices_of_the_first_of_ties():
    X = dlf.dlarray(torch.tensor([[2.0, 5.0], [7.0, 5.0], [7.0, 1.0]]), "CB")
    M, indices = dlf.max(X, [], "C", nargout=2)
    assert dlf.dims(indices) == "CB" and indices.dtype == torch.int64
    np.testing.assert_array_equal(dlf.stripdims(M).numpy(), [[7.0, 5.0]])
    np.testing.assert_array_equal(dlf.stripdims(indices).numpy(), [[2, 1]])
    _, J = dlf.min(X, [], 2, nargout=2)
    np.testing.assert_array_equal(dlf.stripdims(J).numpy(), [[1], [2], [2]])


def test_two_input_max_and_min_are_elementwise_label_aligned_and_omit_nan():
    X = dlf.dlarray(torch.tensor([[1.0, math.nan, 3.0]]), "CB")
    Y = dlf.dlarray(torch.tensor([2.0]), "C")
    np.testing.assert_array_equal(dlf.stripdims(dlf.max(X, Y)).numpy(), [[2.0, 2.0, 3.0]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.min(X, 0)).numpy(), [[0.0, 0.0, 0.0]])
    assert dlf.dims(dlf.max(X, Y)) == "CB"


def test_any_ignores_nan_and_all_counts_it_as_nonzero():
    X = dlf.dlarray(torch.tensor([[0.0, math.nan], [0.0, 2.0], [0.0, 0.0]]), "CB")
    np.testing.assert_array_equal(dlf.stripdims(dlf.any(X, 2)).numpy(), [[False], [True], [False]])
    np.testing.assert_array_equal(
        dlf.stripdims(dlf.any(dlf.dlarray(torch.tensor([math.nan]), "C"))).numpy(), [False]
    )
    np.testing.assert_array_equal(dlf.stripdims(dlf.all(X, "C")).numpy(), [[False, False]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.all(X != 0, "all")).numpy(), [[False]])
    assert dlf.any(X, "all").dtype == torch.bool


def test_cumsum_runs_forward_or_in_reverse_and_keeps_the_size(X):
    np.testing.assert_allclose(dlf.stripdims(dlf.cumsum(X, "T")).numpy(), np.cumsum(DATA, 2), rtol=1e-12)
    reverse = np.flip(np.cumsum(np.flip(DATA, 1), 1), 1)
    np.testing.assert_allclose(dlf.stripdims(dlf.cumsum(X, 2, "reverse")).numpy(), reverse, rtol=1e-12)
    np.testing.assert_allclose(
        dlf.stripdims(dlf.cumsum(X, "reverse")).numpy(), np.flip(np.cumsum(np.flip(DATA, 0), 0), 0)
    )
    assert dlf.dims(dlf.cumsum(X)) == "CBT"


@pytest.mark.parametrize("p", [1, 2, 3.5, math.inf, "Inf"])
def test_vecnorm_matches_numpy(X, p):
    order = math.inf if p == "Inf" else p
    expected = np.linalg.norm(DATA, ord=order, axis=0, keepdims=True)
    np.testing.assert_allclose(dlf.stripdims(dlf.vecnorm(X, p, "C")).numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("data", "p", "expected"),
    [
        (np.array([3.0, -4.0]), 2, 5.0),
        (np.array([3.0, -4.0]), 1, 7.0),
        (np.array([3.0, -4.0]), math.inf, 4.0),
        (np.array([3.0, -4.0]), -math.inf, 3.0),
        (np.array([[1.0, -2.0], [3.0, 4.0]]), 1, np.linalg.norm([[1.0, -2.0], [3.0, 4.0]], 1)),
        (np.array([[1.0, -2.0], [3.0, 4.0]]), 2, np.linalg.norm([[1.0, -2.0], [3.0, 4.0]], 2)),
        (np.array([[1.0, -2.0], [3.0, 4.0]]), math.inf, np.linalg.norm([[1.0, -2.0], [3.0, 4.0]], np.inf)),
        (np.array([[1.0, -2.0], [3.0, 4.0]]), "fro", math.sqrt(30.0)),
        (DATA, "fro", np.sqrt((DATA**2).sum())),
    ],
)
def test_norm_of_vectors_matrices_and_arrays(data, p, expected):
    fmt = "CBT"[: data.ndim] if data.ndim > 1 else "C"
    Y = dlf.norm(dlf.dlarray(torch.tensor(data), fmt), p)
    assert dlf.dims(Y) == fmt and Y._data.numel() == 1
    np.testing.assert_allclose(Y._data.item(), expected, rtol=1e-12)


def test_reductions_keep_autograd():
    leaf = torch.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    dlf.stripdims(dlf.sum(dlf.max(dlf.dlarray(leaf, "CB"), [], "C"), "all")).backward()
    torch.testing.assert_close(leaf.grad, torch.tensor([[0.0, 1.0], [1.0, 0.0]]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda X: dlf.sum(X, 0),
            r"sum: dimension 0 is out of range for a dlarray with 3 dimensions \(dimensions are numbered from 1, as in MATLAB\); give a dimension number from 1 to 3",
        ),
        (lambda X: dlf.mean(X, 4), r'mean: dimension 4 is out of range .* a label of "CBT", or "all"'),
        (lambda X: dlf.prod(X, "S"), r'prod: the dlarray of format "CBT" has no "S" dimension'),
        (
            lambda X: dlf.sum(dlf.stripdims(X) * 1, "T"),
            r"sum: dimension \"T\" is a label, and an unformatted dlarray has none",
        ),
        (lambda X: dlf.sum(dlf.dlarray(dlf.stripdims(X)), "T"), r"an unformatted dlarray has none"),
        (lambda X: dlf.sum(X, "time"), r'sum: dimension "time" is not allowed'),
        (lambda X: dlf.sum(X, [1, 1.5]), r"sum: dimension \[1, 1.5\] is not allowed"),
        (lambda X: dlf.any(X, True), r"any: dimension True is not allowed"),
        (lambda X: dlf.cumsum(X, "all"), r'cumsum: dimension "all" is not allowed'),
        (
            lambda X: dlf.cumsum(dlf.dlarray(torch.ones(2, 2, 3), "SSC"), "S"),
            r'cumsum works along one dimension; "S" names 2',
        ),
        (lambda X: dlf.cumsum(X, 1, "backward"), r'cumsum: direction must be "forward" or "reverse"'),
        (lambda X: dlf.max(X, X, 1), r"max\(A, B\) compares two arrays elementwise and takes no dimension"),
        (
            lambda X: dlf.max(X, [], "all", nargout=2),
            r"max: the index output is given along one dimension; 3 were named",
        ),
        (lambda X: dlf.min(X, nargout=3), r"min: nargout must be 1"),
        (lambda X: dlf.vecnorm(X, 0), r"vecnorm: p must be a positive number or Inf; got 0"),
        (lambda X: dlf.norm(X, 2), r"norm: p = 2 needs a vector or a matrix \(2-D\); X has size \(3, 4, 5\)"),
        (lambda X: dlf.norm(X, "nuc"), r'norm: p must be a positive number, Inf, -Inf or "fro"'),
        (
            lambda X: dlf.mean(dlf.dlarray(torch.ones(2, dtype=torch.int32), "C")),
            r"mean needs floating-point or logical data",
        ),
    ],
)
def test_bad_dimensions_and_options_name_the_function_the_value_and_what_is_allowed(X, call, message):
    with pytest.raises(DLFormatError, match=message):
        call(X)
