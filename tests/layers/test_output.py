"""classificationLayer, regressionLayer, pixelClassificationLayer: properties, display, pass-through,
and forwardLoss against float64 NumPy references written from MathWorks' formulas."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(13)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def one_hot(labels, classes, axis):
    return np.moveaxis(np.eye(classes)[labels], -1, axis)


def value(loss):
    return float(dlf.extractdata(loss))


@pytest.mark.parametrize(
    ("fmt", "shape", "weights"),
    [
        ("CB", (3, 5), None),
        ("CB", (3, 5), [0.5, 2.0, 1.5]),
        ("CBT", (4, 2, 6), [1.0, 2.0, 3.0, 4.0]),  # sequence-to-sequence: time steps add up
        ("SSCB", (3, 2, 4, 2), None),
    ],
)
def test_classification_loss_is_matlabs_weighted_crossentropyex(fmt, shape, weights):
    c = fmt.index("C")
    Y = softmax(RNG.normal(size=shape), c)
    labels = RNG.integers(0, shape[c], size=tuple(n for i, n in enumerate(shape) if i != c))
    T = one_hot(labels, shape[c], c)
    w = np.ones(shape[c]) if weights is None else np.asarray(weights)
    # MathWorks: loss = -(1/N) sum_n sum_i w_i T_ni log(Y_ni), N the observations
    w_shaped = w.reshape([-1 if i == c else 1 for i in range(len(shape))])
    expected = -(w_shaped * T * np.log(Y)).sum() / shape[fmt.index("B")]
    classes = [f"c{i}" for i in range(shape[c])]
    options = {} if weights is None else {"Classes": classes, "ClassWeights": weights}
    layer = dlf.classificationLayer(**options)
    loss = layer.forwardLoss(dlf.dlarray(torch.tensor(Y), fmt), dlf.dlarray(torch.tensor(T), fmt))
    assert dlf.dims(loss) == "" and loss.dtype == torch.float64
    np.testing.assert_allclose(value(loss), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "shape"),
    [("CB", (3, 5)), ("SSCB", (4, 3, 2, 2)), ("CBT", (2, 3, 7))],
)
def test_regression_loss_is_half_squared_error_per_observation_over_time_steps(fmt, shape):
    Y, T = RNG.normal(size=shape), RNG.normal(size=shape)
    N = shape[fmt.index("B")]
    S = shape[fmt.index("T")] if "T" in fmt else 1
    # MathWorks: 1/2 sum (t - y)^2 per observation (per time step for sequences: / S), mean over N
    expected = 0.5 * ((T - Y) ** 2).sum() / S / N
    loss = dlf.regressionLayer().forwardLoss(dlf.dlarray(torch.tensor(Y), fmt), torch.tensor(T))
    np.testing.assert_allclose(value(loss), expected, rtol=1e-12)


@pytest.mark.parametrize("weights", [None, np.array([1.0, 4.0])])
def test_pixel_classification_loss_is_mathworks_spatial_cross_entropy(weights):
    Y = softmax(RNG.normal(size=(4, 3, 2, 2)), 2)
    T = one_hot(RNG.integers(0, 2, size=(4, 3, 2)), 2, 2)
    T[0, 0, :, 1] = 0  # an undefined pixel label: nothing in the sums
    eps = np.finfo(np.float64).eps
    if weights is None:  # MathWorks' SpatialCrossEntropy: the mean over every pixel, H·W·N = 24
        expected = -(T * np.log(Y)).sum() / (4 * 3 * 2)
    else:  # class weights normalized to sum 1, then the labelled pixels' weights to sum 1
        pixel = T * (weights / (weights.sum() + eps)).reshape(1, 1, 2, 1)
        expected = -(pixel / (pixel.sum() + eps) * np.log(Y)).sum()
    classes = {} if weights is None else {"Classes": ["a", "b"], "ClassWeights": weights}
    layer = dlf.pixelClassificationLayer(**classes)
    loss = layer.forwardLoss(dlf.dlarray(torch.tensor(Y), "SSCB"), dlf.dlarray(torch.tensor(T), "SSCB"))
    np.testing.assert_allclose(value(loss), expected, rtol=1e-12)
    with pytest.raises(DLFormatError, match=r'PixelClassificationLayer needs a dlarray with "S" and "C"'):
        layer.forwardLoss(dlf.dlarray(torch.rand(2, 3), "CB"), torch.zeros(2, 3))


@pytest.mark.parametrize(
    "make",
    [dlf.classificationLayer, dlf.regressionLayer, dlf.pixelClassificationLayer],
    ids=lambda f: f.__name__,
)
def test_output_layers_have_one_input_no_outputs_and_pass_data_through(make):
    layer = make()
    assert (layer.NumInputs, layer.InputNames, layer.NumOutputs, layer.OutputNames) == (1, ("in",), 0, ())
    X = dlf.dlarray(torch.rand(2, 3, 4, 2), "SSCB")
    assert layer.predict(X) is X and layer(X) is X


@pytest.mark.parametrize(
    ("layer", "name", "kind", "description"),
    [
        (dlf.classificationLayer(), "classoutput", "Classification Output", "crossentropyex"),
        (
            dlf.classificationLayer(Classes=["a", "b", "c"]),
            "classoutput",
            "Classification Output",
            "crossentropyex with 'a' and 2 other classes",
        ),
        (
            dlf.classificationLayer(Classes=["a", "b"]),
            "classoutput",
            "Classification Output",
            "crossentropyex with 'a' and 1 other class",
        ),
        (dlf.regressionLayer(), "regressionoutput", "Regression Output", "mean-squared-error"),
        (dlf.pixelClassificationLayer(), "classoutput", "Pixel Classification Layer", "Cross-entropy loss"),
    ],
)
def test_names_types_and_descriptions(layer, name, kind, description):
    assert (layer.default_name, layer.matlab_type, layer.Description) == (name, kind, description)


def test_matlab_properties_and_display():
    layer = dlf.classificationLayer("Name", "out", "Classes", ["cat", "dog"], "ClassWeights", [1, 3])
    # MATLAB's Classes: categorical(str, str) (MathWorks' ClassificationOutputLayer page)
    assert dlf.iscategorical(layer.Classes) and layer.Classes.tolist() == dlf.categories(layer.Classes)
    assert dlf.categories(layer.Classes) == ["cat", "dog"] and layer.ClassWeights == (1.0, 3.0)
    assert (layer.OutputSize, layer.LossFunction) == (2, "crossentropyex")
    assert dlf.classificationLayer().OutputSize == "auto"
    assert repr(layer).splitlines() == [
        "ClassificationOutputLayer with properties:",
        "",
        "            Name: 'out'",
        "         Classes: [2×1 categorical]",
        "    ClassWeights: [2×1 double]",
        "      OutputSize: 2",
        "",
        "   Hyperparameters",
        "    LossFunction: 'crossentropyex'",
    ]
    regression = dlf.regressionLayer(ResponseNames=["a", "b"])
    assert regression.ResponseNames == ("a", "b") and dlf.regressionLayer().ResponseNames == ()
    assert "ResponseNames: [2×1 cell]" in repr(regression)
    with pytest.raises(DLFormatError, match="read-only property 'Classes'"):
        layer.Classes = ["x", "y"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"ClassWeights": [1, 2]},
            r"ClassWeights needs Classes with one name per weight; got 2 weights and Classes auto",
        ),
        ({"Classes": ["a", "b"], "ClassWeights": [1, 2, 3]}, r"got 3 weights and Classes 2"),
        ({"Classes": "cat"}, r'Classes must be "auto" or a list of names; got "cat"'),
        ({"Classes": ["a", "a"]}, r"Classes must be unique, non-empty names"),
        ({"Classes": ["a", "b"], "ClassWeights": [1, 0]}, r"ClassWeights must be positive and finite"),
        (
            {"Classes": ["a", "b"], "ClassWeights": "equal"},
            r'ClassWeights must be "none" or a vector of positive numbers',
        ),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.classificationLayer(**options)


def test_loss_checks_the_class_count_and_the_format():
    layer = dlf.classificationLayer(Classes=["a", "b"])
    with pytest.raises(
        DLFormatError, match=r'the predictions have 3 channels \("C"\); the layer has 2 classes'
    ):
        layer.forwardLoss(dlf.dlarray(torch.rand(3, 2), "CB"), torch.zeros(3, 2))
    with pytest.raises(
        DLFormatError,
        match=r'ClassificationOutputLayer needs a dlarray with a "C" dimension; got format "SB"',
    ):
        layer.forwardLoss(dlf.dlarray(torch.rand(3, 2), "SB"), torch.zeros(3, 2))
