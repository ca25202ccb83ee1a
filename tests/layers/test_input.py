"""sequenceInputLayer and featureInputLayer: format and size checks, normalization."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_plain_tensors_are_read_in_the_layers_format_and_dlarrays_by_label():
    layer = dlf.sequenceInputLayer(3)
    x = torch.randn(3, 2, 5)
    Y = layer(x)
    assert dlf.dims(Y) == "CBT" and torch.equal(dlf.stripdims(Y), x)
    Y = layer(dlf.dlarray(x.permute(1, 2, 0), "BTC"))
    assert torch.equal(dlf.stripdims(Y), x)


@pytest.mark.parametrize(
    ("layer", "X", "message"),
    [
        (
            dlf.sequenceInputLayer(3, Name="in"),
            dlf.dlarray(torch.randn(3, 2), "CB"),
            r"SequenceInputLayer 'in' needs data of format \"CBT\"; got \"CB\"",
        ),
        (
            dlf.sequenceInputLayer(3),
            dlf.dlarray(torch.randn(4, 2, 5), "CBT"),
            r"needs 3 \(channels\) per element; the data has 4",
        ),
        (
            dlf.sequenceInputLayer((8, 3)),
            dlf.dlarray(torch.randn(7, 3, 2, 5), "SCBT"),
            r"needs 8×3 \(spatial × channels\) per element; the data has 7×3",
        ),
        (
            dlf.sequenceInputLayer(3, MinLength=4),
            dlf.dlarray(torch.randn(3, 2, 2), "CBT"),
            r"at least MinLength=4 steps; got 2",
        ),
        (
            dlf.featureInputLayer(5),
            dlf.dlarray(torch.randn(5, 2, 3), "CBT"),
            r'needs data of format "CB"; got "CBT"',
        ),
    ],
)
def test_wrong_data_is_refused_naming_what_is_expected(layer, X, message):
    with pytest.raises(DLFormatError, match=message):
        layer(X)


def test_image_sequences_take_one_s_per_spatial_size():
    layer = dlf.sequenceInputLayer((4, 5, 3))
    assert layer.InputFormat == "SSCBT"
    Y = layer(dlf.dlarray(torch.randn(4, 5, 3, 2, 6), "SSCBT"))
    assert tuple(Y.shape) == (4, 5, 3, 2, 6)


def test_zscore_and_zerocenter_use_the_given_statistics():
    x = torch.randn(3, 4, dtype=torch.float64)
    mean, deviation = np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.0, 4.0])
    Y = dlf.featureInputLayer(3, Normalization="zscore", Mean=mean, StandardDeviation=deviation)(
        dlf.dlarray(x, "CB")
    )
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), (x.numpy() - mean[:, None]) / deviation[:, None])
    Y = dlf.featureInputLayer(3, Normalization="zerocenter", Mean=2.0)(dlf.dlarray(x, "CB"))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), x.numpy() - 2.0)


def test_normalization_statistics_are_required_and_checked():
    with pytest.raises(
        DLFormatError,
        match=r'Normalization "zscore" needs Mean and StandardDeviation; set them at construction',
    ):
        dlf.featureInputLayer(3, Normalization="zscore")(dlf.dlarray(torch.randn(3, 2), "CB"))
    with pytest.raises(DLFormatError, match=r"Mean must have 1 or 3 \(one per channel\) elements; got 2"):
        dlf.featureInputLayer(3, Mean=[1, 2])
    with pytest.raises(DLFormatError, match=r"StandardDeviation must be positive"):
        dlf.featureInputLayer(3, StandardDeviation=[1, 0, 2])
    with pytest.raises(DLFormatError, match=r"\[h c\], \[h w c\] or \[h w d c\]"):
        dlf.sequenceInputLayer((1, 2, 3, 4, 5))
