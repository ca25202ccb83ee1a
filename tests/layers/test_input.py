"""The input layers (sequenceInputLayer, featureInputLayer, imageInputLayer, image3dInputLayer):
format and size checks, and each normalization against a float64 NumPy reference written from
MathWorks' definitions (imageInputLayer page, Normalization property):

- zerocenter: x - Mean;  zscore: (x - Mean) / StandardDeviation;
- rescale-zero-one: (x - Min) / (Max - Min);  rescale-symmetric: 2 (x - Min) / (Max - Min) - 1;

with each statistic one number, one per channel (1×1×c) or one per element (h×w×c).
"""

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


def test_normalization_statistics_are_required_when_data_runs_and_checked():
    with pytest.raises(
        DLFormatError,
        match=r'Normalization "zscore" but its Mean and StandardDeviation are empty',
    ):
        dlf.featureInputLayer(3, Normalization="zscore")(dlf.dlarray(torch.randn(3, 2), "CB"))
    with pytest.raises(
        DLFormatError, match=r"Mean must be a scalar or one value per channel \(3\); got an array of size 2"
    ):
        dlf.featureInputLayer(3, Mean=[1, 2])
    with pytest.raises(DLFormatError, match=r"StandardDeviation must be positive"):
        dlf.featureInputLayer(3, StandardDeviation=[1, 0, 2])
    with pytest.raises(DLFormatError, match=r"\[h c\], \[h w c\] or \[h w d c\]"):
        dlf.sequenceInputLayer((1, 2, 3, 4, 5))


# -- image input layers ----------------------------------------------------------------------------
RNG = np.random.default_rng(0)
IMAGE = RNG.uniform(0, 255, (4, 5, 3, 2))  # h × w × c × B, "SSCB"
VOLUME = RNG.uniform(0, 255, (3, 4, 2, 3, 2))  # "SSSCB"


def reference(x, normalization, mean=None, std=None, low=None, high=None):
    """MathWorks' formulas, in float64; statistics already shaped to broadcast over x."""
    if normalization == "zerocenter":
        return x - mean
    if normalization == "zscore":
        return (x - mean) / std
    if normalization == "rescale-zero-one":
        return (x - low) / (high - low)
    return 2 * (x - low) / (high - low) - 1


def statistics(kind, spatial, channels, seed):
    """(value given to the layer, the same shaped to broadcast over S..., C, B)."""
    rng = np.random.default_rng(seed)
    if kind == "all":
        value = rng.uniform(1, 50)
        return value, np.full((1,) * (len(spatial) + 2), value)
    if kind == "channel":
        value = rng.uniform(1, 50, (*([1] * len(spatial)), channels))  # MATLAB's 1×1×c
        return value, value[..., None]
    value = rng.uniform(1, 50, (*spatial, channels))  # h×w×c
    return value, value[..., None]


@pytest.mark.parametrize("kind", ["all", "channel", "element"])
@pytest.mark.parametrize("normalization", ["zerocenter", "zscore", "rescale-zero-one", "rescale-symmetric"])
@pytest.mark.parametrize(
    ("make", "x", "fmt"),
    [(dlf.imageInputLayer, IMAGE, "SSCB"), (dlf.image3dInputLayer, VOLUME, "SSSCB")],
    ids=["image", "image3d"],
)
def test_image_normalizations_match_the_documented_formulas(make, x, fmt, normalization, kind):
    spatial, channels = x.shape[:-2], x.shape[-2]
    (mean, mean_b), (std, std_b) = (statistics(kind, spatial, channels, seed) for seed in (1, 2))
    (low, low_b), (span, span_b) = (statistics(kind, spatial, channels, seed) for seed in (3, 4))
    layer = make(
        [*spatial, channels],
        Normalization=normalization,
        Mean=mean,
        StandardDeviation=std,
        Min=low,
        Max=low + span,
    )
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt))
    expected = reference(x, normalization, mean_b, std_b, low_b, low_b + span_b)
    assert dlf.dims(Y) == fmt and Y.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_the_issues_example_and_matlabs_defaults():
    layer = dlf.imageInputLayer([28, 28, 1], Normalization="zscore", Mean=0.13, StandardDeviation=0.31)
    x = RNG.uniform(0, 1, (28, 28, 1, 3))
    Y = layer(torch.from_numpy(x))  # a plain tensor is read as "SSCB"
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), (x - 0.13) / 0.31, rtol=1e-12)
    assert tuple(layer.Mean.shape) == (1, 1)  # a MATLAB scalar
    default = dlf.imageInputLayer([28, 28, 3])
    assert (default.Normalization, default.NormalizationDimension) == ("zerocenter", "auto")
    assert default.SplitComplexInputs is False and default.Mean is None
    assert (default.Name, default.default_name, default.matlab_type) == ("", "imageinput", "Image Input")
    assert default.InputFormat == "SSCB" and default.InputSize == (28, 28, 3)
    assert dlf.imageInputLayer([8, 9]).InputSize == (8, 9, 1)  # grayscale [h w]
    volume = dlf.image3dInputLayer([4, 5, 6, 2], Normalization="none")
    assert (volume.InputFormat, volume.default_name, volume.matlab_type) == (
        "SSSCB",
        "image3dinput",
        "3-D Image Input",
    )
    assert dlf.featureInputLayer(3).Normalization == "none"  # only the image layers zero-center


def test_integer_images_come_out_as_the_default_float():
    layer = dlf.imageInputLayer([2, 2, 1], Normalization="rescale-zero-one", Min=0, Max=255)
    Y = layer(torch.tensor([[0, 51], [102, 255]], dtype=torch.uint8).reshape(2, 2, 1, 1))
    assert Y.dtype == torch.float32
    np.testing.assert_allclose(dlf.extractdata(Y).flatten().numpy(), [0, 0.2, 0.4, 1.0], rtol=1e-6)
    assert (
        dlf.imageInputLayer([2, 2, 1], Normalization="none")(torch.ones(2, 2, 1, 1, dtype=torch.int32)).dtype
        == torch.float32
    )


def test_a_callable_normalization_gets_the_formatted_data():
    seen = []

    def halve(X):
        seen.append(dlf.dims(X))
        return X / 2

    layer = dlf.imageInputLayer([4, 5, 3], Normalization=halve)
    Y = layer(dlf.dlarray(torch.from_numpy(IMAGE), "SSCB"))
    assert seen == ["SSCB"] and repr(layer).count("@halve") == 1
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), IMAGE / 2)
    with pytest.raises(
        DLFormatError, match=r"Normalization function must return data of the input's size 4×5×3×2"
    ):
        dlf.imageInputLayer([4, 5, 3], Normalization=lambda X: X[:, :, :1])(torch.from_numpy(IMAGE))


@pytest.mark.parametrize(
    ("make", "x"),
    [
        (lambda **kw: dlf.featureInputLayer(3, **kw), RNG.uniform(0, 9, (3, 4))),
        (lambda **kw: dlf.sequenceInputLayer(3, **kw), RNG.uniform(0, 9, (3, 2, 5))),
        (lambda **kw: dlf.sequenceInputLayer([4, 5, 3], **kw), RNG.uniform(0, 9, (4, 5, 3, 2, 2))),
    ],
    ids=["feature", "sequence", "image-sequence"],
)
@pytest.mark.parametrize("normalization", ["rescale-zero-one", "rescale-symmetric"])
def test_feature_and_sequence_layers_rescale_through_the_same_code(make, x, normalization):
    spatial = x.shape[:-3] if x.ndim == 5 else ()
    low = np.array([0.5, -1.0, 2.0])
    high = np.array([9.0, 10.0, 8.0])
    layer = make(Normalization=normalization, Min=low, Max=high)
    Y = layer(torch.from_numpy(x))
    shape = [1] * x.ndim
    shape[len(spatial)] = 3
    expected = reference(x, normalization, low=low.reshape(shape), high=high.reshape(shape))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_normalization_dimension_fixes_the_shape_of_the_statistics():
    per_channel = np.array([1.0, 2.0, 3.0]).reshape(1, 1, 3)
    dlf.imageInputLayer([4, 5, 3], NormalizationDimension="channel", Mean=per_channel)
    dlf.imageInputLayer([4, 5, 3], NormalizationDimension="element", Mean=np.ones((4, 5, 3)))
    dlf.imageInputLayer([4, 5, 3], NormalizationDimension="all", Mean=2.0)


IMAGE_ERRORS = [
    (
        lambda: dlf.imageInputLayer([4, 5, 3], NormalizationDimension="all", Mean=np.ones((1, 1, 3))),
        r'ImageInputLayer Mean must be a scalar for NormalizationDimension "all"; got an array of size 1×1×3',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], NormalizationDimension="channel", Mean=np.ones((4, 5, 3))),
        r'Mean must be one value per channel \(1×1×3\) for NormalizationDimension "channel"',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], Max=np.ones((4, 4, 3))),
        r"Max must be a scalar or one value per channel \(1×1×3\) or one value per element \(4×5×3\); "
        r"got an array of size 4×4×3",
    ),
    (
        lambda: dlf.image3dInputLayer([4, 5, 6, 2], StandardDeviation=np.ones((1, 1, 1, 2)) * -1),
        "Image3DInputLayer StandardDeviation must be positive",
    ),
    (lambda: dlf.imageInputLayer([4, 5, 3], Min=2, Max=2), "Max must be greater than Min everywhere"),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], NormalizationDimension="element", Mean=1.0),
        r'one value per element \(4×5×3\) for NormalizationDimension "element"',
    ),
    (
        lambda: dlf.featureInputLayer(3, NormalizationDimension="element"),
        r'NormalizationDimension must be one of "auto", "channel", "all"',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3, 2]),
        r"InputSize must be \[h w c\] \(or \[h w\] for one channel\); got 4 sizes",
    ),
    (lambda: dlf.image3dInputLayer([4, 5, 3]), r"InputSize must be \[h w d c\]; got 3 sizes"),
    (lambda: dlf.imageInputLayer(28), "InputSize must be a row vector of sizes; got 28"),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], Normalization="minmax"),
        r'Normalization must be one of "none", "zerocenter"',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], SplitComplexInputs=True),
        "SplitComplexInputs=true .* is not supported",
    ),
    (lambda: dlf.imageInputLayer([4, 5, 3], Mean="a"), "Mean must be a number or a numeric array"),
    (
        lambda: dlf.imageInputLayer([4, 5, 3])(torch.ones(4, 5, 3, 2)),
        r'ImageInputLayer has Normalization "zerocenter" but its Mean is empty: .*Normalization="none"',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], Normalization="rescale-symmetric", Min=0)(
            torch.ones(4, 5, 3, 2)
        ),
        r'Normalization "rescale-symmetric" but its Max is empty',
    ),
    (
        lambda: dlf.imageInputLayer([4, 5, 3], Normalization="none")(
            dlf.dlarray(torch.ones(4, 5, 3, 2, 2), "SSCBT")
        ),
        r'needs data of format "SSCB"; got "SSCBT"',
    ),
    (
        lambda: dlf.image3dInputLayer([4, 5, 6, 3], Normalization="none")(torch.ones(4, 5, 6, 2, 2)),
        r"needs 4×5×6×3 \(spatial × spatial × spatial × channels\) per element; the data has 4×5×6×2",
    ),
]


@pytest.mark.parametrize(("call", "message"), IMAGE_ERRORS)
def test_image_input_errors_name_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


# -- empty statistics: accepted when the layer is made, an error when data runs -----------------
# every input layer kind, with its per-channel size as the error names it
INPUT_KINDS = [
    (lambda **kw: dlf.imageInputLayer([4, 5, 3], **kw), (4, 5, 3, 2), "ImageInputLayer", "1×1×3"),
    (lambda **kw: dlf.image3dInputLayer([3, 4, 2, 3], **kw), (3, 4, 2, 3, 2), "Image3DInputLayer", "1×1×1×3"),
    (lambda **kw: dlf.featureInputLayer(3, **kw), (3, 2), "FeatureInputLayer", "3 values"),
    (lambda **kw: dlf.sequenceInputLayer(3, **kw), (3, 2, 4), "SequenceInputLayer", "3 values"),
    (lambda **kw: dlf.sequenceInputLayer([4, 5, 3], **kw), (4, 5, 3, 2, 4), "SequenceInputLayer", "1×1×3"),
]
KIND_IDS = ["image", "image3d", "feature", "sequence", "image-sequence"]
NEEDS = {
    "zerocenter": "Mean is",
    "zscore": "Mean and StandardDeviation are",
    "rescale-symmetric": "Min and Max are",
    "rescale-zero-one": "Min and Max are",
}


@pytest.mark.parametrize("normalization", list(NEEDS))
@pytest.mark.parametrize(("make", "shape", "cls", "per_channel"), INPUT_KINDS, ids=KIND_IDS)
def test_empty_statistics_are_an_error_naming_layer_statistics_and_both_ways(
    make, shape, cls, per_channel, normalization
):
    layer = make(Normalization=normalization, Name="in")  # MATLAB builds such layers: no error
    missing = dlf.layers.input.STATISTICS_OF[normalization]
    assert all(getattr(layer, name) is None for name in missing)
    given = ", ".join(f"{name}=..." for name in missing)
    message = (
        f"{cls} 'in' has Normalization \"{normalization}\" but its {NEEDS[normalization]} empty: "
        f".* give (it|them) to the layer \\({given}: (each )?a scalar or one value per channel, "
        f"{per_channel}\\), or train the network first with trainnet or trainNetwork, which compute "
        '(it|them) from the training data \\(ResetInputNormalization\\); Normalization="none"'
    )
    for training in (False, True):  # predict and forward alike
        with pytest.raises(DLFormatError, match=message):
            layer(torch.ones(shape), training=training)


def test_only_the_missing_statistic_is_named():
    layer = dlf.featureInputLayer(3, Normalization="zscore", Mean=[1.0, 2.0, 3.0])
    with pytest.raises(
        DLFormatError, match=r"but its StandardDeviation is empty: .*\(StandardDeviation=\.\.\.: a"
    ):
        layer(torch.ones(3, 2))


@pytest.mark.parametrize(("make", "shape", "cls", "per_channel"), INPUT_KINDS, ids=KIND_IDS)
def test_a_run_for_sizes_only_passes_the_data_on_unnormalized(make, shape, cls, per_channel):
    layer = make(Normalization="zscore")
    x = torch.from_numpy(RNG.uniform(0, 9, shape))
    with dlf.layers.input.sizes_only():
        Y = layer(x)
    assert torch.equal(dlf.stripdims(Y), x) and dlf.dims(Y) == layer.InputFormat
    with pytest.raises(DLFormatError, match="Mean and StandardDeviation are empty"):
        layer(x)  # only within


def test_a_run_for_sizes_only_does_not_reach_other_threads():
    import threading

    layer = dlf.imageInputLayer([4, 5, 3])
    seen: list[BaseException] = []

    def predict_elsewhere():
        try:
            layer(torch.ones(4, 5, 3, 1))
        except DLFormatError as error:
            seen.append(error)

    with dlf.layers.input.sizes_only():
        thread = threading.Thread(target=predict_elsewhere)
        thread.start()
        thread.join()
    assert len(seen) == 1 and "Mean is empty" in str(seen[0])


def test_given_statistics_are_used_in_a_run_for_sizes_too():
    layer = dlf.featureInputLayer(2, Normalization="zerocenter", Mean=[1.0, 2.0])
    with dlf.layers.input.sizes_only():
        Y = layer(torch.tensor([[1.0], [2.0]], dtype=torch.float64))
    assert dlf.stripdims(Y).flatten().tolist() == [0.0, 0.0]
