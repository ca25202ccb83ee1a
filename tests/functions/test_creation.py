"""zeros/ones/rand/randn (with "like"), single/double/cast/logical, underlyingType, gather, isdlarray
(docs/dlarray_functions.md#creation-and-types)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

PROTOTYPE = dlf.dlarray(torch.ones(2, 3, dtype=torch.float32), "CB")


@pytest.mark.parametrize("name", ["zeros", "ones", "rand", "randn"])
def test_creation_sizes_are_matlabs_and_the_default_class_is_double(name):
    create = getattr(dlf, name)
    assert tuple(create(3).shape) == (3, 3)  # MATLAB: zeros(n) is n×n
    assert tuple(create(2, 4, 5).shape) == (2, 4, 5)
    assert tuple(create([2, 4]).shape) == (2, 4)
    assert tuple(create().shape) == (1, 1)
    Y = create(2, 3)
    assert isinstance(Y, torch.Tensor) and Y.dtype == torch.float64
    assert create(2, 3, "single").dtype == torch.float32


@pytest.mark.parametrize("name", ["zeros", "ones", "rand", "randn"])
def test_like_a_dlarray_gives_an_unformatted_dlarray_of_its_type_and_device(name):
    for Y in (getattr(dlf, name)(4, 5, "like", PROTOTYPE), getattr(dlf, name)(4, 5, like=PROTOTYPE)):
        assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == "" and tuple(Y.shape) == (4, 5)
        assert Y.dtype == torch.float32 and Y.device == PROTOTYPE.device
    Z = getattr(dlf, name)(2, "like", torch.ones(1, dtype=torch.float64))
    assert isinstance(Z, torch.Tensor) and Z.dtype == torch.float64


def test_values_of_zeros_ones_and_random_numbers():
    np.testing.assert_array_equal(dlf.zeros(2, 3).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(dlf.ones(2, 3, "int32").numpy(), np.ones((2, 3), np.int32))
    torch.manual_seed(0)
    uniform = dlf.rand(1000)
    assert 0 < float(uniform.min()) and float(uniform.max()) < 1 and abs(float(uniform.mean()) - 0.5) < 0.01
    normal = dlf.randn(1000, "single")
    assert abs(float(normal.mean())) < 0.01 and abs(float(normal.std()) - 1) < 0.01


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.zeros(2, "like", PROTOTYPE, "Like", PROTOTYPE), r"zeros got option 'like' twice"),
        (lambda: dlf.zeros(2, "single", like=PROTOTYPE), r'zeros takes a class name or "like", P, not both'),
        (lambda: dlf.ones(2, "quad"), r'ones: the class must be one of "double", "single", "half", "int8"'),
        (lambda: dlf.rand(2, "int8"), r'rand: the class must be one of "double", "single"; got "int8"'),
        (
            lambda: dlf.randn(2, like=torch.ones(1, dtype=torch.int64)),
            r"randn makes floating-point numbers; the prototype's type is int64",
        ),
        (lambda: dlf.zeros(-1), r"zeros size must be an integer >= 0; got -1"),
    ],
)
def test_bad_creation_arguments_say_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_single_double_and_cast_keep_the_format():
    X = dlf.dlarray(torch.tensor([[1.5, -2.0]]), "CB")
    for Y, dtype in [
        (dlf.double(X), torch.float64),
        (dlf.single(dlf.double(X)), torch.float32),
        (dlf.cast(X, "double"), torch.float64),
        (dlf.cast(X, "like", dlf.double(X)), torch.float64),
        (dlf.cast(X, like=torch.ones(1, dtype=torch.float64)), torch.float64),
        (dlf.cast(X, "logical"), torch.bool),
    ]:
        assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == "CB" and Y.dtype == dtype
    assert dlf.double(3).dtype == torch.float64 and isinstance(dlf.single(np.ones(2)), torch.Tensor)
    Z = dlf.cast(torch.ones(2), "like", X)
    assert isinstance(Z, dlf.DLArray) and dlf.dims(Z) == "" and Z.dtype == torch.float32
    assert dlf.cast(np.arange(3), "int8").dtype == torch.int8
    with pytest.raises(
        DLFormatError,
        match=r'cast of a dlarray: the class must be one of "single", "double", "logical"; got "int8"',
    ):
        dlf.cast(X, "int8")
    with pytest.raises(DLFormatError, match=r"cast needs a class name"):
        dlf.cast(X)


def test_logical_is_nonzero_and_refuses_nan_as_matlab():
    Y = dlf.logical(dlf.dlarray(torch.tensor([0.0, -2.0, 0.5]), "T"))
    assert dlf.dims(Y) == "T" and Y.dtype == torch.bool
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), [False, True, True])
    with pytest.raises(DLFormatError, match=r"logical: NaN values cannot be converted to logicals"):
        dlf.logical(dlf.dlarray(torch.tensor([math.nan]), "T"))


def test_underlying_type_gather_and_isdlarray():
    assert dlf.underlyingType(PROTOTYPE) == "single"
    assert dlf.underlyingType(dlf.double(PROTOTYPE)) == "double"
    assert dlf.underlyingType(PROTOTYPE > 0) == "logical"
    assert dlf.underlyingType(PROTOTYPE.bfloat16()) == "bfloat16"
    assert dlf.underlyingType(3) == "double" and dlf.underlyingType(True) == "logical"
    assert dlf.underlyingType(np.ones(2, np.float32)) == "single"
    Y = dlf.gather(PROTOTYPE)
    assert dlf.dims(Y) == "CB" and Y.device.type == "cpu"
    assert isinstance(dlf.gather(torch.ones(1)), torch.Tensor)
    assert dlf.isdlarray(PROTOTYPE) and not dlf.isdlarray(torch.ones(1))
    assert dlf.isdlarray(PROTOTYPE, "single") and not dlf.isdlarray(PROTOTYPE, "double")
    with pytest.raises(DLFormatError, match=r"isdlarray: underlyingClass must be a class name"):
        dlf.isdlarray(PROTOTYPE, 3)
