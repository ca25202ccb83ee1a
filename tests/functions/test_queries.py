"""MATLAB's type, shape and equality questions on dlarrays (docs/dlarray_functions.md#questions):
Python bools and ints, read from MATLAB's size(X) (one entry per label, at least two)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf


def formatted(shape, fmt, dtype=torch.float32):
    return dlf.dlarray(torch.ones(shape, dtype=dtype), fmt)


# (array, MATLAB's size(X)); the answers below follow from the size alone, as MATLAB's definitions say
SHAPES = {
    "row CB 1x5": (formatted((1, 5), "CB"), (1, 5)),
    "column CB 5x1": (formatted((5, 1), "CB"), (5, 1)),
    "scalar CB": (formatted((1, 1), "CB"), (1, 1)),
    "CBT with T=1": (formatted((5, 1, 1), "CBT"), (5, 1, 1)),
    "SSCB image": (formatted((4, 3, 2, 6), "SSCB"), (4, 3, 2, 6)),
    "1-D tensor (a column)": (dlf.dlarray(torch.ones(4)), (4, 1)),
    "plain 3x0": (dlf.dlarray(torch.ones(3, 0)), (3, 0)),
    "number": (2.5, (1, 1)),
}


def expected_answers(sizes):
    """MATLAB's definitions written on the size vector, independently of the code under test."""
    two = len(sizes) == 2
    count = math.prod(sizes)
    return {
        "isscalar": count == 1,
        "isvector": two and (sizes[0] == 1 or sizes[1] == 1),
        "ismatrix": two,
        "isrow": two and sizes[0] == 1,
        "iscolumn": two and sizes[1] == 1,
        "isempty": count == 0,
        "length": 0 if count == 0 else max(sizes),
    }


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_shape_questions_follow_matlabs_size(case):
    X, sizes = SHAPES[case]
    assert dlf.size(X) == sizes
    for name, answer in expected_answers(sizes).items():
        got = getattr(dlf, name)(X)
        assert got == answer and type(got) is type(answer), (case, name)


@pytest.mark.parametrize(
    ("dtype", "isfloat", "islogical", "isnumeric"),
    [
        (torch.float32, True, False, True),
        (torch.float64, True, False, True),
        (torch.float16, True, False, True),
        (torch.bool, False, True, False),
        (torch.int32, False, False, True),
    ],
)
def test_type_questions(dtype, isfloat, islogical, isnumeric):
    X = dlf.dlarray(torch.zeros(2, 3, dtype=dtype), "CB")
    assert (dlf.isfloat(X), dlf.islogical(X), dlf.isnumeric(X), dlf.isreal(X)) == (
        isfloat,
        islogical,
        isnumeric,
        True,
    )
    assert torch.is_floating_point(X) is isfloat  # torch's counterpart gives isfloat's answer


def test_isreal_is_false_for_complex_storage():
    assert not dlf.isreal(torch.tensor([1 + 2j]))


A = np.array([[1.0, math.nan, 3.0]])


@pytest.mark.parametrize(
    ("left", "right", "isequal", "isequaln"),
    [
        (dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CB"), dlf.dlarray(torch.tensor([[1.0, 2.0]], dtype=torch.float64), "CB"), True, True),
        (dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CB"), dlf.dlarray(torch.tensor([[1.0, 3.0]]), "CB"), False, False),
        (dlf.dlarray(torch.tensor(A), "CB"), dlf.dlarray(torch.tensor(A), "CB"), False, True),  # NaN
        (dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CB"), dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CT"), False, False),
        (dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CB"), torch.tensor([[1.0, 2.0]]), False, False),  # format
        (dlf.dlarray(torch.tensor([[1.0, 2.0]])), torch.tensor([[1.0, 2.0]]), True, True),
        (torch.tensor([1.0, 2.0]), torch.tensor([[1.0], [2.0]]), True, True),  # a 1-D tensor is a column
        (torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0], [2.0]]), False, False),  # sizes differ
        (torch.tensor([True, False]), torch.tensor([1.0, 0.0]), True, True),  # types may differ
        (dlf.dlarray(torch.ones(2, 3, 1), "CBT"), dlf.dlarray(torch.ones(2, 3), "CB"), False, False),
    ],
)  # fmt: skip
def test_isequal_and_isequaln(left, right, isequal, isequaln):
    assert dlf.isequal(left, right) is isequal
    assert dlf.isequaln(left, right) is isequaln


def test_isequal_takes_more_than_two_arrays():
    X = dlf.dlarray(torch.ones(2, 2), "SS")
    assert dlf.isequal(X, X, dlf.double(X))
    assert not dlf.isequal(X, X, dlf.dlarray(torch.zeros(2, 2), "SS"))


X2 = dlf.dlarray(torch.ones(2))
NO_ARRAY = object()


# MATLAB's isequal compares values of any kind and answers false for different kinds, never an error
# (isequal page, https://www.mathworks.com/help/matlab/ref/isequal.html)
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ((X2, "abc"), False),
        (("abc", X2), False),
        ((X2, X2, "abc"), False),
        ((X2, None), False),
        ((X2, NO_ARRAY), False),
        ((X2, {"a": 1}), False),
        ((X2, [[1, 2], [3]]), False),  # ragged: no array (MATLAB would need a cell array)
        (("abc", "abc"), True),  # the same characters, as MATLAB's strings
        (("abc", "abd"), False),
        ((NO_ARRAY, NO_ARRAY), True),
        (({"a": 1}, {"a": 1}), True),  # MATLAB's structs: the same fields and values
        (({"a": 1}, "a"), False),
    ],
)
def test_isequal_answers_false_for_values_of_another_kind(values, expected):
    assert dlf.isequal(*values) is expected
    assert dlf.isequaln(*values) is expected
