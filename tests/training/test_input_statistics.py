"""ResetInputNormalization: the input layer's statistics computed from the training data over what
NormalizationDimension names (per channel, per element, one value), against float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf

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
