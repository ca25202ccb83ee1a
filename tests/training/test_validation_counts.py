"""ValidationData whose predictors and targets differ in count is refused before training starts,
with the training data's wording (issue 24 item 7: 4 images with 3 labels was a raw IndexError
at the first validation, 4 with 5 silently ignored a label)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 2))
T = RNG.standard_normal((8, 1))
IMAGES = RNG.standard_normal((4, 4, 1, 4))  # MATLAB's H×W×C×N: 4 images
LABELS = np.array(["a", "b", "a", "b", "a"])


def regression_layers(output: bool) -> list:
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)]
    return [*layers, dlf.regressionLayer()] if output else layers


def image_classifier(output: bool) -> list:
    layers = [
        dlf.imageInputLayer([4, 4, 1], Normalization="none"),
        dlf.fullyConnectedLayer(2),
        dlf.softmaxLayer(),
    ]
    return [*layers, dlf.classificationLayer()] if output else layers


def train(caller: str, solver: str, validation: tuple, kind: str) -> None:
    """One training call whose OutputFcn fails the test if an iteration runs."""

    def no_iteration(info) -> bool:
        raise AssertionError("training started although the ValidationData counts differ")

    length = {"MaxIterations": 1} if solver in ("lbfgs", "lm") else {"MaxEpochs": 1}
    options = dlf.trainingOptions(
        solver, **length, Verbose=False, ValidationData=validation, OutputFcn=no_iteration
    )
    if kind == "regression":
        data, targets, layers = X, T, regression_layers(caller == "trainNetwork")
    else:
        data, targets, layers = IMAGES, LABELS[:4], image_classifier(caller == "trainNetwork")
    if caller == "trainnet":
        dlf.trainnet(data, targets, layers, "mse" if kind == "regression" else "crossentropy", options)
    else:
        dlf.trainNetwork(data, targets, layers, options)


@pytest.mark.parametrize(
    ("caller", "solver"),
    [("trainnet", "sgdm"), ("trainnet", "adam"), ("trainnet", "lbfgs"), ("trainnet", "lm"),
     ("trainNetwork", "sgdm"), ("trainNetwork", "rmsprop")],
)  # fmt: skip
@pytest.mark.parametrize("targets", [3, 5])
def test_regression_validation_counts_are_checked_before_training(caller, solver, targets):
    with pytest.raises(
        DLFormatError,
        match=rf"^{caller}: ValidationData: X has 4 observations; the targets have {targets}$",
    ):
        train(caller, solver, (X[:4], T[:targets]), "regression")


@pytest.mark.parametrize("caller", ["trainnet", "trainNetwork"])
@pytest.mark.parametrize("labels", [3, 5])
def test_images_with_more_or_fewer_labels_are_refused(caller, labels):
    """The issue's case: 4 validation images with 3 (or 5) class labels."""
    with pytest.raises(
        DLFormatError,
        match=rf"^{caller}: ValidationData: X has 4 observations; the targets have {labels}$",
    ):
        train(caller, "sgdm", (IMAGES, LABELS[:labels]), "classification")


def test_the_training_data_check_keeps_its_wording():
    """The validation check says what the training data's check says, without the prefix."""
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False)
    with pytest.raises(DLFormatError, match=r"^trainnet: X has 8 observations; the targets have 5$"):
        dlf.trainnet(X, T[:5], regression_layers(False), "mse", options)


def test_equal_counts_train_and_validate():
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=1, MiniBatchSize=4, Verbose=False, ValidationData=(X[:3], T[:3])
    )
    torch.manual_seed(0)
    _, info = dlf.trainnet(X, T, regression_layers(False), "mse", options)
    assert len(info.ValidationHistory) == 2  # validated at iteration 1 and at the last one
