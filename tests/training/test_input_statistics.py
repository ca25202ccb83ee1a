"""ResetInputNormalization: the input layer's statistics computed from the training data over what
NormalizationDimension names (per channel, per element, one value), against float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(3)
IMAGES = RNG.standard_normal((3, 4, 2, 6)) * 2 + np.arange(24).reshape(
    3, 4, 2, 1
)  # H×W×C×N, per-element means
OPTIONS = dict(MaxEpochs=1, MiniBatchSize=3, Verbose=False)


def image_net(**normalization):
    return [dlf.imageInputLayer([3, 4, 2], **normalization), dlf.convolution2dLayer(3, 1),
            dlf.globalAveragePooling2dLayer(), dlf.fullyConnectedLayer(1)]  # fmt: skip


def statistic(net, name):
    return getattr(net.Layers[0], name).double().numpy()


@pytest.mark.parametrize(
    ("normalization", "reduce", "shape"),
    [
        ("zscore", lambda a, f: f(a, axis=3), (3, 4, 2)),  # per element over the observations
        ("rescale-symmetric", lambda a, f: f(a, axis=3), (3, 4, 2)),
    ],
)
def test_per_element_image_statistics(normalization, reduce, shape):
    layers = image_net(Normalization=normalization, NormalizationDimension="element")
    net, _ = dlf.trainnet(
        torch.tensor(IMAGES), torch.zeros(6, 1), layers, "mse", dlf.trainingOptions("sgdm", **OPTIONS)
    )
    references = {
        "Mean": reduce(IMAGES, np.mean),
        "StandardDeviation": reduce(IMAGES, lambda a, axis: np.std(a, axis=axis, ddof=1)),  # MATLAB's std
        "Min": reduce(IMAGES, np.min),
        "Max": reduce(IMAGES, np.max),
    }
    for name in dlf.layers.input.STATISTICS_OF[normalization]:
        assert statistic(net, name).shape == shape
        np.testing.assert_allclose(statistic(net, name), references[name], rtol=1e-12)
    assert net.Layers[0].NormalizationDimension == "element"


def test_one_value_for_all():
    layers = image_net(Normalization="zscore", NormalizationDimension="all")
    net, _ = dlf.trainnet(
        torch.tensor(IMAGES), torch.zeros(6, 1), layers, "mse", dlf.trainingOptions("sgdm", **OPTIONS)
    )
    np.testing.assert_allclose(statistic(net, "Mean"), [[IMAGES.mean()]], rtol=1e-12)
    np.testing.assert_allclose(statistic(net, "StandardDeviation"), [[IMAGES.std(ddof=1)]], rtol=1e-12)


@pytest.mark.parametrize(
    ("dimension", "expected"), [("channel", lambda a: a.mean(1)), ("all", lambda a: a.mean())]
)
def test_feature_statistics(dimension, expected):
    X = RNG.standard_normal((8, 3)) + np.array([1.0, 2.0, 3.0])
    layers = [dlf.featureInputLayer(3, Normalization="zerocenter", NormalizationDimension=dimension),
              dlf.fullyConnectedLayer(1)]  # fmt: skip
    net, _ = dlf.trainnet(
        torch.tensor(X), torch.zeros(8, 1), layers, "mse", dlf.trainingOptions("sgdm", **OPTIONS)
    )
    np.testing.assert_allclose(statistic(net, "Mean").ravel(), np.ravel(expected(X.T)), rtol=1e-12)


def test_per_element_statistics_of_image_sequences_skip_the_padding():
    # sequences of 2×1×2 images (h×w×c×T, MATLAB's cell array), of different lengths
    sequences = [RNG.standard_normal((2, 1, 2, n)) + np.arange(4).reshape(2, 1, 2, 1) for n in (2, 5, 3)]
    layers = [dlf.sequenceInputLayer([2, 1, 2], Normalization="zerocenter", NormalizationDimension="element"),
              dlf.flattenLayer(), dlf.lstmLayer(2, OutputMode="last"), dlf.fullyConnectedLayer(1)]  # fmt: skip
    net, _ = dlf.trainnet([torch.tensor(s) for s in sequences], torch.zeros(3, 1), layers, "mse",
                          dlf.trainingOptions("sgdm", **OPTIONS))  # fmt: skip
    every = np.concatenate(sequences, axis=3)
    assert statistic(net, "Mean").shape == (2, 1, 2)
    np.testing.assert_allclose(statistic(net, "Mean"), every.mean(3), rtol=1e-12)


# -- networks built with empty statistics (MATLAB's usual case): trainnet and trainNetwork compute
# them before training, each normalization's own statistics from its documented definition:
# zerocenter Mean; zscore Mean and StandardDeviation; rescale-* Min and Max; here per channel
# (NormalizationDimension "auto" with nothing given: "apply channel-wise normalization").
DATA = np.random.default_rng(11)
SEQUENCES = [DATA.standard_normal((3, n)) * [[1.0], [2.0], [0.5]] + [[1.0], [-2.0], [4.0]] for n in (4, 6, 5)]
VOLUMES = DATA.uniform(-3, 9, (3, 2, 2, 2, 5))  # H×W×D×C×N
FEATURES = DATA.standard_normal((7, 3)) * [1.0, 3.0, 0.2] + [0.0, 5.0, -1.0]  # N×C
KINDS = {
    # (layers before the output; trainnet's predictors; trainNetwork's; the data as a float64
    # channels × values matrix: the values one per-channel statistic runs over, in its row)
    "image": (
        lambda **kw: [
            dlf.imageInputLayer([3, 4, 2], **kw),
            dlf.convolution2dLayer(2, 1),
            dlf.globalAveragePooling2dLayer(),
            dlf.fullyConnectedLayer(1),
        ],
        IMAGES,
        IMAGES,
        lambda a: a.transpose(2, 0, 1, 3).reshape(2, -1),
    ),
    "image3d": (
        lambda **kw: [
            dlf.image3dInputLayer([3, 2, 2, 2], **kw),
            dlf.convolution3dLayer(2, 1),
            dlf.fullyConnectedLayer(1),
        ],
        VOLUMES,
        VOLUMES,
        lambda a: a.transpose(3, 0, 1, 2, 4).reshape(2, -1),
    ),
    "feature": (
        lambda **kw: [dlf.featureInputLayer(3, **kw), dlf.fullyConnectedLayer(1)],
        FEATURES,
        FEATURES,
        lambda a: a.T,
    ),
    "sequence": (
        lambda **kw: [
            dlf.sequenceInputLayer(3, **kw),
            dlf.lstmLayer(2, OutputMode="last"),
            dlf.fullyConnectedLayer(1),
        ],
        [s.T for s in SEQUENCES],  # trainnet's s×c sequences
        SEQUENCES,  # trainNetwork's c×s
        lambda a: np.concatenate(a, axis=1),
    ),
}
REFERENCES = {
    "Mean": lambda rows: rows.mean(1),
    "StandardDeviation": lambda rows: rows.std(1, ddof=1),  # MATLAB's std (N - 1): see training.md
    "Min": lambda rows: rows.min(1),
    "Max": lambda rows: rows.max(1),
}


def every_value(kind):
    rows = KINDS[kind][3]
    return rows(SEQUENCES if kind == "sequence" else KINDS[kind][2])


def trained(caller, kind, normalization, reset=True, **given):
    make, modern, legacy, _ = KINDS[kind]
    options = dlf.trainingOptions("sgdm", ResetInputNormalization=reset, **OPTIONS)
    count = len(legacy) if kind == "sequence" else np.shape(legacy)[-1 if kind != "feature" else 0]
    if caller == "trainnet":
        net = dlf.dlnetwork(make(Normalization=normalization, Name="in", **given))  # today: refused here
        X = [torch.tensor(s) for s in modern] if kind == "sequence" else torch.tensor(modern)
        trained_net, _ = dlf.trainnet(X, torch.zeros(count, 1), net, "mse", options)
        return trained_net, net
    layers = [*make(Normalization=normalization, Name="in", **given), dlf.regressionLayer()]
    X = [torch.tensor(s) for s in legacy] if kind == "sequence" else torch.tensor(legacy)
    trained_net, _ = dlf.trainNetwork(X, torch.zeros(count, 1), layers, options)
    return trained_net, layers


@pytest.mark.parametrize("caller", ["trainnet", "trainNetwork"])
@pytest.mark.parametrize("normalization", ["zerocenter", "zscore", "rescale-symmetric", "rescale-zero-one"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_empty_statistics_are_computed_before_training(kind, normalization, caller):
    net, source = trained(caller, kind, normalization)
    rows = every_value(kind)
    layer = net.Layers[0]
    for name in dlf.layers.input.STATISTICS_OF[normalization]:
        value = getattr(layer, name)
        assert value.dtype == torch.float64 and value.numel() == rows.shape[0]
        np.testing.assert_allclose(value.numpy().ravel(), REFERENCES[name](rows), rtol=1e-12, atol=1e-12)
    given = source.Layers[0] if caller == "trainnet" else source[0]
    assert given.Mean is None and given.Min is None  # the caller's network is unchanged


@pytest.mark.parametrize("normalization", ["zscore", "rescale-symmetric"])
def test_the_trained_input_layer_normalizes_with_the_computed_statistics(normalization):
    net, _ = trained("trainnet", "feature", normalization)
    Y = dlf.predict(net, dlf.dlarray(torch.tensor(FEATURES), "BC"), Outputs="in")
    rows = every_value("feature")
    if normalization == "zscore":
        expected = (FEATURES - REFERENCES["Mean"](rows)) / REFERENCES["StandardDeviation"](rows)
    else:
        low, high = REFERENCES["Min"](rows), REFERENCES["Max"](rows)
        expected = 2 * (FEATURES - low) / (high - low) - 1
    np.testing.assert_allclose(dlf.extractdata(Y).numpy().T, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("caller", ["trainnet", "trainNetwork"])
@pytest.mark.parametrize(("reset", "kept"), [(True, False), (False, True)])
def test_reset_input_normalization_recomputes_given_statistics_or_keeps_them(caller, reset, kept):
    given = np.array([[1.0, 2.0, 3.0]])
    net, _ = trained(caller, "feature", "zerocenter", reset=reset, Mean=given)
    expected = given.ravel() if kept else REFERENCES["Mean"](every_value("feature"))
    np.testing.assert_allclose(net.Layers[0].Mean.numpy().ravel(), expected, rtol=1e-12)


@pytest.mark.parametrize("caller", ["trainnet", "trainNetwork"])
def test_empty_statistics_are_computed_even_when_reset_input_normalization_is_false(caller):
    net, _ = trained(caller, "feature", "zscore", reset=False)
    rows = every_value("feature")
    for name in ("Mean", "StandardDeviation"):
        np.testing.assert_allclose(
            getattr(net.Layers[0], name).numpy().ravel(), REFERENCES[name](rows), rtol=1e-12
        )


def image_net_without_statistics():
    return dlf.dlnetwork([dlf.imageInputLayer([4, 4, 1], Name="in"), dlf.fullyConnectedLayer(1)])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda o: dlf.trainnet(
                torch.rand(4, 4, 3, 6), torch.zeros(6, 1), image_net_without_statistics(), "mse", o
            ),
            r"trainnet: ImageInputLayer 'in' needs 4×4×1 \(spatial × spatial × channels\) per observation to "
            r"compute its normalization statistics; X has 4×4×3 per observation",
        ),
        (  # torch's layout is N×C×H×W: H×W×C items are read as C = 4
            lambda o: dlf.trainnet(
                torch.utils.data.TensorDataset(torch.rand(6, 4, 4, 1), torch.zeros(6, 1)),
                image_net_without_statistics(),
                "mse",
                o,
            ),
            r"'in' needs 4×4×1 .*; X has 4×1×4 per observation",
        ),
        (
            lambda o: dlf.trainNetwork(
                torch.rand(6, 4),
                torch.zeros(6, 1),
                [
                    dlf.featureInputLayer(3, Normalization="zscore"),
                    dlf.fullyConnectedLayer(1),
                    dlf.regressionLayer(),
                ],
                o,
            ),
            r"trainNetwork: FeatureInputLayer needs 3 \(channels\) per observation .*; X has 4 per observation",
        ),
    ],
    ids=["trainnet", "dataset", "trainNetwork"],
)
def test_data_of_other_sizes_is_refused_before_its_statistics_are_computed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call(dlf.trainingOptions("sgdm", **OPTIONS))
