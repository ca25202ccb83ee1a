"""trainNetwork with a pixelClassificationLayer (semantic segmentation) and with custom output
layers (subclasses of dlf.ClassificationLayer / dlf.RegressionLayer): the first iteration's loss
and accuracy equal float64 NumPy computations of the documented definitions, and training learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

CLASSES = ["dark", "bright"]


def _options(**extra):
    settings = {
        "MaxEpochs": 1,
        "MiniBatchSize": 4,
        "Shuffle": "never",
        "Verbose": False,
        "InitialLearnRate": 0.01,
    }
    return dlf.trainingOptions("sgdm", **{**settings, **extra})


def _segmentation_data(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """count 6×6 one-channel images; a pixel is "bright" where its value exceeds 0.5."""
    rng = np.random.default_rng(seed)
    X = rng.random((6, 6, 1, count))
    labels = np.where(X[:, :, 0, :] > 0.5, "bright", "dark").astype(object)
    return X.astype(np.float32), labels


def _softmax(z: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# a 1×1 convolution of known weights (1 channel to 2), so NumPy can compute the scores
W = np.array([0.7, -0.4])
B = np.array([-0.2, 0.3])


def _pixel_layers(output):
    conv = dlf.convolution2dLayer(
        1,
        2,
        Weights=torch.tensor(W, dtype=torch.float32).reshape(1, 1, 1, 2),
        Bias=torch.tensor(B, dtype=torch.float32).reshape(1, 1, 2),
    )
    return [dlf.imageInputLayer([6, 6, 1], Normalization="none"), conv, dlf.softmaxLayer(), output]


@pytest.mark.parametrize(
    ("layer", "weights"),
    [
        (dlf.pixelClassificationLayer(), {"bright": 1.0, "dark": 1.0}),
        (dlf.pixelClassificationLayer(Classes=CLASSES, ClassWeights=[1, 3]), {"dark": 1.0, "bright": 3.0}),
    ],
)
def test_pixel_loss_and_accuracy_of_the_first_iteration(layer, weights):
    X, labels = _segmentation_data(4)
    labels[0, 0, :] = ""  # undefined pixels: ignored by the loss and the accuracy
    _, info = dlf.trainNetwork(X, labels, _pixel_layers(layer), _options())
    x = X[:, :, 0, :].astype(np.float64)  # H×W×N
    scores = _softmax(x[..., None] * W + B, -1)  # H×W×N×C, channels in the layer's class order
    classes = ["bright", "dark"] if isinstance(layer.Classes, str) else CLASSES  # "auto": sorted names
    loss = accurate = counted = weight = 0.0
    for (h, w, n), label in np.ndenumerate(labels):
        if label == "":
            continue
        k = classes.index(label)
        loss -= weights[label] * np.log(scores[h, w, n, k])
        weight += weights[label]
        accurate += scores[h, w, n].argmax() == k
        counted += 1
    # MathWorks' SpatialCrossEntropy: the mean over all H·W·N pixels (undefined ones counted) without
    # ClassWeights; the weighted mean over the labelled pixels with them
    divisor = 6 * 6 * 4 if layer.ClassWeights == "none" else weight
    assert info.TrainingLoss[0] == pytest.approx(loss / divisor, rel=1e-5)
    assert info.TrainingAccuracy[0] == pytest.approx(100 * accurate / counted)


def test_a_small_segmentation_network_learns():
    torch.manual_seed(0)
    X, labels = _segmentation_data(64)
    XV, labelsV = _segmentation_data(16, seed=1)
    layers = [
        dlf.imageInputLayer([6, 6, 1]),
        dlf.convolution2dLayer(3, 8, Padding="same"),
        dlf.reluLayer(),
        dlf.convolution2dLayer(1, 2),
        dlf.softmaxLayer(),
        dlf.pixelClassificationLayer(Name="labels"),
    ]
    options = _options(
        MaxEpochs=20,
        MiniBatchSize=16,
        InitialLearnRate=0.05,
        Shuffle="every-epoch",
        ValidationData=(XV, labelsV),
    )
    net, info = dlf.trainNetwork(X, labels, layers, options)
    assert isinstance(net, dlf.SeriesNetwork)
    assert dlf.categories(net.Layers[-1].Classes) == ["bright", "dark"]
    assert info.FinalValidationAccuracy > 90
    predicted, scores = dlf.classify(net, dlf.dlarray(torch.as_tensor(XV), "SSCB"))
    assert dlf.dims(scores) == "SSCB" and tuple(scores.shape) == (6, 6, 2, 16)
    assert predicted.shape == (6, 6, 16)
    assert np.mean(predicted == labelsV) > 0.9


class MAELayer(dlf.RegressionLayer):
    """MathWorks' custom regression example: mean absolute error over the responses, then the
    mean over the observations."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.Description = "Mean absolute error"

    def forwardLoss(self, Y, T):
        responses = dlf.size(Y, dlf.finddim(Y, "C"))
        return dlf.mean(dlf.sum(abs(Y - T), 1) / responses, "all")

    def backwardLoss(self, Y, T):  # never called: autograd differentiates forwardLoss
        raise AssertionError("backwardLoss was called")


class SSELayer(dlf.ClassificationLayer):
    """MathWorks' custom classification example: the sum of squared errors per observation, then
    the mean over the observations."""

    def forwardLoss(self, Y, T):
        return dlf.sum((Y - T) ** 2, "all") / dlf.size(Y, dlf.finddim(Y, "B"))


FC_W = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]])
FC_B = np.array([0.1, -0.2])


def _dense_layers(output):
    fc = dlf.fullyConnectedLayer(
        2,
        Weights=torch.tensor(FC_W, dtype=torch.float32),
        Bias=torch.tensor(FC_B, dtype=torch.float32).reshape(2, 1),
    )
    middle = [dlf.softmaxLayer()] if isinstance(output, dlf.ClassificationLayer) else []
    return [dlf.featureInputLayer(3, Normalization="none"), fc, *middle, output]


def test_a_custom_regression_layer_trains_with_its_forward_loss():
    rng = np.random.default_rng(2)
    X, T = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32)
    net, info = dlf.trainNetwork(X, T, _dense_layers(MAELayer(Name="mae")), _options(MaxEpochs=3))
    Y = X[:4].astype(np.float64) @ FC_W.T + FC_B
    expected = np.mean(np.abs(Y - T[:4]).sum(1) / 2)
    assert info.TrainingLoss[0] == pytest.approx(expected, rel=1e-6)
    assert info.TrainingRMSE[0] == pytest.approx(np.sqrt(np.mean((Y - T[:4]) ** 2)), rel=1e-6)
    assert info.TrainingLoss[-1] < info.TrainingLoss[0]
    assert isinstance(net.Layers[-1], MAELayer) and net.Layers[-1].Name == "mae"


def test_a_custom_classification_layer_gets_its_classes_and_one_hot_targets():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 3)).astype(np.float32)
    labels = np.array(["yes", "no", "no", "yes", "yes", "no", "yes", "no"])
    net, info = dlf.trainNetwork(X, labels, _dense_layers(SSELayer()), _options(MaxEpochs=2))
    scores = _softmax(X[:4].astype(np.float64) @ FC_W.T + FC_B, 1)
    targets = np.array([[label == "no", label == "yes"] for label in labels[:4]], dtype=float)  # sorted
    assert info.TrainingLoss[0] == pytest.approx(np.sum((scores - targets) ** 2) / 4, rel=1e-6)
    assert info.TrainingAccuracy[0] == pytest.approx(100 * np.mean(scores.argmax(1) == targets.argmax(1)))
    assert dlf.categories(net.Layers[-1].Classes) == ["no", "yes"]
    predicted, _ = dlf.classify(net, dlf.dlarray(torch.as_tensor(X), "BC"))
    assert set(predicted) <= {"no", "yes"}


class _NeitherLayer(dlf.layers.output.OutputLayer):
    def forwardLoss(self, Y, T):
        return dlf.sum(Y, "all")


@pytest.mark.parametrize(
    ("layers", "Y", "message"),
    [
        (_pixel_layers(dlf.pixelClassificationLayer()), np.array(["a", "b", "a", "b"]), "needs label images"),
        (
            _pixel_layers(dlf.pixelClassificationLayer(Classes=["a", "b"])),
            _segmentation_data(4)[1],
            "of no class",
        ),
        (_dense_layers(SSELayer()), np.zeros((4, 2)), "needs class labels"),
        (_dense_layers(_NeitherLayer()), np.zeros((4, 2)), "subclasses dlf.ClassificationLayer"),
    ],
)
def test_errors(layers, Y, message):
    X = _segmentation_data(4)[0] if isinstance(layers[0], dlf.ImageInputLayer) else np.zeros((4, 3))
    with pytest.raises(DLFormatError, match=message):
        dlf.trainNetwork(X, Y, layers, _options())


@pytest.mark.parametrize("undefined", ["", None])
def test_undefined_pixels_name_no_class(undefined):
    X, labels = _segmentation_data(4)
    labels[:, 0, :] = undefined
    net, info = dlf.trainNetwork(X, labels, _pixel_layers(dlf.pixelClassificationLayer()), _options())
    assert dlf.categories(net.Layers[-1].Classes) == ["bright", "dark"]
    assert np.isfinite(info.TrainingLoss).all()


def test_trainNetworks_info_has_the_fields_of_a_matlab_written_info_struct(networks):
    """gender__trainedNetwork_1.mat holds `trainInfoStruct_1`, the info struct MATLAB's trainNetwork
    returned for a classification network trained with validation: the same fields in the same
    order, one value per iteration (validation NaN between validations, accuracy in percent)."""
    from dlformat.io import loadmat

    saved = loadmat(networks / "gender__trainedNetwork_1.mat", ["trainInfoStruct_1"])["trainInfoStruct_1"]
    matlab_validated = ~np.isnan(np.asarray(saved["ValidationLoss"]).ravel())
    assert matlab_validated[0] and not matlab_validated.all()  # the file's own pattern
    torch.manual_seed(0)
    X = torch.randn(40, 3)
    Y = ["a" if value > 0 else "b" for value in X[:, 0]]
    layers = [
        dlf.featureInputLayer(3),
        dlf.fullyConnectedLayer(2),
        dlf.softmaxLayer(),
        dlf.classificationLayer(),
    ]
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=2, MiniBatchSize=10, Verbose=False, ValidationData=(X[:10], Y[:10]),
        ValidationFrequency=3,
    )  # fmt: skip
    _, info = dlf.trainNetwork(X, Y, layers, options)
    assert list(vars(info)) == list(saved)
    iterations = np.asarray(saved["TrainingLoss"]).size  # 346 in the file, 8 here (2 epochs of 4)
    for name in ("TrainingLoss", "TrainingAccuracy", "ValidationLoss", "ValidationAccuracy", "BaseLearnRate"):
        assert np.asarray(saved[name]).size == iterations and np.asarray(getattr(info, name)).shape == (8,), (
            name
        )
    validated = ~np.isnan(info.ValidationLoss)
    np.testing.assert_array_equal(validated, [True, False, True, False, False, True, False, True])
    assert np.asarray(saved["TrainingAccuracy"]).max() > 1  # MATLAB's accuracy is in percent
    # percent of a mini-batch of 10 observations: multiples of 10 in [0, 100] (fractions would not be)
    tens = np.asarray(info.TrainingAccuracy) / 10
    np.testing.assert_array_equal(tens, np.round(tens))
    assert (
        info.TrainingAccuracy.max() > 1
        and ((0 <= info.TrainingAccuracy) & (info.TrainingAccuracy <= 100)).all()
    )
