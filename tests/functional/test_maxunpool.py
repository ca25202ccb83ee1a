"""``maxpool``'s indices (``ReturnIndices=True``) and ``maxunpool`` against float64 NumPy references.

MATLAB's ``[Y, indx, inputSize] = maxpool(X, poolsize)`` gives, per pooling region, the linear
index of its maximum into ``X`` (1-based, column-major: the first dimension fastest) and
``size(X)``; ``maxunpool(Y, indx, outputSize)`` puts each value back at its index in zeros
(MathWorks, ``maxpool`` and ``maxunpool``). The reference finds each region's maximum among the
input elements it covers and numbers it with NumPy's ``ravel_multi_index(..., order="F") + 1``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

from .test_pooling import CASES, data, same_padding


def index_reference(x, size, stride, padding):
    """Max and its MATLAB linear index per region, pooling the leading axes of ``x``."""
    d = len(size)
    if padding == "same":
        padding = [same_padding(n, k, s) for n, k, s in zip(x.shape[:d], size, stride, strict=True)]
    widths = [*padding, *[(0, 0)] * (x.ndim - d)]
    padded = np.pad(x, widths, constant_values=-np.inf)
    out = [(padded.shape[i] - size[i]) // stride[i] + 1 for i in range(d)]
    y = np.zeros((*out, *x.shape[d:]))
    indices = np.zeros_like(y)
    for position in np.ndindex(*y.shape):
        where, rest = position[:d], position[d:]
        region = tuple(slice(where[i] * stride[i], where[i] * stride[i] + size[i]) for i in range(d))
        values = padded[(*region, *rest)]
        best = np.unravel_index(np.argmax(values), values.shape)
        coordinates = [where[i] * stride[i] + best[i] - padding[i][0] for i in range(d)] + list(rest)
        y[position] = values[best]
        indices[position] = np.ravel_multi_index(coordinates, x.shape, order="F") + 1
    return y, indices


def strides_of(options, d):
    stride = options.get("Stride", 1)
    return [stride] * d if np.isscalar(stride) else list(stride)


@pytest.mark.parametrize(("shape", "size", "options", "padding"), CASES)
def test_indices_match_the_reference(shape, size, options, padding):
    x = data(shape)
    fmt = "S" * len(size) + "CB"[: len(shape) - len(size)]
    Y, indx, inputSize = F.maxpool(dlf.dlarray(torch.tensor(x), fmt), size, ReturnIndices=True, **options)
    y, expected = index_reference(x, size, strides_of(options, len(size)), padding)
    assert dlf.dims(Y) == dlf.dims(indx) == fmt and inputSize == shape
    assert indx.dtype == torch.float64
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), y)
    np.testing.assert_array_equal(dlf.extractdata(indx).numpy(), expected)
    # the values sit at their indices in the input, as MATLAB's X(indx) == Y
    np.testing.assert_array_equal(x.flatten(order="F")[expected.astype(int) - 1], y)


def test_the_values_are_those_without_indices():
    X = dlf.dlarray(torch.tensor(data((7, 6, 2, 2))), "SSCB")
    plain = F.maxpool(X, [3, 2], Stride=2, Padding="same")
    assert torch.equal(
        dlf.extractdata(F.maxpool(X, [3, 2], Stride=2, Padding="same", ReturnIndices=True)[0]),
        dlf.extractdata(plain),
    )


def test_global_pooling_and_time():
    x = data((3, 2, 5))  # C × B × T
    Y, indx, inputSize = F.maxpool(
        dlf.dlarray(torch.tensor(x), "CBT"), "global", PoolFormat="T", ReturnIndices=True
    )
    best = x.argmax(axis=2)
    c, b = np.meshgrid(range(3), range(2), indexing="ij")
    expected = np.ravel_multi_index((c, b, best), x.shape, order="F")[..., None] + 1
    assert tuple(Y.shape) == (3, 2, 1) and inputSize == (3, 2, 5)
    np.testing.assert_array_equal(dlf.extractdata(indx).numpy(), expected)


def test_unformatted_data_is_indexed_in_its_own_order():
    x = data((2, 6, 4, 3))  # B × S × S × C as stored
    Y, indx, inputSize = F.maxpool(torch.tensor(x), 2, Stride=2, DataFormat="BSSC", ReturnIndices=True)
    assert dlf.dims(Y) == dlf.dims(indx) == "" and inputSize == (2, 6, 4, 3)
    np.testing.assert_array_equal(
        x.flatten(order="F")[dlf.extractdata(indx).numpy().astype(int) - 1], dlf.extractdata(Y).numpy()
    )
    Z = F.maxunpool(Y, indx, inputSize, DataFormat="BSSC")
    assert dlf.dims(Z) == "" and tuple(Z.shape) == x.shape


@pytest.mark.parametrize(("shape", "size", "options", "padding"), CASES[:4])
def test_maxunpool_puts_each_maximum_back(shape, size, options, padding):
    x = data(shape, seed=3)
    fmt = "S" * len(size) + "CB"[: len(shape) - len(size)]
    Y, indx, inputSize = F.maxpool(dlf.dlarray(torch.tensor(x), fmt), size, ReturnIndices=True, **options)
    Z = F.maxunpool(Y, indx, inputSize)
    y, indices = index_reference(x, size, strides_of(options, len(size)), padding)
    expected = np.zeros(x.size)
    expected[indices.astype(int).flatten() - 1] = y.flatten()
    assert dlf.dims(Z) == fmt
    np.testing.assert_array_equal(dlf.extractdata(Z).numpy(), expected.reshape(x.shape, order="F"))


def test_maxunpool_gradient_flows_to_the_pooled_values():
    def gradient(X):
        Y, indx, inputSize = F.maxpool(X, 2, Stride=2, ReturnIndices=True)
        Z = F.maxunpool(Y * 3, indx, inputSize)
        return dlf.dlgradient(dlf.sum(dlf.stripdims(Z), "all"), X), indx

    grad, indx = dlf.dlfeval(gradient, dlf.dlarray(torch.tensor(data((4, 4, 1, 1))), "SSCB"))
    expected = np.zeros(16)
    expected[dlf.extractdata(indx).numpy().astype(int).flatten() - 1] = 3.0
    np.testing.assert_array_equal(dlf.extractdata(grad).numpy(), expected.reshape(4, 4, 1, 1, order="F"))


X4 = dlf.dlarray(torch.ones(4, 4, 1, 1), "SSCB")
POOLED = F.maxpool(X4, 2, Stride=2, ReturnIndices=True)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: F.maxpool(X4, 2, ReturnIndices="yes"), "maxpool: ReturnIndices must be true or false"),
        (
            lambda: F.maxunpool(POOLED[0], POOLED[1][0:1, :, :, :], POOLED[2]),
            r"indx must have the size of X \(2×2×1×1\); got 1×2×1×1",
        ),
        (
            lambda: F.maxunpool(POOLED[0], POOLED[1] * 10, POOLED[2]),
            "indx must hold integer linear indices from 1 to 16",
        ),
        (lambda: F.maxunpool(POOLED[0], POOLED[1] - 0.5, POOLED[2]), "indx must hold integer linear indices"),
        (lambda: F.maxunpool(POOLED[0], POOLED[1], "big"), "outputSize must be a vector of sizes"),
        (
            lambda: F.maxunpool(POOLED[0], POOLED[1], [4, 0, 1, 1]),
            "outputSize must be a positive integer; got 0",
        ),
        (lambda: F.maxunpool(POOLED[0], POOLED[1], [4, 4, 1, 1, 2]), "has more dimensions than X"),
        (
            lambda: F.maxunpool(dlf.stripdims(POOLED[0]), POOLED[1], POOLED[2]),
            "maxunpool needs a formatted dlarray",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
