"""X[...] and X[...] = value: MATLAB keeps the format and every dimension (docs/dlarray_functions.md#indexing)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


@pytest.fixture
def X():
    return dlf.dlarray(torch.arange(120.0).reshape(4, 5, 6), "CBT")


def data(X):
    return dlf.stripdims(X).numpy()


@pytest.mark.parametrize(
    ("key", "numpy_key"),
    [
        ((slice(None), slice(0, 2), slice(None)), (slice(None), slice(0, 2), slice(None))),
        ((0,), (slice(0, 1),)),
        ((slice(None), -1), (slice(None), slice(4, 5))),
        ((Ellipsis, 2), (Ellipsis, slice(2, 3))),
        ((slice(None, None, 2), slice(4, 0, -1)), (slice(None, None, 2), slice(4, 0, -1))),
        ((slice(1, 100),), (slice(1, 100),)),  # Python's slices clip
        ((np.int64(3), torch.tensor(1)), (slice(3, 4), slice(1, 2))),
    ],
    ids=[
        "slice",
        "int keeps a singleton",
        "negative int",
        "ellipsis",
        "steps",
        "clipped",
        "numpy and torch ints",
    ],
)
def test_slices_and_integers_keep_the_format_and_every_dimension(X, key, numpy_key):
    Y = X[key]
    expected = data(X)[numpy_key]
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_array_equal(data(Y), expected)


def test_index_lists_and_logical_vectors_select_per_dimension_as_matlab_subscripts(X):
    rows, columns = [3, 0, 3], [True, False, True, False, False, True]
    Y = X[rows, 1:4, columns]
    expected = data(X)[np.ix_(rows, [1, 2, 3], np.flatnonzero(columns))]  # MATLAB's outer product
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (3, 3, 3)
    np.testing.assert_array_equal(data(Y), expected)
    np.testing.assert_array_equal(data(X[torch.tensor([-1, 0])]), data(X)[[3, 0]])
    np.testing.assert_array_equal(data(X[:, range(2)]), data(X)[:, :2])


def test_a_logical_mask_of_the_arrays_size_gives_an_unformatted_vector(X):
    Y = X[X > 100]
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (19,)
    column_major = data(X).ravel(order="F")
    np.testing.assert_array_equal(data(Y), column_major[column_major > 100])  # MATLAB's X(X > 100)
    np.testing.assert_array_equal(data(X[dlf.stripdims(X) < 2]), [0.0, 1.0])


def test_a_one_dimensional_array_keeps_its_label_under_a_logical_vector():
    X = dlf.dlarray(torch.arange(4.0), "T")
    Y = X[X > 1]
    assert dlf.dims(Y) == "T"
    np.testing.assert_array_equal(data(Y), [2.0, 3.0])


def test_indexing_a_trailing_u_down_to_one_drops_it_as_dlarray_does():
    X = dlf.dlarray(torch.randn(3, 4, 5), "SSU")
    assert dlf.dims(X[:, :, 0]) == "SS" and tuple(X[:, :, 0].shape) == (3, 4)
    assert dlf.dims(X[:, 0, :]) == "SSU"


def test_indexing_keeps_autograd(X):
    leaf = torch.randn(4, 5, 6, requires_grad=True)
    dlf.stripdims(dlf.dlarray(leaf, "CBT")[1, [0, 2], 3:]).sum().backward()
    expected = torch.zeros(4, 5, 6)
    expected[1, [0, 2], 3:] = 1
    torch.testing.assert_close(leaf.grad, expected)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ((slice(None), 5), r'index 5 is out of range for dimension 1 \("B"\) of size 5; allowed are -5 to 4'),
        ((slice(None), [0, 7]), r'index 7 is out of range for dimension 1 \("B"\) of size 5'),
        ((0, 0, 0, 0), r'4 subscripts for a "CBT" dlarray with 3 dimensions; give at most 3'),
        ((None,), r"indexing cannot add a dimension \(None / np.newaxis\)"),
        ((Ellipsis, Ellipsis), r"at most one \.\.\. \(Ellipsis\) is allowed"),
        ((1.5,), r"1.5 is not a subscript for dimension 0 \(\"C\"\)"),
        ((slice(None), [True, False]), r'logical vector of length 2 for dimension 1 \("B"\) of size 5'),
        ((slice(None, None, 0),), r"slice step cannot be zero"),
        ((slice(0.5, 2),), r"must hold integers; got 0.5"),
        ((torch.zeros(2, 2, dtype=torch.long),), r"is not a subscript for dimension 0"),
        ((True,), r"a single logical True is not a subscript"),
        (
            torch.ones(4, 5, dtype=torch.bool),
            r"a logical mask of size \(4, 5\) does not match the array's size",
        ),
    ],
)
def test_bad_subscripts_name_the_value_and_what_is_allowed(X, key, message):
    with pytest.raises(DLFormatError, match=message):
        X[key]


def test_a_mask_of_another_format_is_refused(X):
    mask = dlf.dlarray(torch.ones(4, 5, 6, dtype=torch.bool), "SCB")
    with pytest.raises(DLFormatError, match=r'a logical mask of format "SCB" cannot index a "CBT" dlarray'):
        X[mask]


# -- assignment -------------------------------------------------------------------------------------
def test_assignment_broadcasts_a_number_a_tensor_and_a_formatted_value_aligned_by_label(X):
    expected = data(X).copy()
    X[0, :, 1:3] = -1
    expected[0, :, 1:3] = -1
    X[:, 2, :] = torch.arange(6.0)  # broadcasts against the region (4, 1, 6)
    expected[:, 2, :] = np.arange(6.0)
    X[:, 3, :] = dlf.dlarray(torch.arange(4.0) * 10, "C")  # aligned by label: C gets the values
    expected[:, 3, :] = (np.arange(4.0) * 10)[:, None]
    assert dlf.dims(X) == "CBT"
    np.testing.assert_array_equal(data(X), expected)


def test_assignment_with_index_lists_is_the_outer_product_of_the_subscripts(X):
    expected = data(X).copy()
    X[[0, 2], 1, [1, 5]] = 0.5
    expected[np.ix_([0, 2], [1], [1, 5])] = 0.5
    np.testing.assert_array_equal(data(X), expected)


def test_assignment_through_a_mask_as_matlab_x_of_x_below_zero_equals_zero():
    X = dlf.dlarray(torch.tensor([[-1.0, 2.0], [3.0, -4.0]]), "CB")
    X[X < 0] = 0
    np.testing.assert_array_equal(data(X), [[0.0, 2.0], [3.0, 0.0]])
    X[X > 0] = torch.tensor([7.0, 8.0])  # MATLAB's linear (column-major) order: X(2,1) first
    np.testing.assert_array_equal(data(X), [[0.0, 8.0], [7.0, 0.0]])


def test_assignment_casts_to_the_arrays_type_and_leaves_sharers_unchanged():
    shared = torch.zeros(2, 3)
    X, Y = dlf.dlarray(shared, "CB"), dlf.dlarray(shared, "CB")
    X[0, 0] = torch.tensor(1.5, dtype=torch.float64)
    assert X.dtype == torch.float32 and X[0, 0]._data.item() == 1.5
    assert shared.sum() == 0 and dlf.stripdims(Y).sum() == 0  # MATLAB's value semantics


def test_assignment_keeps_autograd_even_into_a_leaf_that_requires_grad():
    leaf, value = torch.randn(3, 2, requires_grad=True), torch.randn(2, requires_grad=True)
    X = dlf.dlarray(leaf, "CB")
    X[1, :] = value
    dlf.stripdims(X).sum().backward()
    torch.testing.assert_close(leaf.grad, torch.tensor([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]))
    torch.testing.assert_close(value.grad, torch.ones(2))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ((0,), dlf.dlarray(torch.ones(5), "S"), r'cannot assign a "S" dlarray into a "CBT" one'),
        ((0,), torch.ones(3), r"a value of size \(3,\) does not fit the indexed region of size \(1, 5, 6\)"),
        ((0,), torch.ones(1, 1, 1, 1), r"has more dimensions than the 3 of the target"),
        ((0,), "text", r"indexed assignment needs numeric data"),
    ],
)
def test_bad_assignments_change_nothing_and_say_why(X, key, value, message):
    before = data(X).copy()
    with pytest.raises(DLFormatError, match=message):
        X[key] = value
    np.testing.assert_array_equal(data(X), before)


def test_assigning_a_formatted_value_into_an_unformatted_array_is_refused():
    X = dlf.dlarray(torch.zeros(2, 3))
    with pytest.raises(DLFormatError, match=r'cannot assign a "CB" dlarray into an unformatted one'):
        X[0, :] = dlf.dlarray(torch.ones(1, 3), "CB")


def test_a_mask_assignment_needs_a_scalar_or_one_value_per_element(X):
    with pytest.raises(
        DLFormatError, match=r"the mask selects 19 elements; the value must be a scalar or hold 19"
    ):
        X[X > 100] = torch.ones(3)
