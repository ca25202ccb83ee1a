"""``indexing1dLayer``: the first or last element along T (or the single S), against NumPy
indexing; the padding-mask input; its use after attention; errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def values(Y):
    return dlf.stripdims(Y).numpy()


@pytest.mark.parametrize(
    ("fmt", "shape", "axis", "output"),
    [
        pytest.param("CBT", (3, 2, 5), 2, "CB", id="CBT-indexes-T"),
        pytest.param("SCB", (5, 3, 2), 0, "CB", id="SCB-indexes-S"),
        pytest.param("CT", (3, 5), 1, "C", id="CT"),
        pytest.param("SCBT", (4, 3, 2, 5), 3, "SCB", id="SCBT-T-wins-over-S"),
    ],
)
@pytest.mark.parametrize(("index", "position"), [("first", 0), ("last", -1)])
def test_takes_the_first_or_last_element_and_drops_the_dimension(fmt, shape, axis, output, index, position):
    x = np.random.default_rng(0).standard_normal(shape)
    Y = dlf.indexing1dLayer(index)(dlf.dlarray(torch.from_numpy(x), fmt))
    assert dlf.dims(Y) == output
    np.testing.assert_array_equal(values(Y), np.take(x, position, axis=axis))


@pytest.mark.parametrize(("index", "expected_steps"), [("first", [1, 0, 0]), ("last", [3, 1, 4])])
def test_padding_mask_picks_the_first_or_last_data_position_per_observation(index, expected_steps):
    x = np.random.default_rng(1).standard_normal((2, 3, 5))  # C × B × T
    mask = np.zeros((1, 3, 5))
    mask[0, 0, 1:4] = 1  # data at steps 1..3
    mask[0, 1, :2] = 1  # data at steps 0..1
    # observation 2 has no data: the plain first or last position
    layer = dlf.indexing1dLayer(index, HasPaddingMaskInput=True)
    assert layer.InputNames == ("in", "mask")
    Y = layer(dlf.dlarray(torch.from_numpy(x), "CBT"), dlf.dlarray(torch.from_numpy(mask), "CBT"))
    expected_steps[2] = 0 if index == "first" else 4
    expected = np.stack([x[:, b, step] for b, step in enumerate(expected_steps)], axis=1)
    np.testing.assert_array_equal(values(Y), expected)


def test_attention_then_last_element_in_a_network():
    net = dlf.dlnetwork(
        [
            dlf.sequenceInputLayer(4),
            dlf.selfAttentionLayer(2, 8),
            dlf.indexing1dLayer("last"),
            dlf.fullyConnectedLayer(3),
        ]
    )
    Y = dlf.predict(net, dlf.dlarray(torch.randn(4, 5, 7), "CBT"))
    assert (dlf.dims(Y), tuple(Y.shape)) == ("CB", (3, 5))
    assert [layer.Name for layer in net.Layers][2] == "indexing1d"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(lambda: dlf.indexing1dLayer("middle"), "Index", id="index"),
        pytest.param(lambda: dlf.indexing1dLayer(2), "Index", id="numeric-index"),
        pytest.param(
            lambda: dlf.indexing1dLayer()(dlf.dlarray(torch.randn(3, 4, 2, 2), "SSCB")),
            'needs a "T" dimension or exactly one "S"',
            id="two-S",
        ),
        pytest.param(
            lambda: dlf.indexing1dLayer()(dlf.dlarray(torch.randn(3, 2), "CB")), 'needs a "T"', id="no-T-or-S"
        ),
        pytest.param(
            lambda: dlf.indexing1dLayer()(torch.randn(3, 2)), "needs a formatted dlarray", id="tensor"
        ),
        pytest.param(
            lambda: dlf.indexing1dLayer(HasPaddingMaskInput=True)(
                dlf.dlarray(torch.randn(3, 2, 4), "CBT"), dlf.dlarray(torch.ones(2, 4), "BT")
            ),
            "mask must have the input's format",
            id="mask-format",
        ),
        pytest.param(
            lambda: dlf.indexing1dLayer(HasPaddingMaskInput=True)(
                dlf.dlarray(torch.randn(3, 2, 4), "CBT"), dlf.dlarray(torch.ones(1, 2, 3), "CBT")
            ),
            "each of the input's size or 1",
            id="mask-size",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


@pytest.mark.parametrize(("stored", "shape"), [("BTC", (2, 5, 3)), ("CBT", (3, 2, 5)), ("TCB", (5, 3, 2))])
def test_the_gradient_keeps_the_input_memory_order(stored, shape):
    """The gradient that reaches the input is laid out as the input is (a transposed gradient makes
    every layer before it run its backward on strided data)."""
    x = torch.randn(shape, requires_grad=True)
    X = dlf.dlarray(x, stored)
    seen = []
    X._data.register_hook(lambda grad: seen.append(grad.stride()))
    Y = dlf.indexing1dLayer("last")(X)
    dlf.stripdims(Y).sum().backward()
    assert seen == [X._data.stride()]
    expected = torch.zeros(shape)
    expected.select(stored.index("T"), -1).fill_(1)
    torch.testing.assert_close(x.grad, expected)
