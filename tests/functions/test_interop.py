"""torch and NumPy on dlarrays (DLArray.__torch_function__, __array__): a defined outcome for every
call (docs/dlarray_functions.md#torch-and-numpy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dlformat as dlf
from dlformat import DLFormatError

DATA = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(5))


@pytest.fixture
def X():
    return dlf.dlarray(DATA, "CBT")


@pytest.mark.parametrize(
    "function",
    [torch.exp, torch.tanh, torch.relu, torch.sigmoid, torch.abs, torch.neg, torch.floor, torch.round,
     torch.isnan, F.relu, lambda x: F.gelu(x, approximate="tanh"), lambda x: F.leaky_relu(x, 0.2), torch.clone],
    ids=lambda function: getattr(function, "__name__", "lambda"),
)  # fmt: skip
def test_ported_unary_torch_functions_compute_as_torch_and_keep_the_format(X, function):
    Y = function(X)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == "CBT"
    torch.testing.assert_close(dlf.stripdims(Y), function(DATA))


def test_ported_binary_torch_functions_align_by_label_in_either_operand_order(X):
    Z = dlf.dlarray(torch.arange(5.0), "T")
    for got, expected in [
        (torch.add(X, Z), DATA + torch.arange(5.0)),
        (torch.mul(Z, X), DATA * torch.arange(5.0)),
        (torch.ones(1, 1, 5) - X, 1 - DATA),
        (torch.maximum(X, torch.zeros(1)), DATA.clamp(min=0)),
        (torch.ones(1) > X, 1 > DATA),
        (torch.pow(X, 2), DATA**2),
    ]:
        assert isinstance(got, dlf.DLArray) and dlf.dims(got) in ("CBT", "T")
        torch.testing.assert_close(dlf.stripdims(got), expected)


def test_torch_matmul_follows_mtimes(X):
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    torch.testing.assert_close(dlf.stripdims(torch.matmul(dlf.dlarray(a), b)), a @ b)
    with pytest.raises(DLFormatError, match=r"mtimes \(A\*B, A @ B\) cannot take a formatted dlarray"):
        torch.matmul(X, torch.ones(5, 2))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda X: torch.sum(X),
            r"torch.sum has no dlarray rule in dlformat: .* Use dlformat.sum \(MATLAB's sum: dimensions from 1, or labels\), or stripdims\(X\)",
        ),
        (
            lambda X: torch.stack([X, X]),
            r"torch.stack has no dlarray rule .* Use dlformat.cat along a singleton label",
        ),
        (
            lambda X: F.linear(X, torch.ones(2, 5)),
            r"torch.nn.functional.linear has no dlarray rule .* dlformat.functional.fullyconnect",
        ),
        (
            lambda X: torch.median(X),
            r"torch.median has no dlarray rule in dlformat: only the torch functions with a MATLAB counterpart are ported .* Use stripdims\(X\) \(the data in the stored order, with autograd\) or extractdata\(X\)",
        ),
        (
            lambda X: torch.add(X, X, alpha=2),
            r"torch add with further arguments \(alpha\) has no dlarray rule",
        ),
        (lambda X: torch.exp(torch.ones(1), out=X), r"torch.exp takes a dlarray as its data argument only"),
    ],
)
def test_every_other_torch_function_is_a_clear_error(X, call, message):
    with pytest.raises(DLFormatError, match=message):
        call(X)


def test_numpy_never_makes_a_silent_object_array(X):
    with pytest.raises(
        DLFormatError,
        match=r"NumPy cannot take a dlarray: np.asarray\(X\) would lose its labels .* extractdata\(X\).cpu\(\).numpy\(\)",
    ):
        np.asarray(X)
    with pytest.raises(DLFormatError, match=r"numpy.exp cannot take a dlarray"):
        np.exp(X)
    with pytest.raises(DLFormatError, match=r"numpy.concatenate cannot take a dlarray"):
        np.concatenate([X, X])
    Y = np.ones((3, 4, 5)) + X  # an array on the left still meets the dlarray's operator
    assert dlf.dims(Y) == "CBT"
    torch.testing.assert_close(dlf.stripdims(Y), DATA + 1)
    assert dlf.dims(np.zeros(5) < X) == "CBT"


def test_tensor_methods_are_an_error_that_is_also_an_attribute_error(X):
    with pytest.raises(
        DLFormatError, match=r"a dlarray has no tensor method .sum: .* stripdims\(X\).sum\(...\)"
    ) as caught:
        X.sum()
    assert isinstance(caught.value, AttributeError)
    assert not hasattr(X, "numpy") and getattr(X, "view", None) is None
    with pytest.raises(AttributeError, match=r"'DLArray' object has no attribute 'nothing'"):
        X.nothing  # noqa: B018


def test_python_protocols_are_defined(X):
    with pytest.raises(DLFormatError, match=r"a dlarray is not iterable"):
        list(X)
    with pytest.raises(
        DLFormatError, match=r"a truth value of a dlarray needs exactly one element; this one has 60"
    ):
        bool(X > 0)
    assert bool(dlf.all(X == X, "all")) and float(dlf.sum(X, "all")) == pytest.approx(
        float(DATA.sum()), rel=1e-5
    )
    assert int(dlf.dlarray(torch.tensor([7.0]), "C")) == 7
    assert (X == None) is False and (X != "text") is True  # noqa: E711
    assert {X: 1}[X] == 1  # hashable by identity, as a tensor
    assert dlf.dims(+X) == "CBT" and dlf.dims(abs(X)) == "CBT"


@pytest.mark.usefixtures("fresh_dynamo")
def test_matlab_functions_and_torch_operands_compile_with_fullgraph():
    weights = torch.nn.Parameter(torch.randn(3, 1, 1))

    def step(X):
        Y = dlf.exp(X[:, 0:2, :]) * weights + torch.tanh(X[:, 0:2, :])
        return dlf.sum(Y * (X[:, 0:2, :] > 0), "T") - dlf.max(Y, [], 1)

    X = dlf.dlarray(DATA, "CBT")
    got = torch.compile(step, fullgraph=True, backend="eager")(X)
    assert dlf.dims(got) == "CBT" and tuple(got.shape) == (3, 2, 5)
    torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(step(X)))


@pytest.mark.usefixtures("fresh_dynamo")
def test_a_compiled_product_of_a_dlarray_and_a_tensor_is_never_silently_transposed():
    """Dynamo hands A @ W and W @ A over as Tensor.matmul(W, A): refused there, so fullgraph=False
    runs the product eagerly (right) and fullgraph=True says why; dlf.mtimes compiles."""
    W, X = torch.randn(3, 3), dlf.dlarray(torch.randn(3, 3))
    expected = dlf.stripdims(X) @ W
    torch.testing.assert_close(dlf.stripdims(torch.compile(lambda X: X @ W, backend="eager")(X)), expected)
    with pytest.raises(
        Exception, match=r"A @ B between a dlarray and a plain tensor cannot be traced in the right order"
    ):
        torch.compile(lambda X: W @ X, fullgraph=True, backend="eager")(X)
    compiled = torch.compile(lambda X: dlf.mtimes(X, W), fullgraph=True, backend="eager")
    torch.testing.assert_close(dlf.stripdims(compiled(X)), expected)


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
