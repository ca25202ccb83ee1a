"""cat, reshape, squeeze, permute, transpose, repmat, flip, circshift, mtimes, pagemtimes and sizes,
each with its format rule (docs/dlarray_functions.md#arrangement)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(3)
DATA = RNG.standard_normal((2, 3, 4))


def X(fmt="CBT", data=DATA):
    return dlf.dlarray(torch.tensor(data), fmt)


def values(Y):
    return dlf.stripdims(Y).numpy()


# -- cat ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("dim", "axis"), [("C", 0), (2, 1), ("T", 2), (3.0, 2)])
def test_cat_joins_one_format_by_label_or_number(dim, axis):
    other = RNG.standard_normal(tuple(5 if i == axis else n for i, n in enumerate(DATA.shape)))
    Y = dlf.cat(dim, X(), X(data=other))
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_array_equal(values(Y), np.concatenate([DATA, other], axis))


def test_horzcat_and_vertcat_are_cat_along_two_and_one():
    np.testing.assert_array_equal(values(dlf.horzcat(X(), X(), X())), np.concatenate([DATA] * 3, 1))
    a, b = torch.ones(1, 3), torch.zeros(2, 3)
    Y = dlf.vertcat(a, b)
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (3, 3)


def test_unformatted_cat_past_the_last_dimension_adds_one_as_matlab():
    Y = dlf.cat(3, torch.ones(2, 3), torch.zeros(2, 3))
    assert tuple(Y.shape) == (2, 3, 2)


def test_cat_of_single_and_double_is_single():
    Y = dlf.cat("B", X().float(), X())
    assert Y.dtype == torch.float32


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.cat("B", X(), X("CBU")), r'cat: the arrays must share one format; got "CBT", "CBU"'),
        (
            lambda: dlf.cat(1, X(), torch.tensor(DATA)),
            r'share one format; got unformatted, "CBT"\. Relabel them',
        ),
        (
            lambda: dlf.cat("B", X(), X(data=DATA[:, :, :2])),
            r'cat: array 2 has size 2 in dimension 3 \("T"\) and array 1 has 4',
        ),
        (lambda: dlf.cat("S", X(), X()), r'cat: the dlarray of format "CBT" has no "S" dimension'),
        (lambda: dlf.cat(4, X(), X()), r"cat: dimension 4 is out of range for a dlarray with 3 dimensions"),
        (
            lambda: dlf.cat(0, torch.ones(2), torch.ones(2)),
            r"cat: dimension 0 \(int\) is not allowed; give a dimension number from 1",
        ),
        (lambda: dlf.cat("B"), r"cat needs at least one array"),
    ],
)
def test_cat_refuses_what_it_cannot_join(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


# -- reshape and squeeze ----------------------------------------------------------------------------
def test_reshape_is_column_major_as_matlab_and_unformatted():
    Y = dlf.reshape(X(), 6, 4)
    assert dlf.dims(Y) == ""
    np.testing.assert_array_equal(values(Y), DATA.reshape(6, 4, order="F"))
    np.testing.assert_array_equal(values(dlf.reshape(X(), [4, [], 2])), DATA.reshape(4, 3, 2, order="F"))
    np.testing.assert_array_equal(values(dlf.reshape(X(), 2, None, 3)), DATA.reshape(2, 4, 3, order="F"))
    np.testing.assert_array_equal(
        values(dlf.reshape(torch.arange(6.0), 3, 2)), np.arange(6.0).reshape(3, 2, order="F")
    )


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ((5, 5), r"reshape: sizes \[5 5\] hold 25 elements and X has 24"),
        ((5, []), r"reshape: 24 elements cannot be split into sizes \[5 \[\]\]"),
        (([], None), r"reshape: at most one size may be \[\]"),
        ((24,), r"reshape needs at least two sizes"),
        ((-1, 24), r"reshape size must be an integer >= 0; got -1"),
    ],
)
def test_reshape_refuses_sizes_that_do_not_hold_the_elements(sizes, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.reshape(X(), *sizes)


def test_squeeze_drops_singleton_dimensions_with_their_labels():
    Y = dlf.squeeze(X(data=DATA[:, :1, :]))
    assert dlf.dims(Y) == "CT" and tuple(Y.shape) == (2, 4)
    np.testing.assert_array_equal(values(Y), DATA[:, 0, :])
    assert dlf.dims(dlf.squeeze(X(data=np.ones((1, 1, 1))))) == "CB"
    assert dlf.dims(dlf.squeeze(X("CB", np.ones((1, 3))))) == "CB"  # two dimensions: unchanged
    assert tuple(dlf.squeeze(torch.ones(1, 1, 5)).shape) == (5, 1)  # MATLAB's column
    assert tuple(dlf.squeeze(torch.ones(2, 1, 5)).shape) == (2, 5)


# -- permute and transpose --------------------------------------------------------------------------
def test_permute_of_unformatted_data_follows_matlabs_one_based_order():
    Y = dlf.permute(torch.tensor(DATA), [3, 1, 2])
    np.testing.assert_array_equal(values(Y), DATA.transpose(2, 0, 1))
    assert tuple(dlf.permute(torch.ones(2, 3), [3, 2, 1]).shape) == (1, 3, 2)
    np.testing.assert_array_equal(values(dlf.ipermute(Y, [3, 1, 2])), DATA)


def test_permute_of_a_formatted_array_may_exchange_same_label_dimensions_only():
    Y = dlf.permute(X("SSC"), [2, 1, 3])
    assert dlf.dims(Y) == "SSC"
    np.testing.assert_array_equal(values(Y), DATA.transpose(1, 0, 2))
    with pytest.raises(
        DLFormatError, match=r'permute: a formatted dlarray \("CBT"\) keeps its labels in MATLAB\'s order'
    ):
        dlf.permute(X(), [2, 1, 3])


@pytest.mark.parametrize("order", [[1, 2], [1, 1, 2], [0, 1, 2], "abc"])
def test_permute_needs_a_permutation_of_one_to_n(order):
    with pytest.raises(
        DLFormatError, match=r"permute: the order must be a permutation of 1..n with n at least the 3"
    ):
        dlf.permute(torch.tensor(DATA), order)


def test_transpose_of_matrices():
    m = RNG.standard_normal((2, 3))
    np.testing.assert_array_equal(values(dlf.transpose(torch.tensor(m))), m.T)
    np.testing.assert_array_equal(values(dlf.ctranspose(torch.tensor(m))), m.T)
    assert tuple(dlf.transpose(torch.ones(4)).shape) == (1, 4)  # a vector is a column
    Y = dlf.transpose(X("SS", m))
    assert dlf.dims(Y) == "SS" and tuple(Y.shape) == (3, 2)
    with pytest.raises(DLFormatError, match=r'transpose: a formatted dlarray \("CB"\) keeps its labels'):
        dlf.transpose(X("CB", m))
    with pytest.raises(DLFormatError, match=r"ctranspose is defined for matrices; X has 3 dimensions"):
        dlf.ctranspose(torch.tensor(DATA))


# -- repmat, flip, circshift ------------------------------------------------------------------------
def test_repmat_tiles_and_keeps_the_format():
    Y = dlf.repmat(X(), 2, 1, 3)
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_array_equal(values(Y), np.tile(DATA, (2, 1, 3)))
    np.testing.assert_array_equal(values(dlf.repmat(torch.ones(2, 3), 2)), np.ones((4, 6)))  # n means n×n
    np.testing.assert_array_equal(values(dlf.repmat(X(), [1, 2])), np.tile(DATA, (1, 2, 1)))
    assert tuple(dlf.repmat(torch.ones(2, 3), 1, 1, 2).shape) == (2, 3, 2)
    with pytest.raises(
        DLFormatError, match=r'repmat: a "CBT" dlarray has 3 dimensions; counts beyond them must be 1'
    ):
        dlf.repmat(X(), 1, 1, 1, 2)


def test_flip_and_circshift_keep_the_format():
    np.testing.assert_array_equal(values(dlf.flip(X(), "T")), np.flip(DATA, 2))
    np.testing.assert_array_equal(values(dlf.flip(X())), np.flip(DATA, 0))
    np.testing.assert_array_equal(values(dlf.circshift(X(), 1, "B")), np.roll(DATA, 1, 1))
    np.testing.assert_array_equal(values(dlf.circshift(X(), -1)), np.roll(DATA, -1, 0))
    np.testing.assert_array_equal(values(dlf.circshift(X(), [1, 2])), np.roll(DATA, (1, 2), (0, 1)))
    assert dlf.dims(dlf.circshift(X(), 1, 3)) == "CBT"
    with pytest.raises(DLFormatError, match=r"circshift\(X, K, dim\): K must be one integer"):
        dlf.circshift(X(), [1, 2], 1)
    with pytest.raises(DLFormatError, match=r"circshift K must be an integer"):
        dlf.circshift(X(), 0.5)


# -- products ---------------------------------------------------------------------------------------
def test_mtimes_multiplies_unformatted_matrices_and_vectors_are_columns():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(values(dlf.mtimes(torch.tensor(a), torch.tensor(b))), a @ b, rtol=1e-12)
    np.testing.assert_allclose(values(dlf.dlarray(torch.tensor(a)) @ torch.tensor(b)), a @ b, rtol=1e-12)
    np.testing.assert_allclose(values(torch.tensor(a) @ dlf.dlarray(torch.tensor(b))), a @ b, rtol=1e-12)
    np.testing.assert_allclose(
        values(dlf.mtimes(torch.tensor(a), torch.ones(3, dtype=torch.float64))), a @ np.ones((3, 1))
    )
    assert dlf.mtimes(torch.ones(2, 3, dtype=torch.float64), torch.ones(3, 1)).dtype == torch.float32


def test_mtimes_takes_a_formatted_array_only_with_an_unformatted_scalar():
    Y = dlf.mtimes(X(), 2.0)
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_array_equal(values(Y), DATA * 2)
    np.testing.assert_array_equal(values(torch.tensor(3.0, dtype=torch.float64) @ X()), DATA * 3)
    with pytest.raises(
        DLFormatError, match=r'mtimes \(A\*B, A @ B\) cannot take a formatted dlarray \("CB"\)'
    ):
        X("CB", np.ones((2, 3))) @ torch.ones(3, 2)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (
            torch.ones(2, 3),
            torch.ones(2, 3),
            r"mtimes \(A\*B, A @ B\): inner sizes must agree; got 2×3 times 2×3",
        ),
        (
            torch.ones(2, 3, 4),
            torch.ones(4, 2),
            r"the first input has 3 dimensions \(2, 3, 4\)\. Use pagemtimes",
        ),
    ],
)
def test_mtimes_refuses_sizes_that_do_not_multiply(a, b, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.mtimes(a, b)


def test_pagemtimes_multiplies_every_page_with_expansion_and_transposes():
    a, b = RNG.standard_normal((2, 3, 4, 1)), RNG.standard_normal((3, 5, 1, 6))
    Y = dlf.pagemtimes(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(
        values(Y), np.einsum("ikpq,kjpq->ijpq", a, np.broadcast_to(b, (3, 5, 4, 6))), rtol=1e-12
    )
    c = RNG.standard_normal((3, 2, 4))
    Z = dlf.pagemtimes(torch.tensor(c), "transpose", torch.tensor(c), "none")
    np.testing.assert_allclose(values(Z), np.einsum("kip,kjp->ijp", c, c), rtol=1e-12)
    with pytest.raises(DLFormatError, match=r'pagemtimes cannot take a formatted dlarray \("CBT"\)'):
        dlf.pagemtimes(X(), torch.ones(3, 2))
    with pytest.raises(
        DLFormatError, match=r'pagemtimes: transpX must be "none", "transpose" or "ctranspose"'
    ):
        dlf.pagemtimes(torch.ones(2, 2), "T", torch.ones(2, 2), "none")
    with pytest.raises(DLFormatError, match=r"pagemtimes: inner sizes must agree; the pages are 2×2 and 3×2"):
        dlf.pagemtimes(torch.ones(2, 2), torch.ones(3, 2))


# -- sizes ------------------------------------------------------------------------------------------
def test_size_numel_and_ndims_are_matlabs():
    Y = dlf.dlarray(torch.ones(2, 3, 1), "CBT")
    assert dlf.size(Y) == (2, 3, 1) and dlf.ndims(Y) == 3 and dlf.numel(Y) == 6
    assert dlf.size(Y, 2) == 3 and dlf.size(Y, "T") == 1 and dlf.size(Y, 7) == 1
    assert dlf.size(Y, [1, 2]) == (2, 3)
    assert dlf.size(dlf.dlarray(torch.ones(4, 5, 6), "SSC"), "S") == (4, 5)
    assert dlf.size(torch.ones(5)) == (5, 1) and dlf.ndims(torch.ones(5)) == 2
    with pytest.raises(
        DLFormatError, match=r"size: dimension 0 \(int\) is not allowed; give a dimension number from 1"
    ):
        dlf.size(Y, 0)
    with pytest.raises(DLFormatError, match=r'size: the dlarray of format "CBT" has no "S" dimension'):
        dlf.size(Y, "S")
