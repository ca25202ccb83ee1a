"""reluLayer, geluLayer, dropoutLayer and softmaxLayer against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_relu_keeps_format_and_clips():
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    Y = dlf.reluLayer()(dlf.dlarray(x, "SCB"))
    assert dlf.dims(Y) == "SCB"
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), np.maximum(x.numpy(), 0))


@pytest.mark.parametrize("approximation", ["none", "tanh"])
def test_gelu_matches_its_formula(approximation):
    x = np.linspace(-4, 4, 41)
    if approximation == "none":
        expected = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    else:
        expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    Y = dlf.geluLayer(Approximation=approximation)(dlf.dlarray(torch.from_numpy(x)[:, None], "CB"))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy()[:, 0], expected, rtol=1e-12, atol=1e-14)


def test_dropout_scales_survivors_in_training_and_is_identity_in_inference():
    layer = dlf.dropoutLayer(0.25)
    X = dlf.dlarray(torch.ones(200, 100, dtype=torch.float64), "CB")
    layer.eval()
    assert torch.equal(dlf.stripdims(layer(X)), torch.ones(200, 100, dtype=torch.float64))
    layer.train()
    values = dlf.stripdims(layer(X))
    assert set(values.unique().tolist()) == {0.0, 1 / 0.75}
    assert abs((values == 0).double().mean().item() - 0.25) < 0.02
    with pytest.raises(DLFormatError, match=r"Probability must be a number in \[0, 1\); got 1\.5"):
        dlf.dropoutLayer(1.5)


@pytest.mark.parametrize(("fmt", "shape"), [("CBT", (5, 2, 3)), ("SCB", (3, 5, 2)), ("SSCB", (2, 2, 5, 2))])
def test_softmax_runs_over_channels(fmt, shape):
    x = torch.randn(shape, dtype=torch.float64)
    Y = dlf.softmaxLayer()(dlf.dlarray(x, fmt))
    channel = fmt.index("C")
    e = np.exp(x.numpy() - x.numpy().max(axis=channel, keepdims=True))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), e / e.sum(axis=channel, keepdims=True), rtol=1e-12)
    with pytest.raises(DLFormatError, match=r'needs a dlarray with a "C" dimension; got format "BT"'):
        dlf.softmaxLayer()(dlf.dlarray(torch.randn(2, 3), "BT"))
