"""layerNormalizationLayer against the float64 formula, per OperationDimension."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def reference(
    x: np.ndarray, axes: tuple[int, ...], scale, offset, channel: int, epsilon: float
) -> np.ndarray:
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    shape = [1] * x.ndim
    shape[channel] = -1
    return (x - mean) / np.sqrt(variance + epsilon) * scale.reshape(shape) + offset.reshape(shape)


@pytest.mark.parametrize(
    ("fmt", "shape", "operation", "axes"),
    [
        ("CBT", (4, 3, 5), "auto", (0,)),
        ("CB", (4, 3), "auto", (0,)),
        ("SSCB", (2, 3, 4, 3), "auto", (0, 1, 2)),
        ("SCBT", (2, 4, 3, 5), "auto", (1,)),
        ("SSCB", (2, 3, 4, 3), "channel-only", (2,)),
        ("SCBT", (2, 4, 3, 5), "spatial-channel", (0, 1)),
        ("SCBT", (2, 4, 3, 5), "batch-excluded", (0, 1, 3)),
    ],
)
def test_matches_the_formula(fmt, shape, operation, axes):
    channel = fmt.index("C")
    layer = dlf.layerNormalizationLayer(
        OperationDimension=operation,
        Epsilon=1e-3,
        ScaleInitializer="glorot",
        OffsetInitializer="narrow-normal",
        dtype=torch.float64,
    )
    x = torch.randn(shape, dtype=torch.float64) * 3 + 1
    Y = layer(dlf.dlarray(x, fmt))
    assert layer.NumChannels == shape[channel] and tuple(layer.Scale.shape) == (shape[channel], 1)
    expected = reference(
        x.numpy(), axes, layer.Scale.detach().numpy(), layer.Offset.detach().numpy(), channel, 1e-3
    )
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_half_precision_is_normalized_in_float32():
    layer = dlf.layerNormalizationLayer(NumChannels=64, dtype=torch.float16)
    x = (torch.randn(64, 2, 3) * 100 + 1000).half()
    Y = layer(dlf.dlarray(x, "CBT"))
    assert Y.dtype == torch.float16
    expected = reference(x.double().numpy(), (0,), np.ones(64), np.zeros(64), 0, 1e-5)
    np.testing.assert_allclose(dlf.stripdims(Y).detach().double().numpy(), expected, atol=1e-2)


def test_channel_count_is_checked_and_options_validated():
    layer = dlf.layerNormalizationLayer(NumChannels=4)
    with pytest.raises(DLFormatError, match=r'has NumChannels 4; the "CB" input of size 3×\d+ has 3 channels'):
        layer(dlf.dlarray(torch.randn(3, 2), "CB"))
    with pytest.raises(DLFormatError, match=r"Epsilon must be a positive number"):
        dlf.layerNormalizationLayer(Epsilon=0)
    with pytest.raises(DLFormatError, match=r"OperationDimension must be one of"):
        dlf.layerNormalizationLayer(OperationDimension="time")
    with pytest.raises(DLFormatError, match=r'needs a dlarray with a "C" dimension; got format "BT"'):
        layer(dlf.dlarray(torch.randn(2, 3), "BT"))


def test_given_scale_fixes_num_channels():
    layer = dlf.layerNormalizationLayer(Scale=np.full((5, 1), 2.0))
    assert layer.NumChannels == 5 and torch.equal(layer.Offset, torch.zeros(5, 1))
