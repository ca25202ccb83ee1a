"""Categorical class targets in trainNetwork, trainnet and testnet, and categorical Classes and
labels out of them (dlformat/training/_trainer.py, _data.py; docs/data.md).

MATLAB's classes of categorical targets are its categories, in order, used or not: MATLAB
Answers 1694385 shows an unused category making five classes for a four-output network.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

OPTIONS = {"MaxEpochs": 30, "MiniBatchSize": 16, "InitialLearnRate": 0.05, "Verbose": False}


def data(n=64):
    torch.manual_seed(0)
    X = torch.randn(n, 2)
    names = np.where((X[:, 0] > 0).numpy(), "yes", "no")
    return X, names


def layers(outputs=2, output_layer=True):
    body = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(outputs), dlf.softmaxLayer()]
    return [*body, dlf.classificationLayer()] if output_layer else body


def test_trainNetwork_takes_the_categories_in_order_as_its_classes():
    X, names = data()
    Y = dlf.categorical(names, ["yes", "no"])  # categories yes, no: not the sorted order
    net, _ = dlf.trainNetwork(X, Y, layers(), dlf.trainingOptions("adam", **OPTIONS))
    classes = net.Layers[-1].Classes
    assert dlf.iscategorical(classes) and dlf.categories(classes) == ["yes", "no"]
    labels, scores = dlf.classify(net, dlf.dlarray(X, "BC"))
    assert dlf.categories(labels) == ["yes", "no"] and labels.shape == (64,)
    assert np.mean(labels == Y) > 0.9  # learned: channel 1 is "yes", as the categories order it
    # the scores' channels follow Classes: channel 1 scores "yes"
    yes = dlf.extractdata(scores)[0] > 0.5
    assert ((labels == "yes") == yes.numpy()).all()


@pytest.mark.parametrize("shape", [(64,), (64, 1), (1, 64)])
def test_a_categorical_vector_of_any_orientation_is_taken(shape):
    X, names = data()
    Y = dlf.categorical(names.reshape(shape))
    net, info = dlf.trainNetwork(X, Y, layers(), dlf.trainingOptions("adam", MaxEpochs=2, Verbose=False))
    assert dlf.categories(net.Layers[-1].Classes) == ["no", "yes"] and len(info.TrainingLoss) > 0


def test_an_unused_category_is_a_class_as_in_matlab():
    X, names = data()
    Y = dlf.addcats(dlf.categorical(names), "maybe")  # no observation is "maybe"
    options = dlf.trainingOptions("adam", MaxEpochs=2, Verbose=False)
    with pytest.raises(DLFormatError, match=r"the predictions have 2 channels .* the layer has 3 classes"):
        dlf.trainNetwork(X, Y, layers(2), options)
    net, _ = dlf.trainNetwork(X, Y, layers(3), options)
    assert dlf.categories(net.Layers[-1].Classes) == ["no", "yes", "maybe"]
    # removecats drops it, as MATLAB users do
    net, _ = dlf.trainNetwork(X, dlf.removecats(Y), layers(2), options)
    assert dlf.categories(net.Layers[-1].Classes) == ["no", "yes"]


def test_undefined_labels_are_refused():
    X, names = data()
    Y = dlf.categorical(names)
    Y[5] = None
    with pytest.raises(DLFormatError, match=r"holds undefined labels \(<undefined>, element 6\)"):
        dlf.trainNetwork(X, Y, layers(), dlf.trainingOptions("adam", MaxEpochs=1, Verbose=False))


def test_trainnet_and_testnet_take_categorical_targets():
    X, names = data()
    Y = dlf.categorical(names, ["yes", "no"])
    options = dlf.trainingOptions("adam", **OPTIONS)
    net, _ = dlf.trainnet(X, Y, layers(output_layer=False), "crossentropy", options)
    scores = dlf.minibatchpredict(net, X)
    predicted, _ = dlf.scores2label(scores, dlf.categories(Y))  # classNames = categories(TTrain)
    assert np.mean(predicted == Y) > 0.9
    # a test set of one class: a categorical keeps both categories, so both classes are known
    only_yes = Y[Y == "yes"]
    accuracy = dlf.testnet(net, X[torch.from_numpy(np.asarray(Y == "yes"))], only_yes, "accuracy")
    assert float(np.asarray(accuracy).ravel()[0]) > 90
    with pytest.raises(DLFormatError, match="the targets have 1 classes"):  # names alone cannot say
        dlf.testnet(net, X[torch.from_numpy(np.asarray(Y == "yes"))], list(only_yes), "accuracy")


def test_label_images_may_be_categorical():
    rng = np.random.default_rng(0)
    X = rng.random((4, 4, 1, 8)).astype(np.float32)
    pixels = dlf.categorical(np.where(X[:, :, 0, :] > 0.5, "bright", "dark"))
    net_layers = [
        dlf.imageInputLayer([4, 4, 1], Normalization="none"),
        dlf.convolution2dLayer(1, 2),
        dlf.softmaxLayer(),
        dlf.pixelClassificationLayer(),
    ]
    net, _ = dlf.trainNetwork(X, pixels, net_layers, dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False))
    assert dlf.categories(net.Layers[-1].Classes) == ["bright", "dark"]
    labels, _ = dlf.classify(net, dlf.dlarray(torch.as_tensor(X), "SSCB"))
    assert dlf.iscategorical(labels) and labels.shape == (4, 4, 8)
