"""MATLAB's pooling layers against float64 NumPy references written from MATLAB's definitions: the
maximum or average of each pooling region, "same" padding with the odd element after the data,
PaddingValue 0 (padding counts as zeros) or "mean" (only input elements count); global pooling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

from .test_convolution import pad_edges


def reference_pool(x, size, strides, padding, statistic, mean_padding=False):
    """Each output is the statistic of a ``size`` region of the padded input (slid dims first)."""
    d = len(size)
    edges = pad_edges(x.shape[:d], size, strides, [1] * d, padding)
    widths = [*edges, *[(0, 0)] * (x.ndim - d)]
    fill = -np.inf if statistic == "max" else 0.0
    xp = np.pad(x, widths, constant_values=fill)
    real = np.pad(np.ones(x.shape[:d]), edges)  # 1 where an input element is
    outs = [(xp.shape[i] - size[i]) // strides[i] + 1 for i in range(d)]
    result = np.zeros((*outs, *x.shape[d:]))
    for position in itertools.product(*(range(o) for o in outs)):
        window = tuple(slice(o * s, o * s + k) for o, s, k in zip(position, strides, size, strict=True))
        region = xp[window].reshape(-1, *x.shape[d:])
        if statistic == "max":
            result[position] = region.max(axis=0)
        else:
            count = real[window].sum() if mean_padding else np.prod(size)
            result[position] = region.sum(axis=0) / count
    return result


def run(layer, x, fmt):
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt))
    return dlf.dims(Y), dlf.extractdata(Y).numpy()


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


POOLS = [
    (2, (2, 2), 1, 0),  # MATLAB's default stride 1
    (2, (3, 2), 2, "same"),  # odd padding: extra row/column after the data
    (2, 2, (1, 2), [1, 0, 0, 1]),
    (2, 3, 2, [1, 2]),
    (1, 3, 2, "same"),
    (1, 2, 1, [1, 0]),
    (3, 2, 2, "same"),
    (3, (2, 1, 2), 1, [[1, 0, 1], [0, 0, 0]]),
]


@pytest.mark.parametrize("statistic", ["max", "average"])
@pytest.mark.parametrize(("dims", "pool_size", "stride", "padding"), POOLS)
def test_pooling_matches_reference(dims, pool_size, stride, padding, statistic):
    sizes = (7, 6, 5)[:dims]
    x = data((*sizes, 3, 2), seed=dims)
    constructor = getattr(dlf, f"{statistic}Pooling{dims}dLayer")
    layer = constructor(pool_size, Stride=stride, Padding=padding)
    fmt, got = run(layer, x, "S" * dims + "CB")
    size = list(np.broadcast_to(pool_size, (dims,)))
    if isinstance(padding, list) and isinstance(padding[0], list):
        padding = [amount for pair in zip(*padding, strict=True) for amount in pair]
    expected = reference_pool(x, size, list(np.broadcast_to(stride, (dims,))), padding, statistic)
    assert fmt == "S" * dims + "CB"
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize(("dims", "padding"), [(1, "same"), (2, "same"), (2, [1, 1, 0, 1]), (3, 1)])
def test_average_pooling_mean_padding_counts_only_input_elements(dims, padding):
    x = data((*(5, 4, 3)[:dims], 2, 1), seed=4)
    layer = getattr(dlf, f"averagePooling{dims}dLayer")(2, Padding=padding, PaddingValue="mean", Stride=2)
    _, got = run(layer, x, "S" * dims + "CB")
    size = [2] * dims
    expected = reference_pool(x, size, [2] * dims, padding, "average", mean_padding=True)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_pooling_1d_over_time_and_2d_over_space_and_time():
    x = data((3, 2, 9), seed=5)  # C B T
    fmt, got = run(dlf.maxPooling1dLayer(3, Stride=2, Padding="same"), x, "CBT")
    expected = reference_pool(x.transpose(2, 0, 1), [3], [2], "same", "max")
    assert fmt == "CBT"
    np.testing.assert_allclose(got, expected.transpose(1, 2, 0))
    x = data((6, 3, 2, 5), seed=6)  # S C B T: the 2-D region spans S and T
    fmt, got = run(dlf.averagePooling2dLayer([2, 3]), x, "SCBT")
    expected = reference_pool(x.transpose(0, 3, 1, 2), [2, 3], [1, 1], 0, "average")
    assert fmt == "SCBT"
    np.testing.assert_allclose(got, expected.transpose(0, 2, 3, 1), atol=1e-12)


GLOBALS = [
    (1, "SCB", (7, 3, 2), lambda a, f: f(a, axis=0, keepdims=True), "SCB"),
    (1, "CBT", (3, 2, 7), lambda a, f: f(a, axis=2), "CB"),  # a sequence becomes one vector
    (1, "SCBT", (7, 3, 2, 4), lambda a, f: f(a, axis=0, keepdims=True), "SCBT"),
    (2, "SSCB", (5, 6, 3, 2), lambda a, f: f(a, axis=(0, 1), keepdims=True), "SSCB"),
    (2, "SSCBT", (5, 6, 3, 2, 4), lambda a, f: f(a, axis=(0, 1), keepdims=True), "SSCBT"),
    (3, "SSSCB", (4, 5, 6, 3, 2), lambda a, f: f(a, axis=(0, 1, 2), keepdims=True), "SSSCB"),
]


@pytest.mark.parametrize("statistic", ["Max", "Average"])
@pytest.mark.parametrize(("dims", "fmt", "sizes", "reduce", "out"), GLOBALS)
def test_global_pooling(dims, fmt, sizes, reduce, out, statistic):
    x = data(sizes, seed=7)
    layer = getattr(dlf, f"global{statistic}Pooling{dims}dLayer")()
    got_fmt, got = run(layer, x, fmt)
    expected = reduce(x, np.max if statistic == "Max" else np.mean)
    assert got_fmt == out
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize(
    ("factory", "prefix"),
    [
        (dlf.MaxPooling1DLayer, "maxpool"),
        (dlf.MaxPooling2DLayer, "maxpool"),
        (dlf.MaxPooling3DLayer, "maxpool"),
        (dlf.AveragePooling1DLayer, "avgpool"),
        (dlf.AveragePooling2DLayer, "avgpool"),
        (dlf.AveragePooling3DLayer, "avgpool"),
        (dlf.GlobalMaxPooling1DLayer, "gmpool"),
        (dlf.GlobalMaxPooling2DLayer, "gmpool"),
        (dlf.GlobalMaxPooling3DLayer, "gmpool"),
        (dlf.GlobalAveragePooling1DLayer, "gapool"),
        (dlf.GlobalAveragePooling2DLayer, "gapool"),
        (dlf.GlobalAveragePooling3DLayer, "gapool"),
    ],
)
def test_automatic_name_prefix(factory, prefix):
    assert factory.default_name == prefix


def test_properties_as_matlab_stores_them():
    layer = dlf.maxPooling2dLayer(3, "Stride", 2, "Padding", [1, 1, 0, 1], "Name", "mp")
    assert (layer.PoolSize, layer.Stride, layer.PaddingMode, layer.PaddingSize) == (
        (3, 3),
        (2, 2),
        "manual",
        (1, 1, 0, 1),
    )
    assert layer.HasUnpoolingOutputs is False and layer.Name == "mp"
    assert dlf.maxPooling1dLayer(2).Stride == 1 and dlf.averagePooling2dLayer(2).PaddingValue == 0
    assert dlf.averagePooling3dLayer(2, Padding="same").PaddingMode == "same"
    rebuilt = dlf.MaxPooling2DLayer.from_config(layer.get_config())
    assert rebuilt.get_config() == layer.get_config()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: dlf.maxPooling2dLayer(2, Padding="valid"), r'Padding must be one of "same"'),
        (lambda: dlf.maxPooling2dLayer(2, Padding=2), r"must be smaller than PoolSize \[2, 2\]"),
        (
            lambda: dlf.maxPooling2dLayer(2, HasUnpoolingOutputs=2),
            r"HasUnpoolingOutputs must be",
        ),
        (lambda: dlf.averagePooling2dLayer(2, PaddingValue=1), r'PaddingValue must be 0 or "mean"'),
        (lambda: dlf.averagePooling1dLayer(2, PaddingValue="max"), r'PaddingValue must be one of "mean"'),
        (lambda: dlf.maxPooling3dLayer([2, 2]), r"PoolSize must be a positive integer or a vector of 3"),
        (lambda: dlf.averagePooling2dLayer(2, Stride=-1), r"Stride must be a positive integer"),
    ],
)
def test_bad_options_are_refused(build, message):
    with pytest.raises(DLFormatError, match=message):
        build()


@pytest.mark.parametrize(
    ("layer", "fmt", "sizes", "message"),
    [
        (
            dlf.maxPooling2dLayer(2),
            "CBT",
            (3, 2, 5),
            r'MaxPooling2DLayer takes input of format "SSCB", "SCBT"',
        ),
        (
            dlf.averagePooling1dLayer(2),
            "SSCB",
            (4, 4, 2, 1),
            r'AveragePooling1DLayer takes input of format "SCB"',
        ),
        (dlf.globalAveragePooling2dLayer(), "SCBT", (4, 2, 3, 5), r'takes input of format "SSCB", "SSCBT"'),
        (dlf.globalMaxPooling1dLayer(Name="g"), "SB", (4, 3), r"GlobalMaxPooling1DLayer 'g' needs a dlarray"),
    ],
)
def test_unsupported_formats_name_the_layer_and_the_accepted_ones(layer, fmt, sizes, message):
    with pytest.raises(DLFormatError, match=message):
        layer(dlf.dlarray(torch.randn(sizes), fmt))


def test_sequence_to_label_network_of_matlabs_example_page():
    """globalAveragePooling1dLayer's page: sequenceInputLayer → convolution1dLayer → reluLayer →
    globalAveragePooling1dLayer → fullyConnectedLayer → softmaxLayer gives one label per sequence."""
    layers = [
        dlf.sequenceInputLayer(12, MinLength=20),
        dlf.convolution1dLayer(11, 96),
        dlf.reluLayer(),
        dlf.globalAveragePooling1dLayer(),
        dlf.fullyConnectedLayer(10),
        dlf.softmaxLayer(),
    ]
    net = dlf.initialize(dlf.dlnetwork(layers))
    assert [layer.Name for layer in net.Layers] == [
        "sequenceinput",
        "conv",
        "relu",
        "gapool",
        "fc",
        "softmax",
    ]
    Y = net(dlf.dlarray(torch.randn(12, 3, 20), "CBT"))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (10, 3)
