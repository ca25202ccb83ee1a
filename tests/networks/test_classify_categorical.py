"""classify's labels and the output layers' Classes are MATLAB's categorical arrays
(dlformat/networks/_legacy.py, dlformat/layers/output.py; docs/data.md).

MathWorks' ClassificationOutputLayer page: names ``str`` given as Classes become
``categorical(str, str)``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def network(classes):
    fc = dlf.fullyConnectedLayer(
        len(classes), Weights=torch.eye(len(classes), 2), Bias=torch.zeros(len(classes), 1)
    )
    output = dlf.classificationLayer(Classes=classes)
    return dlf.assembleNetwork([dlf.featureInputLayer(2), fc, dlf.softmaxLayer(), output])


def test_classify_gives_a_categorical_of_the_classes_in_order():
    net = network(["yes", "no"])  # not sorted: the categories keep this order
    X = dlf.dlarray(torch.tensor([[3.0, 0.0, 1.0], [0.0, 3.0, 0.0]]), "CB")  # 2 channels, 3 observations
    labels, scores = dlf.classify(net, X)
    assert isinstance(labels, dlf.Categorical) and labels.shape == (3,)
    expected = np.array(["yes", "no"], dtype=object)[dlf.extractdata(scores).argmax(0).numpy()]
    assert labels.tolist() == expected.tolist() == ["yes", "no", "yes"]
    assert dlf.categories(labels) == ["yes", "no"] and dlf.double(labels).tolist() == [1.0, 2.0, 1.0]
    assert not dlf.isordinal(labels) and not dlf.isprotected(labels)


def test_classifyAndUpdateState_gives_a_categorical_too():
    lstm = dlf.lstmLayer(3, InputSize=2, OutputMode="last")
    net = dlf.assembleNetwork(
        [
            dlf.sequenceInputLayer(2),
            lstm,
            dlf.fullyConnectedLayer(2, InputSize=3),
            dlf.softmaxLayer(),
            dlf.classificationLayer(Classes=["b", "a"]),
        ]
    )
    result = dlf.classifyAndUpdateState(net, dlf.dlarray(torch.randn(2, 4, 5), "CBT"))
    labels = next(value for value in result if isinstance(value, dlf.Categorical))
    assert labels.shape == (4,) and dlf.categories(labels) == ["b", "a"]


def test_classes_is_a_categorical_of_the_names_and_rebuilds_from_names():
    layer = dlf.classificationLayer(Classes=["cat", "dog"], ClassWeights=[1, 3])
    classes = layer.Classes
    assert dlf.iscategorical(classes) and classes.tolist() == ["cat", "dog"] == dlf.categories(classes)
    assert layer.OutputSize == 2 and "Classes: [2×1 categorical]" in repr(layer)
    assert layer.get_config()["Classes"] == ["cat", "dog"]  # plain names: network files hold them
    rebuilt = dlf.ClassificationOutputLayer.from_config(layer.get_config())
    assert dlf.categories(rebuilt.Classes) == ["cat", "dog"]
    # a categorical given keeps its elements' order (categorical(str, str) of its names)
    given = dlf.classificationLayer(Classes=dlf.categorical(["dog", "cat"]))
    assert dlf.categories(given.Classes) == ["dog", "cat"]
    assert dlf.categories(dlf.pixelClassificationLayer(Classes=np.array(["sky", "road"])).Classes) == [
        "sky",
        "road",
    ]
    assert dlf.classificationLayer().Classes == "auto"
    with pytest.raises(
        DLFormatError, match="Classes must name each class; the categorical given has undefined"
    ):
        dlf.classificationLayer(Classes=dlf.categorical(["a", None]))
