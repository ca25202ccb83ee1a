"""MATLAB's convolution layers against float64 NumPy references written from MATLAB's definitions:
cross-correlation with MATLAB's weight layouts, "same" padding with the odd element after the
data, causal padding, dilation, stride, padding values; transposed convolution with cropping."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

NUMPY_MODES = {
    "symmetric-include-edge": "symmetric",
    "symmetric-exclude-edge": "reflect",
    "replicate": "edge",
}


# -- references (data laid out as slid dimensions..., C, B; weights as MATLAB lays them out) ------
def pad_edges(sizes, filters, strides, dilations, padding):
    """(before, after) per slid dimension, from MATLAB's documented rules."""
    reach = [(k - 1) * d + 1 for k, d in zip(filters, dilations, strict=True)]
    if padding == "same":  # ceil(n/stride) outputs; an odd total puts the extra element after
        result = []
        for n, s, r in zip(sizes, strides, reach, strict=True):
            total = max((math.ceil(n / s) - 1) * s + r - n, 0)
            result.append((total // 2, total - total // 2))
        return result
    if padding == "causal":
        return [(r - 1, 0) for r in reach]
    flat = list(np.atleast_1d(padding))
    if len(flat) == 1:
        flat = flat * len(sizes)
    if len(flat) == len(sizes):
        return [(p, p) for p in flat]
    return list(zip(flat[0::2], flat[1::2], strict=True))


def reference_conv(x, w, b, strides, dilations, padding, value=0.0, groups=1):
    """Y[o, f, b] = sum over window taps and the group's channels of w * x, plus bias."""
    d = x.ndim - 2
    filters = w.shape[:d]
    edges = pad_edges(x.shape[:d], filters, strides, dilations, padding)
    widths = [*edges, (0, 0), (0, 0)]
    if isinstance(value, str):
        xp = np.pad(x, widths, mode=NUMPY_MODES[value])
    else:
        xp = np.pad(x, widths, constant_values=value)
    reach = [(k - 1) * dl + 1 for k, dl in zip(filters, dilations, strict=True)]
    outs = [(xp.shape[i] - reach[i]) // strides[i] + 1 for i in range(d)]
    per_group = x.shape[d] // groups
    w = w.reshape(*filters, per_group, -1, groups)  # grouped layout; plain weights have groups 1
    bias = b.reshape(-1, order="F")
    result = np.zeros((*outs, w.shape[d + 1] * groups, x.shape[-1]))
    for position in itertools.product(*(range(o) for o in outs)):
        window = tuple(
            slice(o * s, o * s + r, dl)
            for o, s, r, dl in zip(position, strides, reach, dilations, strict=True)
        )
        patch = xp[window]  # filters..., C, B
        for g in range(groups):
            part = patch[..., g * per_group : (g + 1) * per_group, :]
            block = np.tensordot(w[..., g], part, axes=(list(range(d + 1)), list(range(d + 1))))
            count = w.shape[d + 1]
            result[position][g * count : (g + 1) * count] = block
    return result + bias.reshape(-1, 1)


def reference_transposed(x, w, b, strides, cropping):
    """Every input element adds x * w into a filter-sized window of the full output, windows
    ``stride`` apart; the full output is then cropped (``"same"``: the odd element at the top)."""
    d = x.ndim - 2
    filters = w.shape[:d]
    full = [(n - 1) * s + k for n, s, k in zip(x.shape[:d], strides, filters, strict=True)]
    result = np.zeros((*full, w.shape[d], x.shape[-1]))
    for position in itertools.product(*(range(n) for n in x.shape[:d])):
        window = tuple(slice(i * s, i * s + k) for i, s, k in zip(position, strides, filters, strict=True))
        result[window] += np.einsum("...fc,cb->...fb", w, x[position])
    if cropping == "same":
        edges = [((k - s) - (k - s) // 2, (k - s) // 2) for k, s in zip(filters, strides, strict=True)]
    else:
        edges = pad_edges(x.shape[:d], filters, strides, [1] * d, cropping)
    index = tuple(slice(before, size - after) for (before, after), size in zip(edges, full, strict=True))
    return result[index] + b.reshape(-1, order="F").reshape(-1, 1)


def run(layer, x, fmt):
    X = dlf.dlarray(torch.from_numpy(x), fmt)
    Y = layer(X)
    return dlf.dims(Y), dlf.extractdata(Y).numpy()


def weights_like(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- values -----------------------------------------------------------------------------------
CONV2D = [
    ((3, 2), 1, 1, 0, 0),
    (3, 2, 1, "same", 0),  # odd total padding: the extra row/column after the data
    (2, (1, 2), (2, 1), [1, 0, 2, 1], 0),  # [t b l r]
    (3, 1, 1, [1, 2], 1.5),  # [a b], a number as PaddingValue
    (3, 1, 1, 2, "symmetric-include-edge"),
    (3, 2, 1, "same", "symmetric-exclude-edge"),
    (3, 1, 2, [0, 2, 1, 1], "replicate"),
]


@pytest.mark.parametrize(("filter_size", "stride", "dilation", "padding", "value"), CONV2D)
def test_convolution2d_matches_reference(filter_size, stride, dilation, padding, value):
    x = weights_like((7, 6, 3, 2), seed=1)
    filters = np.broadcast_to(filter_size, (2,))
    w, b = weights_like((*filters, 3, 4)), weights_like((1, 1, 4), seed=2)
    layer = dlf.convolution2dLayer(
        filter_size,
        4,
        Stride=stride,
        DilationFactor=dilation,
        Padding=padding,
        PaddingValue=value,
        Weights=w,
        Bias=b,
        dtype=torch.float64,
    )
    fmt, got = run(layer, x, "SSCB")
    strides, dilations = np.broadcast_to(stride, (2,)), np.broadcast_to(dilation, (2,))
    assert fmt == "SSCB"
    np.testing.assert_allclose(got, reference_conv(x, w, b, strides, dilations, padding, value), atol=1e-12)


@pytest.mark.parametrize(
    ("padding", "dilation", "stride"), [("causal", 2, 1), ("same", 1, 2), ([2, 1], 1, 1), (0, 3, 2)]
)
def test_convolution1d_over_time_of_cbt(padding, dilation, stride):
    x = weights_like((3, 2, 11), seed=3)  # C B T
    w, b = weights_like((3, 3, 5)), weights_like((1, 5), seed=4)
    layer = dlf.convolution1dLayer(
        3, 5, Padding=padding, DilationFactor=dilation, Stride=stride, Weights=w, Bias=b, dtype=torch.float64
    )
    fmt, got = run(layer, x, "CBT")
    expected = reference_conv(x.transpose(2, 0, 1), w, b, [stride], [dilation], padding)  # T C B
    assert fmt == "CBT"
    np.testing.assert_allclose(got, expected.transpose(1, 2, 0), atol=1e-12)


def test_convolution1d_over_space_keeps_time():
    x = weights_like((9, 3, 2, 4), seed=5)  # S C B T: each time step convolved alike
    w, b = weights_like((2, 3, 4)), weights_like((1, 4), seed=6)
    layer = dlf.convolution1dLayer(2, 4, Padding="same", Weights=w, Bias=b, dtype=torch.float64)
    fmt, got = run(layer, x, "SCBT")
    assert fmt == "SCBT"
    for t in range(4):
        np.testing.assert_allclose(got[..., t], reference_conv(x[..., t], w, b, [1], [1], "same"), atol=1e-12)


def test_convolution2d_over_space_and_time_of_scbt():
    x = weights_like((6, 3, 2, 5), seed=7)  # S C B T: the 2-D filter slides over S and T
    w, b = weights_like((3, 2, 3, 4)), weights_like((1, 1, 4), seed=8)
    layer = dlf.convolution2dLayer([3, 2], 4, Weights=w, Bias=b, dtype=torch.float64)
    fmt, got = run(layer, x, "SCBT")
    expected = reference_conv(x.transpose(0, 3, 1, 2), w, b, [1, 1], [1, 1], 0)  # S T C B
    assert fmt == "SCBT"
    np.testing.assert_allclose(got, expected.transpose(0, 2, 3, 1), atol=1e-12)


def test_convolution3d_matches_reference():
    x = weights_like((5, 4, 6, 2, 2), seed=9)
    w, b = weights_like((2, 3, 2, 2, 3)), weights_like((1, 1, 1, 3), seed=10)
    padding = [[1, 0, 1], [0, 1, 0]]  # MATLAB's [t l f; b r k]
    layer = dlf.convolution3dLayer(
        [2, 3, 2], 3, Stride=[1, 2, 1], Padding=padding, Weights=w, Bias=b, dtype=torch.float64
    )
    fmt, got = run(layer, x, "SSSCB")
    expected = reference_conv(x, w, b, [1, 2, 1], [1, 1, 1], [1, 0, 0, 1, 1, 0])
    assert fmt == "SSSCB" and layer.PaddingSize == ((1, 0, 1), (0, 1, 0))
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize(("groups", "channels"), [(2, 6), (3, 3), ("channel-wise", 4)])
def test_grouped_convolution_matches_reference(groups, channels):
    count = channels if groups == "channel-wise" else groups
    per_group = channels // count
    x = weights_like((6, 5, channels, 2), seed=11)
    w, b = weights_like((3, 2, per_group, 2, count)), weights_like((1, 1, 2, count), seed=12)
    layer = dlf.groupedConvolution2dLayer(
        [3, 2], 2, groups, Padding="same", Weights=w, Bias=b, dtype=torch.float64
    )
    fmt, got = run(layer, x, "SSCB")
    expected = reference_conv(x, w, b, [1, 1], [1, 1], "same", groups=count)
    assert fmt == "SSCB" and got.shape[2] == 2 * count and layer.NumChannelsPerGroup == per_group
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize(
    ("dims", "filter_size", "stride", "cropping"),
    [
        (1, 4, 2, "same"),
        (1, 3, 2, [1, 0]),
        (2, 3, 2, "same"),  # odd cropping: the extra row/column cropped at the top/left
        (2, (2, 3), (1, 2), [0, 1, 1, 0]),
        (3, 2, 2, 0),
    ],
)
def test_transposed_convolution_matches_reference(dims, filter_size, stride, cropping):
    sizes = (4, 3, 5)[:dims]
    x = weights_like((*sizes, 3, 2), seed=13)
    filters = tuple(np.broadcast_to(filter_size, (dims,)))
    w, b = weights_like((*filters, 2, 3)), weights_like((*(1,) * dims, 2), seed=14)
    constructor = getattr(dlf, f"transposedConv{dims}dLayer")
    layer = constructor(
        filter_size, 2, Stride=stride, Cropping=cropping, Weights=w, Bias=b, dtype=torch.float64
    )
    fmt, got = run(layer, x, "S" * dims + "CB")
    expected = reference_transposed(x, w, b, list(np.broadcast_to(stride, (dims,))), cropping)
    assert fmt == "S" * dims + "CB"
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_transposed_convolution1d_over_time():
    x = weights_like((3, 2, 5), seed=15)  # C B T
    w, b = weights_like((4, 2, 3)), weights_like((1, 2), seed=16)
    layer = dlf.transposedConv1dLayer(4, 2, Stride=2, Cropping="same", Weights=w, Bias=b, dtype=torch.float64)
    fmt, got = run(layer, x, "CBT")
    expected = reference_transposed(x.transpose(2, 0, 1), w, b, [2], "same")
    assert fmt == "CBT"
    np.testing.assert_allclose(got, expected.transpose(1, 2, 0), atol=1e-12)


# -- learnables, properties, names ----------------------------------------------------------------
LEARNABLES = [
    (lambda: dlf.convolution1dLayer(3, 8), "CBT", (5, 2, 7), (3, 5, 8), (1, 8)),
    (lambda: dlf.convolution2dLayer(3, 16), "SSCB", (6, 6, 1, 2), (3, 3, 1, 16), (1, 1, 16)),
    (lambda: dlf.convolution3dLayer([2, 3, 1], 4), "SSSCB", (4, 4, 4, 3, 1), (2, 3, 1, 3, 4), (1, 1, 1, 4)),
    (lambda: dlf.groupedConvolution2dLayer(3, 4, 2), "SSCB", (5, 5, 6, 1), (3, 3, 3, 4, 2), (1, 1, 4, 2)),
    (
        lambda: dlf.groupedConvolution2dLayer(3, 2, "channel-wise"),
        "SSCB",
        (5, 5, 6, 1),
        (3, 3, 1, 2, 6),
        (1, 1, 2, 6),
    ),
    (lambda: dlf.transposedConv1dLayer(3, 8), "SCB", (5, 2, 1), (3, 8, 2), (1, 8)),
    (lambda: dlf.transposedConv2dLayer(3, 8), "SSCB", (5, 5, 2, 1), (3, 3, 8, 2), (1, 1, 8)),
    (lambda: dlf.transposedConv3dLayer(2, 8), "SSSCB", (3, 3, 3, 2, 1), (2, 2, 2, 8, 2), (1, 1, 1, 8)),
]


@pytest.mark.parametrize(("factory", "fmt", "sizes", "weights", "bias"), LEARNABLES)
def test_learnables_have_matlab_shapes_and_default_initializers(factory, fmt, sizes, weights, bias):
    layer = factory()
    assert layer.Weights is None and not layer.Initialized
    layer(dlf.dlarray(torch.randn(sizes), fmt))
    assert tuple(layer.Weights.shape) == weights and tuple(layer.Bias.shape) == bias
    assert layer.WeightsInitializer == "glorot" and layer.BiasInitializer == "zeros"
    assert not layer.Bias.detach().any()
    assert (layer.WeightL2Factor, layer.BiasL2Factor, layer.WeightLearnRateFactor) == (1, 0, 1)


@pytest.mark.parametrize(
    ("factory", "num_in"),
    [
        (lambda init: dlf.convolution2dLayer(3, 4, NumChannels=64, WeightsInitializer=init), 9 * 64),
        (lambda init: dlf.transposedConv2dLayer(3, 4, NumChannels=64, WeightsInitializer=init), 9 * 64),
        (
            lambda init: dlf.groupedConvolution2dLayer(
                3, 4, 2, NumChannelsPerGroup=32, WeightsInitializer=init
            ),
            9 * 32,
        ),
    ],
)
def test_he_counts_matlab_fan_in(factory, num_in):
    torch.manual_seed(0)
    std = float(factory("he").Weights.detach().std())
    assert std == pytest.approx(math.sqrt(2 / num_in), rel=0.1)


def test_glorot_bound_and_callable_initializer():
    layer = dlf.convolution2dLayer([3, 2], 64, NumChannels=32, WeightsInitializer="glorot")
    bound = math.sqrt(6 / (6 * 32 + 6 * 64))  # numIn = prod(FilterSize)*NumChannels, numOut = ...*NumFilters
    largest = float(layer.Weights.detach().abs().max())
    assert 0.95 * bound < largest <= bound
    seen = []
    layer = dlf.convolution1dLayer(
        3,
        2,
        NumChannels=4,
        BiasInitializer=lambda sz: seen.append(sz) or np.ones(sz),
        WeightsInitializer="ones",
    )
    assert seen == [(1, 2)] and layer.Bias.tolist() == [[1.0, 1.0]] and bool((layer.Weights == 1).all())


@pytest.mark.parametrize(
    ("factory", "prefix"),
    [
        (dlf.Convolution1DLayer, "conv"),
        (dlf.Convolution2DLayer, "conv"),
        (dlf.Convolution3DLayer, "conv"),
        (dlf.GroupedConvolution2DLayer, "groupconv"),
        (dlf.TransposedConvolution1DLayer, "transconv"),
        (dlf.TransposedConvolution2DLayer, "transconv"),
        (dlf.TransposedConvolution3DLayer, "transconv"),
    ],
)
def test_automatic_name_prefix(factory, prefix):
    assert factory.default_name == prefix


@pytest.mark.parametrize(
    ("layer", "mode", "size"),
    [
        (lambda: dlf.convolution2dLayer(3, 2), "manual", (0, 0, 0, 0)),
        (lambda: dlf.convolution2dLayer(3, 2, Padding=[1, 2]), "manual", (1, 1, 2, 2)),
        (lambda: dlf.convolution2dLayer(3, 2, Padding="SAME"), "same", None),
        (lambda: dlf.convolution1dLayer(3, 2, Padding="causal", DilationFactor=2), "causal", (4, 0)),
        (lambda: dlf.convolution1dLayer(3, 2, Padding=[2, 0]), "manual", (2, 0)),
    ],
)
def test_padding_mode_and_size(layer, mode, size):
    built = layer()
    assert built.PaddingMode == mode and built.PaddingSize == size


def test_properties_as_matlab_stores_them_and_config_round_trip():
    layer = dlf.convolution2dLayer(3, 8, "Stride", 2, "DilationFactor", [1, 2], "Name", "c1")
    assert (layer.FilterSize, layer.Stride, layer.DilationFactor, layer.NumFilters) == (
        (3, 3),
        (2, 2),
        (1, 2),
        8,
    )
    assert dlf.convolution1dLayer(5, 2, Stride=3).FilterSize == 5
    rebuilt = dlf.Convolution2DLayer.from_config(layer.get_config())
    assert rebuilt.get_config() == layer.get_config()
    grouped = dlf.groupedConvolution2dLayer(3, 2, "channel-wise")
    assert dlf.GroupedConvolution2DLayer.from_config(grouped.get_config()).NumGroups == "channel-wise"
    shown = [line.strip() for line in repr(layer).splitlines()]
    # MATLAB's display writes a size as a row vector, [3 3]
    assert {"FilterSize: [3 3]", "Stride: [2 2]", "DilationFactor: [1 2]", "Padding: [0 0 0 0]"} <= set(shown)


# -- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: dlf.convolution2dLayer(3, 2, Padding="full"), r'Padding must be one of "same"'),
        (lambda: dlf.convolution2dLayer(3, 2, Padding="causal"), r'Padding must be one of "same"'),
        (lambda: dlf.convolution2dLayer(3, 2, PaddingValue="zero"), r"PaddingValue must be one of"),
        (lambda: dlf.convolution2dLayer(3, 2, Stride=0), r"Stride must be a positive integer"),
        (
            lambda: dlf.convolution2dLayer([3, 3, 3], 2),
            r"FilterSize must be a positive integer or a vector of 2",
        ),
        (lambda: dlf.convolution2dLayer(3, 0), r"NumFilters"),
        (lambda: dlf.convolution2dLayer(3, 2, Padding=[1, 2, 3]), r"Padding for 2 slid dimension"),
        (
            lambda: dlf.groupedConvolution2dLayer(3, 2, "depthwise"),
            r'NumGroups must be one of "channel-wise"',
        ),
        (
            lambda: dlf.groupedConvolution2dLayer(3, 2, "channel-wise", NumChannelsPerGroup=2),
            r"one channel per group",
        ),
        (lambda: dlf.transposedConv2dLayer(3, 2, Cropping="valid"), r'Cropping must be one of "same"'),
        (
            lambda: dlf.convolution2dLayer(3, 4, Weights=np.zeros((3, 3, 2, 5))),
            r"Weights must have shape 3×3×2×4",
        ),
    ],
)
def test_bad_options_are_refused(build, message):
    with pytest.raises(DLFormatError, match=message):
        build()


@pytest.mark.parametrize(
    ("layer", "fmt", "sizes", "message"),
    [
        (
            dlf.convolution1dLayer(3, 2),
            "SSCB",
            (4, 4, 2, 1),
            r'Convolution1DLayer takes input of format "SCB", "CBT", "SCBT"',
        ),
        (
            dlf.convolution2dLayer(3, 2),
            "CBT",
            (2, 1, 5),
            r'Convolution2DLayer takes input of format "SSCB", "SCBT", "SSCBT"',
        ),
        (dlf.convolution3dLayer(2, 2), "SSCB", (4, 4, 2, 1), r'"SSSCB", "SSCBT", "SSSCBT".*got "SSCB"'),
        (
            dlf.convolution2dLayer(3, 2, Name="c"),
            "SSB",
            (4, 4, 1),
            r"Convolution2DLayer 'c' needs a dlarray with a \"C\"",
        ),
        (
            dlf.transposedConv2dLayer(3, 2),
            "SSCU",
            (4, 4, 2, 3),
            r"TransposedConvolution2DLayer takes input of format",
        ),
    ],
)
def test_unsupported_formats_name_the_layer_and_the_accepted_ones(layer, fmt, sizes, message):
    with pytest.raises(DLFormatError, match=message):
        layer(dlf.dlarray(torch.randn(sizes), fmt))


@pytest.mark.parametrize(
    ("layer", "sizes", "message"),
    [
        (
            lambda: dlf.convolution2dLayer(3, 4, Weights=np.zeros((3, 3, 2, 4))),
            (5, 5, 3, 1),
            r"NumChannels 2.*has 3 channels",
        ),
        (
            lambda: dlf.transposedConv2dLayer(3, 4, Weights=np.zeros((3, 3, 4, 2))),
            (5, 5, 3, 1),
            r"NumChannels 2.*has 3 channels",
        ),
        (
            lambda: dlf.groupedConvolution2dLayer(3, 4, 2),
            (5, 5, 3, 1),
            r"NumGroups 2.*3 channels.*divide evenly",
        ),
        (lambda: dlf.convolution2dLayer(5, 4), (3, 3, 1, 1), r"the window spans 5 elements"),
    ],
)
def test_channel_mismatch_and_too_small_inputs(layer, sizes, message):
    with pytest.raises(DLFormatError, match=message):
        layer()(dlf.dlarray(torch.randn(sizes), "SSCB"))
