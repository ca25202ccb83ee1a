"""layerNormalizationLayer against the float64 formula, per OperationDimension."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat import functional as F


def matlab_size(fmt: str, channels: int) -> tuple[int, ...]:
    """A per-channel value's size for input of format ``fmt`` (MathWorks' layer pages: C×1 for
    feature and sequence input, 1×C, 1×1×C, 1×1×1×C for 1-D, 2-D, 3-D images)."""
    spatial = fmt.count("S")
    return (channels, 1) if spatial == 0 else (*(1,) * spatial, channels)


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
    assert layer.NumChannels == shape[channel]
    assert tuple(layer.Scale.shape) == tuple(layer.Offset.shape) == matlab_size(fmt, shape[channel])
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
    with pytest.raises(
        DLFormatError, match=r'has NumChannels 4; the "CB" input of size 3×\d+ has 3 channels'
    ):
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


# -- batch, group, instance and cross-channel normalization ------------------------------------
# NumPy references in float64 from MathWorks' definitions (each layer's page and its function's:
# batchnorm, groupnorm, instancenorm, crosschannelnorm), independent of the code under test.


def per_channel(values: np.ndarray, fmt: str) -> np.ndarray:
    """One value per channel, shaped to broadcast against data of format ``fmt``."""
    shape = [1] * len(fmt)
    shape[fmt.index("C")] = -1
    return values.reshape(shape)


def normalized(x: np.ndarray, axes: tuple[int, ...], epsilon: float) -> np.ndarray:
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon)


def not_channel(fmt: str, keep: str = "C") -> tuple[int, ...]:
    return tuple(index for index, label in enumerate(fmt) if label not in keep)


def affine(fmt: str, channels: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    return generator.normal(size=(channels, 1)), generator.normal(size=(channels, 1))


@pytest.mark.parametrize(
    ("fmt", "shape"), [("CB", (3, 8)), ("SSCB", (4, 5, 3, 6)), ("CBT", (3, 4, 5)), ("SCBT", (4, 3, 2, 5))]
)
def test_batch_normalization_training_and_running_statistics(fmt, shape):
    channels = shape[fmt.index("C")]
    offset, scale = affine(fmt, channels)
    layer = dlf.batchNormalizationLayer(
        Offset=offset, Scale=scale, MeanDecay=0.3, VarianceDecay=0.2, Epsilon=1e-3, dtype=torch.float64
    )
    generator = np.random.default_rng(0)
    trained_mean, trained_variance = np.zeros(channels), np.ones(channels)
    for _ in range(3):  # three training calls: the running statistics move each time
        x = generator.normal(2.0, 3.0, size=shape)
        Y = layer(dlf.dlarray(torch.from_numpy(x), fmt), training=True)
        axes = not_channel(fmt)
        expected = normalized(x, axes, 1e-3) * per_channel(scale, fmt) + per_channel(offset, fmt)
        np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)
        batch_mean = x.mean(axis=axes)
        batch_variance = ((x - per_channel(batch_mean, fmt)) ** 2).mean(axis=axes)  # biased, as normalized
        trained_mean = (
            0.3 * batch_mean + 0.7 * trained_mean
        )  # MathWorks: decay · batch + (1 − decay) · trained
        trained_variance = 0.2 * batch_variance + 0.8 * trained_variance
        size = matlab_size(fmt, channels)
        np.testing.assert_allclose(layer.TrainedMean.numpy(), trained_mean.reshape(size), rtol=1e-12)
        np.testing.assert_allclose(layer.TrainedVariance.numpy(), trained_variance.reshape(size), rtol=1e-12)
    assert dlf.dims(Y) == fmt and tuple(layer.TrainedMean.shape) == matlab_size(fmt, channels)


@pytest.mark.parametrize(("fmt", "shape"), [("CB", (3, 8)), ("SSCB", (4, 5, 3, 6)), ("SCBT", (4, 3, 2, 5))])
def test_batch_normalization_inference_uses_the_trained_statistics(fmt, shape):
    channels = shape[fmt.index("C")]
    offset, scale = affine(fmt, channels)
    generator = np.random.default_rng(1)
    mean, variance = generator.normal(size=(channels, 1)), generator.uniform(0.5, 2.0, size=(1, 1, channels))
    layer = dlf.batchNormalizationLayer(
        TrainedMean=mean, TrainedVariance=variance, Offset=offset, Scale=scale, dtype=torch.float64
    )
    # as given until the input is known (MATLAB sizes it when the network is initialized)
    assert layer.NumChannels == channels and tuple(layer.TrainedVariance.shape) == (1, 1, channels)
    x = generator.normal(size=shape)
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt), training=False)
    expected = (x - per_channel(mean, fmt)) / np.sqrt(per_channel(variance, fmt) + 1e-5) * per_channel(
        scale, fmt
    ) + per_channel(offset, fmt)
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    # inference leaves the statistics, now in the input's size
    np.testing.assert_array_equal(layer.TrainedMean.numpy(), mean.reshape(matlab_size(fmt, channels)))


def test_batch_normalization_defaults_match_matlab():
    layer = dlf.batchNormalizationLayer()
    assert (layer.MeanDecay, layer.VarianceDecay, layer.Epsilon, layer.NumChannels) == (
        0.1,
        0.1,
        1e-5,
        "auto",
    )
    assert (layer.OffsetInitializer, layer.ScaleInitializer) == ("zeros", "ones")
    assert layer.TrainedMean is None and layer.State == ("TrainedMean", "TrainedVariance")
    assert layer.Learnables == ("Offset", "Scale") and layer.state_updates_persist
    layer(dlf.dlarray(torch.randn(4, 2), "CB"), training=False)
    torch.testing.assert_close(layer.TrainedMean, torch.zeros(4, 1))
    torch.testing.assert_close(layer.TrainedVariance, torch.ones(4, 1))
    names = [
        dlf.batchNormalizationLayer(),
        dlf.groupNormalizationLayer(1),
        dlf.instanceNormalizationLayer(),
        dlf.crossChannelNormalizationLayer(3),
    ]
    assert [layer.default_name for layer in names] == ["batchnorm", "groupnorm", "instancenorm", "crossnorm"]


@pytest.mark.parametrize(
    ("groups", "fmt", "shape", "count"),
    [
        (2, "SSCB", (3, 4, 6, 2), 2),
        (3, "CBT", (6, 2, 5), 3),
        ("all-channels", "SCB", (5, 4, 3), 1),
        ("channel-wise", "SSCB", (3, 4, 6, 2), 6),
        ("All-Channels", "CB", (4, 3), 1),
    ],
)
def test_group_normalization_matches_the_formula(groups, fmt, shape, count):
    channels = shape[fmt.index("C")]
    offset, scale = affine(fmt, channels)
    layer = dlf.groupNormalizationLayer(groups, Offset=offset, Scale=scale, Epsilon=1e-4, dtype=torch.float64)
    x = np.random.default_rng(2).normal(1.0, 2.0, size=shape)
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt))
    # split C into (group, channel within group); each group of each observation has one mean
    channel = fmt.index("C")
    grouped = x.reshape((*shape[:channel], count, channels // count, *shape[channel + 1 :]))
    split = fmt[:channel] + "GC" + fmt[channel + 1 :]
    flat = normalized(grouped, not_channel(split, "GB"), 1e-4).reshape(shape)
    expected = flat * per_channel(scale, fmt) + per_channel(offset, fmt)
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "shape"), [("SSCB", (4, 5, 3, 2)), ("SCBT", (4, 3, 2, 5)), ("CBT", (3, 2, 6))]
)
def test_instance_normalization_matches_the_formula(fmt, shape):
    channels = shape[fmt.index("C")]
    offset, scale = affine(fmt, channels)
    layer = dlf.instanceNormalizationLayer(Offset=offset, Scale=scale, dtype=torch.float64)
    x = np.random.default_rng(4).normal(size=shape)
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt))
    expected = normalized(x, not_channel(fmt, "CB"), 1e-5) * per_channel(scale, fmt) + per_channel(
        offset, fmt
    )
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def cross_channel_reference(x, channel, window, alpha, beta, k):
    """MathWorks: y = x / (K + α·ss/w)^β, ss over the floor((w−1)/2) channels before and the
    floor(w/2) after (fewer at the ends)."""
    x = np.moveaxis(x, channel, 0)
    y = np.empty_like(x)
    for c in range(x.shape[0]):
        low, high = max(0, c - (window - 1) // 2), min(x.shape[0], c + window // 2 + 1)
        ss = (x[low:high] ** 2).sum(axis=0)
        y[c] = x[c] / (k + alpha * ss / window) ** beta
    return np.moveaxis(y, 0, channel)


@pytest.mark.parametrize(
    ("window", "options"),
    [(5, {}), (4, {"Alpha": 0.5, "Beta": 0.6, "K": 1.5}), (1, {"K": 1}), (2, {"Alpha": 1.0}), (16, {})],
)
def test_cross_channel_normalization_matches_the_formula(window, options):
    layer = dlf.crossChannelNormalizationLayer(window, **options)
    x = np.random.default_rng(5).normal(size=(3, 4, 7, 2)) * 3
    Y = layer(dlf.dlarray(torch.from_numpy(x), "SSCB"))
    expected = cross_channel_reference(
        x, 2, window, options.get("Alpha", 1e-4), options.get("Beta", 0.75), options.get("K", 2.0)
    )
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: dlf.batchNormalizationLayer(MeanDecay=1.5),
            r"MeanDecay must be a number in \[0, 1\]; got 1\.5",
        ),
        (
            lambda: dlf.batchNormalizationLayer(VarianceDecay=-0.1),
            r"VarianceDecay must be a number in \[0, 1\]",
        ),
        (lambda: dlf.batchNormalizationLayer(Epsilon=0), r"Epsilon must be a positive number; got 0"),
        (
            lambda: dlf.batchNormalizationLayer(NumChannels=3, TrainedMean=torch.zeros(4, 1)),
            r"TrainedMean must have size 3×1, 1×3, 1×1×3 or 1×1×1×3 \(one value per channel: .*\); got 4×1",
        ),
        (
            lambda: dlf.batchNormalizationLayer(TrainedMean=torch.zeros(2, 1), Offset=torch.zeros(3, 1)),
            r"TrainedMean must have size 3×1, 1×3, 1×1×3 or 1×1×1×3 \(.*\); got 2×1",
        ),
        (
            lambda: dlf.groupNormalizationLayer(4, NumChannels=6),
            r"NumGroups \(4\) must divide NumChannels \(6\)",
        ),
        (
            lambda: dlf.groupNormalizationLayer("some"),
            r'NumGroups must be one of "all-channels", "channel-wise"',
        ),
        (lambda: dlf.groupNormalizationLayer(0), r"NumGroups must be a positive integer; got 0"),
        (lambda: dlf.groupNormalizationLayer(), r"missing a required argument: 'NumGroups'"),
        (
            lambda: dlf.crossChannelNormalizationLayer(17),
            r"WindowChannelSize must be a positive integer at most 16",
        ),
        (
            lambda: dlf.crossChannelNormalizationLayer(2.5),
            r"WindowChannelSize must be a positive integer; got 2\.5",
        ),
        (lambda: dlf.crossChannelNormalizationLayer(3, Beta="x"), r"Beta must be a finite real scalar"),
    ],
)
def test_construction_errors(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()


@pytest.mark.parametrize(
    ("layer", "X", "message"),
    [
        (
            dlf.batchNormalizationLayer(NumChannels=3),
            dlf.dlarray(torch.ones(4, 2), "CB"),
            r"NumChannels 3.*has 4 channels",
        ),
        (dlf.groupNormalizationLayer(4), dlf.dlarray(torch.ones(6, 2), "CB"), r"numGroups \(4\) must divide"),
        (
            dlf.instanceNormalizationLayer(),
            dlf.dlarray(torch.ones(4, 2), "SB"),
            r'needs data with a "C" dimension|"C"',
        ),
        (dlf.crossChannelNormalizationLayer(3), dlf.dlarray(torch.ones(4, 2), "SB"), r'"C"'),
    ],
)
def test_input_errors(layer, X, message):
    with pytest.raises(DLFormatError, match=message):
        layer(X)


def test_batch_normalization_state_keeps_its_dtype_and_takes_matlab_vector_shapes():
    layer = dlf.batchNormalizationLayer(NumChannels=3)
    layer(dlf.dlarray(torch.randn(3, 5, dtype=torch.float64), "CB"), training=True)  # double data
    assert layer.TrainedMean.dtype == torch.float32
    layer.TrainedVariance = np.full((1, 1, 3), 2.0)  # MATLAB's 1×1×NumChannels for image data
    # in the size of the layer's ("CB": feature) input, NumChannels×1
    assert tuple(layer.TrainedVariance.shape) == (3, 1) and layer.TrainedVariance.dtype == torch.float32
    with pytest.raises(DLFormatError, match=r"TrainedVariance must have size 3×1, 1×3, .*; got 2×2"):
        layer.TrainedVariance = np.ones((2, 2))


def test_a_state_value_of_the_right_count_but_not_a_vector_is_refused():
    layer = dlf.batchNormalizationLayer(NumChannels=4)
    with pytest.raises(DLFormatError, match=r"TrainedMean must have size 4×1, 1×4, .*; got 2×2"):
        layer.TrainedMean = torch.ones(2, 2)


@pytest.mark.parametrize(
    ("data_dtype", "shape", "layout"),
    [
        (torch.float32, (5, 4, 3, 6), (3, 2, 0, 1)),  # the layer's own path: batch-first memory ("BCSS")
        (torch.float32, (5, 4, 3, 6), None),  # the layer's own path: column-major "SSCB" memory
        (torch.float64, (5, 4, 3, 6), (3, 2, 0, 1)),  # double data into a single layer: batchnorm's path
        (torch.float32, (1, 1, 3, 1), None),  # one value per channel: batchnorm's by-hand path
    ],
)
def test_batch_normalization_layer_path_equals_batchnorm(data_dtype, shape, layout):
    """The layer's call (its own fast path where it applies) gives what F.batchnorm gives: the
    same outputs, running statistics and gradients, in training and in inference."""
    generator = torch.Generator().manual_seed(4)
    layer = dlf.batchNormalizationLayer(
        NumChannels=3, MeanDecay=0.3, VarianceDecay=0.2, Epsilon=1e-3, ScaleInitializer="narrow-normal"
    )
    layer.Offset = torch.randn(3, 1, generator=generator)
    layer.TrainedMean, layer.TrainedVariance = torch.randn(3, 1, generator=generator), torch.rand(3, 1) + 0.5
    memory = shape if layout is None else tuple(shape[index] for index in layout)
    stored = torch.randn(memory, generator=generator, dtype=data_dtype)
    x = (
        stored if layout is None else stored.permute(tuple(layout.index(i) for i in range(4)))
    ).requires_grad_()
    X = dlf.dlarray(x, "SSCB")
    mean, variance = layer.TrainedMean.clone(), layer.TrainedVariance.clone()
    weight = torch.randn(shape, generator=generator, dtype=data_dtype)

    for training in (True, False):
        Y = layer(X, training=training)
        if training:
            expected, new_mean, new_variance = F.batchnorm(
                X, layer.Offset, layer.Scale, mean, variance, Epsilon=1e-3, MeanDecay=0.3, VarianceDecay=0.2,
                ReturnStatistics=True,
            )  # fmt: skip
            size = layer.TrainedMean.shape  # 1×1×3: the "SSCB" input's size
            torch.testing.assert_close(
                layer.TrainedMean, dlf.extractdata(new_mean).float().reshape(size), rtol=0, atol=0
            )
            torch.testing.assert_close(
                layer.TrainedVariance, dlf.extractdata(new_variance).float().reshape(size), rtol=0, atol=0
            )
        else:
            expected = F.batchnorm(
                X, layer.Offset, layer.Scale, layer.TrainedMean, layer.TrainedVariance, Epsilon=1e-3
            )
        assert dlf.dims(Y) == "SSCB" and Y.dtype == expected.dtype
        torch.testing.assert_close(dlf.extractdata(Y), dlf.extractdata(expected), rtol=0, atol=0)
        ours = torch.autograd.grad((Y._data * weight).sum(), [x, layer.Offset, layer.Scale])
        theirs = torch.autograd.grad((expected._data * weight).sum(), [x, layer.Offset, layer.Scale])
        for got, want in zip(ours, theirs, strict=True):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
