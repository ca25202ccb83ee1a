"""MATLAB's calling habits: 'Name', value pairs and any-case option names, everywhere keywords work."""

from __future__ import annotations

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat import functional as F
from dlformat._options import matlab_function


@pytest.mark.parametrize(
    ("make", "check"),
    [
        (lambda: dlf.fullyConnectedLayer(10, "Name", "fc"), lambda layer: layer.Name == "fc"),
        (
            lambda: dlf.fullyConnectedLayer(10, "name", "fc", "BIASL2FACTOR", 2),
            lambda layer: layer.BiasL2Factor == 2,
        ),
        (lambda: dlf.FullyConnectedLayer(10, "Name", "fc"), lambda layer: layer.Name == "fc"),
        (
            lambda: dlf.fullyConnectedLayer(10, name="fc", weightsinitializer="he"),
            lambda layer: layer.WeightsInitializer == "he",
        ),
        (
            lambda: dlf.positionEmbeddingLayer(64, 128, "Name", "posemb"),
            lambda layer: layer.MaxPosition == 128,
        ),
        (
            lambda: dlf.dropoutLayer("Name", "drop"),
            lambda layer: layer.Probability == 0.5 and layer.Name == "drop",
        ),
        (lambda: dlf.dropoutLayer(0.2, "Name", "drop"), lambda layer: layer.Probability == 0.2),
        (
            lambda: dlf.selfAttentionLayer(2, 8, "AttentionMask", "causal"),
            lambda layer: layer.AttentionMask == "causal",
        ),
        (lambda: dlf.geluLayer("Approximation", "TANH"), lambda layer: layer.Approximation == "tanh"),
    ],
)
def test_layer_constructors_take_matlab_pairs_and_any_case(make, check):
    assert check(make())


def test_functions_take_matlab_pairs_and_any_case():
    X = torch.randn(3, 2)
    Y = F.softmax(X, "DataFormat", "CB")
    assert dlf.dims(Y) == "" and torch.allclose(dlf.extractdata(Y).sum(0), torch.ones(2))
    formatted = dlf.dlarray(torch.randn(4, 2), "CB")
    a = F.layernorm(formatted, torch.zeros(4), torch.ones(4), "epsilon", 0.5)
    b = F.layernorm(formatted, torch.zeros(4), torch.ones(4), Epsilon=0.5)
    assert torch.equal(dlf.extractdata(a), dlf.extractdata(b))


def test_pairs_may_take_the_place_of_optional_positional_arguments():
    """MATLAB's batchnorm(X, offset, scaleFactor, 'Epsilon', 1e-3): the pairs start where the
    optional trailing positional arguments (the trained statistics) were left out."""

    @matlab_function
    def normalize(X, mean=None, variance=None, *, Epsilon=1e-5):
        return mean, variance, Epsilon

    assert normalize(1, "Epsilon", 2) == (None, None, 2)
    with pytest.raises(DLFormatError, match="normalize got option 'Epsilon' twice"):
        normalize(1, "epsilon", 2, Epsilon=3)
    assert normalize(1, 5, 6) == (5, 6, 1e-5)
    assert normalize(1, 5, 6, "EPSILON", 2) == (5, 6, 2)
    assert normalize(1, 5) == (5, None, 1e-5)
    with pytest.raises(DLFormatError, match="normalize has no option 'Decay'; the options are: Epsilon"):
        normalize(1, 5, 6, "Decay", 2)
    with pytest.raises(DLFormatError, match="normalize has no option 'Decay'"):
        normalize(1, "Decay", 2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.fullyConnectedLayer(10, "Nme", "fc"),
            r"fullyConnectedLayer has no option 'Nme'; the options are: InputSize, WeightsInitializer",
        ),
        (
            lambda: dlf.FullyConnectedLayer(10, Nme="fc"),
            r"FullyConnectedLayer has no option 'Nme'; the options are: .*Name",
        ),
        (
            lambda: dlf.fullyConnectedLayer(10, "Name", "a", "name", "b"),
            r"fullyConnectedLayer got option 'Name' twice",
        ),
        (
            lambda: F.softmax(torch.ones(2), "Dataformat", "C", "Scale", 2),
            r"softmax has no option 'Scale'; the options are: DataFormat",
        ),
        (
            lambda: dlf.fullyConnectedLayer(),
            r"fullyConnectedLayer: missing a required argument: 'OutputSize'",
        ),
    ],
)
def test_unknown_or_repeated_options_are_named(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_an_unported_matlab_name_says_so():
    with pytest.raises(AttributeError) as caught:
        dlf.yolov4ObjectDetector  # noqa: B018
    message = str(caught.value)
    assert "'yolov4ObjectDetector'" in message and "does not port it yet" in message
    assert "docs/matlab_names.md" in message and "Did you mean" not in message
