"""What every functional function shares: MATLAB's precision rule, reading the input's format
(a formatted dlarray, or unformatted data with ``DataFormat``), and MATLAB's option syntax."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError
from dlformat._dlarray import working_dtype
from dlformat.functional._common import as_data, formatted_input

f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64


# -- the precision rule ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dtypes", "expected"),
    [
        ((f32,), f32),
        ((f64,), f64),
        ((f64, f64), f64),
        ((f32, f64), f32),  # MATLAB: single wins over double
        ((f64, f32), f32),
        ((f64, f32, f64), f32),
        ((bf16, f32), f32),  # narrower types combine by torch's promotion
        ((f32, bf16), f32),
        ((bf16, f32, f64), f32),
        ((bf16, f64), bf16),  # double yields to any narrower floating type
        ((f16, f64), f16),
        ((f16, bf16), f32),
        ((f16, bf16, f64), f32),
        ((bf16, bf16), bf16),
        ((f16, f16, f64), f16),
        ((torch.int64, f64), f64),  # integers take the other operands' floating type
        ((torch.int32, f16), f16),
        ((torch.bool, f32, f64), f32),
        ((torch.int64,), f32),  # no floating type: the default dtype
        ((torch.bool, torch.uint8), f32),
    ],
)
def test_working_dtype(dtypes, expected):
    assert working_dtype(*dtypes) == expected


def test_working_dtype_without_floating_types_is_the_default_dtype():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(f64)
    try:
        assert working_dtype(torch.int64) == f64
    finally:
        torch.set_default_dtype(previous)


# -- formatted_input ---------------------------------------------------------------------------
def test_formatted_input_keeps_a_formatted_dlarray_and_its_kind():
    X = dlf.dlarray(torch.randn(3, 2), "CB")
    result, restore = formatted_input(X, None, "f")
    assert result is X
    Y = dlf.dlarray(torch.randn(4, 2), "CB")
    assert restore(Y) is Y


@pytest.mark.parametrize(
    ("make", "data_format", "shape", "fmt", "permutation"),
    [
        (lambda a: torch.from_numpy(a), "CB", (2, 3), "CB", (0, 1)),
        (lambda a: torch.from_numpy(a), "BC", (2, 3), "CB", (1, 0)),
        (lambda a: a, "TCB", (5, 3, 2), "CBT", (1, 2, 0)),  # NumPy array
        (lambda a: dlf.dlarray(a), "BTC", (2, 5, 3), "CBT", (2, 0, 1)),  # unformatted dlarray
        (lambda a: torch.from_numpy(a), "SCBS", (4, 3, 2, 5), "SSCB", (0, 3, 1, 2)),
    ],
)
def test_formatted_input_labels_unformatted_data_in_canonical_order(
    make, data_format, shape, fmt, permutation
):
    array = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    result, restore = formatted_input(make(array), data_format, "f")
    assert dlf.dims(result) == fmt
    np.testing.assert_array_equal(dlf.extractdata(result).numpy(), array.transpose(permutation))
    back = restore(result)
    assert dlf.dims(back) == "" and isinstance(back, dlf.DLArray)
    np.testing.assert_array_equal(dlf.extractdata(back).numpy(), array.transpose(permutation))


def test_formatted_input_extra_labels_add_trailing_singletons():
    result, _ = formatted_input(torch.ones(3, 2), "CBT", "f")
    assert dlf.dims(result) == "CBT" and tuple(result.shape) == (3, 2, 1)


@pytest.mark.parametrize(
    ("X", "data_format", "needs", "message"),
    [
        (
            dlf.dlarray(torch.ones(3, 2), "CB"),
            "CB",
            "",
            'f: DataFormat is only for unformatted data; the input already has format "CB"',
        ),
        (
            torch.ones(3, 2),
            None,
            "",
            r'f needs a formatted dlarray, or DataFormat="..." to label unformatted data \(for example '
            r'DataFormat="CB"\); got a Tensor of shape \(3, 2\) and dtype torch.float32',
        ),
        (dlf.dlarray(torch.ones(3, 2)), None, "", "f needs a formatted dlarray.*got an unformatted dlarray"),
        (np.ones((3, 2)), None, "", "f needs a formatted dlarray.*got a ndarray of shape"),
        (torch.ones(3, 2, 4), "CB", "", 'f: DataFormat "CB" labels 2 dimensions; the data has 3'),
        (torch.ones(3, 2), "CX", "", 'invalid dimension label "X" at position 1 of format "CX"'),
        (torch.ones(3, 2), "CC", "", 'format "CC" has 2 "C" dimensions'),
        ("text", "CB", "", "f input must be a dlarray, a tensor, a NumPy array or a number"),
        (
            dlf.dlarray(torch.ones(3, 2), "BT"),
            None,
            "C",
            'f needs data with a "C" dimension; got format "BT"',
        ),
        (torch.ones(3, 2), "SB", "CT", 'f needs data with "C" and "T" dimensions; got format "SB"'),
    ],
)
def test_formatted_input_errors(X, data_format, needs, message):
    with pytest.raises(DLFormatError, match=message):
        formatted_input(X, data_format, "f", needs)


# -- as_data: learnables and options -----------------------------------------------------------
def test_as_data_returns_the_tensor_itself():
    tensor = torch.randn(3)
    assert as_data(tensor, "w") is tensor
    assert as_data(dlf.dlarray(tensor, "C"), "w") is tensor


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (np.ones(3, dtype=np.float64), f64),
        (np.ones(3, dtype=np.float32), f32),
        (np.float32(2.0), f32),
        (np.ones(3, dtype=np.int64), torch.int64),
        # a number written in code is a double, as in MATLAB, so it yields to any narrower type
        (0, f64),
        (2.5, f64),
    ],
)
def test_as_data_dtype(value, dtype):
    data = as_data(value, "w")
    assert data.dtype == dtype
    np.testing.assert_array_equal(data.numpy(), np.asarray(value, dtype=np.float64))


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "True \\(a logical\\)"),
        ("0", '"0" \\(a string\\)'),
        ([1.0], r"\[1.0\] \(list\)"),
        (None, "None"),
    ],
)
def test_as_data_refuses_other_values(value, shown):
    with pytest.raises(
        DLFormatError, match=f"bias must be a dlarray, a tensor, a NumPy array or a number; got {shown}"
    ):
        as_data(value, "bias")


# -- every formatted function follows the same rules -------------------------------------------
def _fc(X, **options):
    return F.fullyconnect(X, torch.ones(4, 3), torch.zeros(4), **options)


def _ln(X, **options):
    return F.layernorm(X, torch.zeros(3), torch.ones(3), **options)


def _att(X, **options):
    return F.attention(X, X, X, 1, **options)


def _emb(X, **options):
    return F.embed(X, torch.eye(3), **options)


FORMATTED_FUNCTIONS = [
    pytest.param(_fc, "fullyconnect", torch.ones(3, 2, 5), "CBT", (4, 2, 5), id="fullyconnect"),
    pytest.param(_ln, "layernorm", torch.ones(3, 2, 5), "CBT", (3, 2, 5), id="layernorm"),
    pytest.param(F.softmax, "softmax", torch.ones(3, 2, 5), "CBT", (3, 2, 5), id="softmax"),
    pytest.param(_att, "attention", torch.ones(3, 2, 5), "CBT", (3, 2, 5), id="attention"),
    pytest.param(_emb, "embed", torch.ones(2, 5), "BT", (3, 2, 5), id="embed"),
]


@pytest.mark.parametrize(("function", "name", "data", "fmt", "shape"), FORMATTED_FUNCTIONS)
def test_data_format_with_a_formatted_input_is_an_error(function, name, data, fmt, shape):
    with pytest.raises(
        DLFormatError,
        match=f'{name}: DataFormat is only for unformatted data; the input already has format "{fmt}"',
    ):
        function(dlf.dlarray(data, fmt), DataFormat=fmt)


@pytest.mark.parametrize(("function", "name", "data", "fmt", "shape"), FORMATTED_FUNCTIONS)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_data_without_data_format_is_an_error(function, name, data, fmt, shape, kind):
    X = {"tensor": data, "numpy": data.numpy(), "dlarray": dlf.dlarray(data)}[kind]
    with pytest.raises(DLFormatError, match=f'{name} needs a formatted dlarray, or DataFormat="..."'):
        function(X)


@pytest.mark.parametrize(("function", "name", "data", "fmt", "shape"), FORMATTED_FUNCTIONS)
def test_unformatted_data_with_data_format_gives_unformatted_results(function, name, data, fmt, shape):
    formatted = function(dlf.dlarray(data, fmt))
    unformatted = function(data, DataFormat=fmt)
    assert isinstance(unformatted, dlf.DLArray) and dlf.dims(unformatted) == ""
    assert tuple(unformatted.shape) == shape == tuple(formatted.shape)
    torch.testing.assert_close(dlf.extractdata(unformatted), dlf.extractdata(formatted), rtol=0, atol=0)


# -- MATLAB's option syntax --------------------------------------------------------------------
X_CB = dlf.dlarray(torch.tensor([[1.0, -2.0], [3.0, 0.5], [0.0, 4.0]]), "CB")


@pytest.mark.parametrize(
    ("call", "keywords"),
    [
        (
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), "epsilon", 1e-3),
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), Epsilon=1e-3),
        ),
        (
            lambda: F.layernorm(
                X_CB, torch.zeros(3), torch.ones(3), "EPSILON", 0.5, "operationdimension", "batch-excluded"
            ),
            lambda: F.layernorm(
                X_CB, torch.zeros(3), torch.ones(3), Epsilon=0.5, OperationDimension="batch-excluded"
            ),
        ),
        (
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), epsilon=0.5),
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), Epsilon=0.5),
        ),
        (
            lambda: F.softmax(torch.ones(3, 2), "DataFormat", "CB"),
            lambda: F.softmax(torch.ones(3, 2), DataFormat="CB"),
        ),
        (
            lambda: F.softmax(torch.ones(3, 2), "dataformat", "BC"),
            lambda: F.softmax(torch.ones(3, 2), DataFormat="BC"),
        ),
        (
            lambda: F.softmax(torch.ones(3, 2), dataFormat="BC"),
            lambda: F.softmax(torch.ones(3, 2), DataFormat="BC"),
        ),
        (lambda: F.gelu(X_CB, "approximation", "TANH"), lambda: F.gelu(X_CB, Approximation="tanh")),
        (
            lambda: F.fullyconnect(torch.ones(3, 2), torch.ones(4, 3), 0, "DataFormat", "CB"),
            lambda: F.fullyconnect(torch.ones(3, 2), torch.ones(4, 3), 0, DataFormat="CB"),
        ),
        (
            lambda: F.embed(torch.ones(1, 2), torch.eye(3), "dataformat", "BT"),
            lambda: F.embed(torch.ones(1, 2), torch.eye(3), DataFormat="BT"),
        ),
    ],
)
def test_name_value_pairs_and_any_case_names(call, keywords):
    got, expected = call(), keywords()
    assert dlf.dims(got) == dlf.dims(expected)
    torch.testing.assert_close(dlf.extractdata(got), dlf.extractdata(expected), rtol=0, atol=0)


def test_name_value_pairs_reach_the_option():
    """Not only accepted: the pair sets the option (an Epsilon of 1e-3 changes the result)."""
    default = F.layernorm(X_CB, torch.zeros(3), torch.ones(3))
    pair = F.layernorm(X_CB, torch.zeros(3), torch.ones(3), "epsilon", 100.0)
    assert not torch.allclose(dlf.extractdata(default), dlf.extractdata(pair))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), Foo=1),
            "layernorm has no option 'Foo'; the options are: (X, )?Epsilon, DataFormat, OperationDimension$",
        ),
        (
            lambda: F.softmax(X_CB, Dim=1),
            "softmax has no option 'Dim'; the options are: (X, )?DataFormat$",
        ),
        (
            lambda: F.attention(X_CB, X_CB, X_CB, 1, Mask="causal"),
            "attention has no option 'Mask'; the options are: Scale, PaddingMask, AttentionMask, "
            "DropoutProbability, DataFormat, ReturnWeights$",
        ),
        (
            lambda: F.gelu(X_CB, "Approximation", "tanh", "approximation", "none"),
            "gelu got option 'Approximation' twice",
        ),
        (
            lambda: F.layernorm(X_CB, torch.zeros(3), torch.ones(3), "Epsilon", 1e-3, epsilon=1e-3),
            "layernorm got option 'Epsilon' twice",
        ),
    ],
)
def test_unknown_or_repeated_options_are_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_an_unknown_name_value_pair_lists_the_options():
    with pytest.raises(DLFormatError, match="layernorm has no option 'Foo'; the options are: Epsilon"):
        F.layernorm(X_CB, torch.zeros(3), torch.ones(3), "Foo", 1)


def test_the_listed_options_leave_out_the_data_argument():
    with pytest.raises(DLFormatError, match=r"the options are: DataFormat$"):
        F.softmax(X_CB, Dim=1)
