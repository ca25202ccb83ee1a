"""Elementwise math, comparisons and logic keep the format; binary ones align by label
(docs/dlarray_functions.md#elementwise-functions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(12)
INSIDE = RNG.uniform(0.1, 0.9, (3, 4))  # inside every function's domain (acosh gets 1 + x)

UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sec": lambda x: 1 / np.cos(x),
    "csc": lambda x: 1 / np.sin(x),
    "cot": lambda x: 1 / np.tan(x),
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "atanh": np.arctanh,
    "erf": np.vectorize(math.erf),
    "sign": np.sign,
    "floor": np.floor,
    "ceil": np.ceil,
    "fix": np.trunc,
    "uminus": np.negative,
    "uplus": lambda x: x,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_numpy_and_keep_the_format_and_dtype(name, dtype):
    x = INSIDE * 4 - 2 if name in ("sign", "floor", "ceil", "fix", "uminus", "abs", "relu") else INSIDE
    X = dlf.dlarray(torch.tensor(x, dtype=dtype), "TC")
    Y = getattr(dlf, name)(X)
    assert dlf.dims(Y) == "CT" and Y.dtype == dtype
    tolerance = 1e-12 if dtype == torch.float64 else 1e-6
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), UNARY[name](x).T, rtol=tolerance, atol=tolerance)


def test_acosh_on_its_domain():
    Y = dlf.acosh(dlf.dlarray(torch.tensor(1 + INSIDE), "CB"))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), np.arccosh(1 + INSIDE), rtol=1e-12)


def test_logical_data_computes_as_single_and_integer_data_is_refused_by_name():
    Y = dlf.exp(dlf.dlarray(torch.tensor([True, False]), "C"))
    assert Y.dtype == torch.float32
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), [math.e, 1.0], rtol=1e-6)
    with pytest.raises(
        DLFormatError, match=r"exp needs floating-point or logical data .* got dtype torch.int64"
    ):
        dlf.exp(dlf.dlarray(torch.tensor([1, 2]), "C"))
    assert dlf.abs(dlf.dlarray(torch.tensor([-3, 2]), "C")).dtype == torch.int64  # no transcendental: kept


def test_plain_inputs_give_unformatted_dlarrays():
    Y = dlf.sqrt(torch.tensor([4.0, 9.0]))
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), [2.0, 3.0])


def test_round_rounds_halves_away_from_zero_as_matlab_not_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, 2.4])
    X = dlf.dlarray(torch.tensor(x), "C")
    expected = np.sign(x) * np.floor(np.abs(x) + 0.5)
    expected[6] = 0.0  # the largest double below 0.5 rounds to 0
    np.testing.assert_array_equal(dlf.stripdims(dlf.round(X)).numpy(), expected)
    np.testing.assert_array_equal(dlf.stripdims(round(X)).numpy(), expected)  # Python's round() too
    np.testing.assert_allclose(
        dlf.stripdims(dlf.round(dlf.dlarray(torch.tensor([1.25, -0.125])), 2)).numpy(), [1.25, -0.13]
    )
    with pytest.raises(DLFormatError, match=r"round: the number of digits N must be an integer; got 1.5"):
        dlf.round(X, 1.5)


def test_sign_of_nan_is_nan_as_in_matlab():
    Y = dlf.sign(dlf.dlarray(torch.tensor([math.nan, -0.0, -3.0]), "C"))
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), [math.nan, 0.0, -1.0])


A = np.array([5.0, -5.0, 5.0, -5.0, 5.5, 3.0])
B = np.array([3.0, 3.0, -3.0, -3.0, 0.0, 0.0])


def test_mod_takes_the_sign_of_the_divisor_and_mod_by_zero_is_the_dividend():
    Y = dlf.mod(dlf.dlarray(torch.tensor(A), "C"), torch.tensor(B))
    expected = np.where(B == 0, A, np.mod(A, np.where(B == 0, 1, B)))
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), expected)
    np.testing.assert_array_equal(dlf.stripdims(dlf.dlarray(torch.tensor(A), "C") % 3).numpy(), np.mod(A, 3))
    np.testing.assert_array_equal(
        dlf.stripdims(7 % dlf.dlarray(torch.tensor([4.0, -4.0]), "C")).numpy(), [3.0, -1.0]
    )


def test_rem_takes_the_sign_of_the_dividend_and_rem_by_zero_is_nan():
    Y = dlf.rem(dlf.dlarray(torch.tensor(A), "C"), torch.tensor(B))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), np.fmod(A, B))


def test_binary_functions_and_operators_align_by_label():
    a = RNG.standard_normal((3, 4))  # "CB"
    b = RNG.uniform(1, 2, (3, 5))  # "CT"
    X, Y = dlf.dlarray(torch.tensor(a), "CB"), dlf.dlarray(torch.tensor(b), "CT")
    cases = {
        "power": (dlf.power(Y, X), b[:, None, :] ** a[:, :, None]),
        "**": (Y**X, b[:, None, :] ** a[:, :, None]),
        "atan2": (dlf.atan2(X, Y), np.arctan2(a[:, :, None], b[:, None, :])),
        "minus": (dlf.minus(X, Y), a[:, :, None] - b[:, None, :]),
        "rdivide": (dlf.rdivide(X, Y), a[:, :, None] / b[:, None, :]),
        "ldivide": (dlf.ldivide(Y, X), a[:, :, None] / b[:, None, :]),  # MATLAB's Y .\ X is X ./ Y
        "2 ** X": (2**X, 2**a),
    }
    for name, (got, expected) in cases.items():
        assert dlf.dims(got) == ("CB" if name == "2 ** X" else "CBT"), name
        np.testing.assert_allclose(dlf.stripdims(got).numpy(), expected, rtol=1e-12, err_msg=name)


def test_comparisons_are_logical_dlarrays_with_both_formats():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 5))
    X, Y = dlf.dlarray(torch.tensor(a), "CB"), dlf.dlarray(torch.tensor(b), "CT")
    for got, expected in [
        (X > Y, a[:, :, None] > b[:, None, :]),
        (X <= Y, a[:, :, None] <= b[:, None, :]),
        (dlf.ge(X, Y), a[:, :, None] >= b[:, None, :]),
        (X == X, np.ones((3, 4), bool)),
        (X != 0, a != 0),
        (0 < X, a > 0),
        (dlf.lt(X, 0.5), a < 0.5),
    ]:
        assert got.dtype == torch.bool and dlf.dims(got) in ("CB", "CBT")
        np.testing.assert_array_equal(dlf.stripdims(got).numpy(), expected)


def test_comparisons_compare_exactly_not_in_the_single_working_type():
    single = dlf.dlarray(torch.tensor([0.1], dtype=torch.float32), "C")
    double = dlf.dlarray(torch.tensor([0.1], dtype=torch.float64), "C")
    assert not bool(single == double)  # 0.1 in single is not 0.1 in double
    assert (single + double).dtype == torch.float32  # arithmetic: single wins


def test_logical_operators_treat_nonzero_as_true():
    a = np.array([0.0, 2.0, 0.0, -1.0])
    b = np.array([0.0, 0.0, 3.0, 4.0])
    X, Y = dlf.dlarray(torch.tensor(a), "T"), dlf.dlarray(torch.tensor(b), "T")
    for got, expected in [
        (X & Y, np.logical_and(a, b)),
        (X | Y, np.logical_or(a, b)),
        (~X, np.logical_not(a)),
        (dlf.xor(X, Y), np.logical_xor(a, b)),
        (X & 1, a != 0),
        (True | X, np.ones(4, bool)),
    ]:
        assert got.dtype == torch.bool and dlf.dims(got) == "T"
        np.testing.assert_array_equal(dlf.stripdims(got).numpy(), expected)


def test_isnan_isinf_isfinite_keep_the_format():
    X = dlf.dlarray(torch.tensor([[1.0, math.nan], [math.inf, -math.inf]]), "SS")
    assert dlf.dims(dlf.isnan(X)) == "SS"
    np.testing.assert_array_equal(dlf.stripdims(dlf.isnan(X)).numpy(), [[False, True], [False, False]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.isinf(X)).numpy(), [[False, False], [True, True]])
    np.testing.assert_array_equal(dlf.stripdims(dlf.isfinite(X)).numpy(), [[True, False], [False, False]])


def test_caret_is_refused_pointing_to_power_and_xor():
    X = dlf.dlarray(torch.ones(2), "C")
    with pytest.raises(DLFormatError, match=r"\^ is exclusive or, not MATLAB's power. Write X \*\* 2"):
        X ^ 2
    with pytest.raises(DLFormatError, match=r"dlformat.xor\(A, B\)"):
        2 ^ X


def test_mismatched_formats_are_refused_naming_both():
    with pytest.raises(DLFormatError, match=r'formats "SSC" and "SC": they have 2 and 1 "S" dimensions'):
        dlf.power(dlf.dlarray(torch.ones(2, 2, 3), "SSC"), dlf.dlarray(torch.ones(2, 3), "SC"))
    with pytest.raises(DLFormatError, match=r'dimension 1 \("B"\) has size 4 in one and 5 in the other'):
        _ = dlf.dlarray(torch.ones(3, 4), "CB") > dlf.dlarray(torch.ones(3, 5), "CB")


def test_elementwise_functions_keep_autograd():
    leaf = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    dlf.stripdims(dlf.sum(dlf.exp(dlf.dlarray(leaf, "C")) ** 2, "all")).backward()
    torch.testing.assert_close(leaf.grad, 2 * torch.exp(2 * leaf.detach()))
