"""dicePixelClassificationLayer and generalizedDice against a float64 NumPy reference written from
MathWorks' definition (Computer Vision Toolbox's ``generalizedDice`` and its
``GeneralizedDiceLoss`` layer): per observation, w_k = 1/max(eps, R_k²), R_k = Σ_spatial T_k,
dice = (2 Σ_k w_k Σ Y_k T_k + eps) / (Σ_k w_k Σ (Y_k² + T_k²) + eps), loss = Σ_n (1 − dice_n) / N."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

EPS = np.finfo(np.float64).eps


def dice_reference(y: np.ndarray, t: np.ndarray, spatial: int) -> np.ndarray:
    """y, t: spatial… × K × N arrays (MATLAB's layout); one similarity per observation."""
    axes = tuple(range(spatial))
    w = 1 / np.maximum(EPS, t.sum(axis=axes) ** 2)  # K × N
    intersection = (y * t).sum(axis=axes)
    union = (y**2 + t**2).sum(axis=axes)
    return (2 * (w * intersection).sum(axis=0) + EPS) / ((w * union).sum(axis=0) + EPS)


def segmentation(shape, classes, seed, undefined=0):
    """Softmax scores and one-hot targets of shape spatial… × K × N; ``undefined`` pixels of the
    first observation get all-zero targets (MATLAB's undefined labels)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((*shape, classes, 3))
    y = np.exp(z) / np.exp(z).sum(axis=len(shape), keepdims=True)
    labels = rng.integers(0, classes, (*shape, 3))
    t = (labels[..., None, :] == np.arange(classes)[:, None]).astype(np.float64)
    flat = t.reshape(-1, classes, 3)
    flat[:undefined, :, 0] = 0
    return y, flat.reshape(t.shape)


@pytest.mark.parametrize(
    ("fmt", "shape", "undefined"),
    [("SSCB", (5, 4), 0), ("SSSCB", (3, 4, 2), 0), ("SSCB", (5, 4), 6)],
)
def test_loss_matches_the_reference(fmt, shape, undefined):
    y, t = segmentation(shape, 3, seed=len(shape), undefined=undefined)
    layer = dlf.dicePixelClassificationLayer(Classes=["a", "b", "c"])
    loss = layer.forwardLoss(dlf.dlarray(torch.from_numpy(y), fmt), torch.from_numpy(t))
    expected = (1 - dice_reference(y, t, len(shape))).sum() / y.shape[-1]
    assert dlf.dims(loss) == "" and loss.dtype == torch.float64
    np.testing.assert_allclose(float(dlf.extractdata(loss)), expected, rtol=1e-13)


def test_a_class_absent_from_an_image_counts_with_the_eps_weight():
    # class 3 has no pixel in the targets: its weight is 1/eps, MathWorks' max(eps, R²)
    y, t = segmentation((4, 4), 3, seed=9)
    t[..., 1, :] += t[..., 2, :]
    t[..., 2, :] = 0
    loss = dlf.dicePixelClassificationLayer().forwardLoss(
        dlf.dlarray(torch.from_numpy(y), "SSCB"), torch.from_numpy(t)
    )
    expected = (1 - dice_reference(y, t, 2)).sum() / 3
    np.testing.assert_allclose(float(dlf.extractdata(loss)), expected, rtol=1e-12)


def test_gradient_is_matlabs_backward_loss():
    """MathWorks' backwardLoss: dL/dY = (2 W Y numer / denom² − 2 W T / denom) / N."""
    y, t = segmentation((3, 4), 2, seed=4)
    Y = torch.from_numpy(y).requires_grad_()
    loss = dlf.dicePixelClassificationLayer().forwardLoss(dlf.dlarray(Y, "SSCB"), torch.from_numpy(t))
    dlf.stripdims(loss).backward()
    w = 1 / np.maximum(EPS, t.sum(axis=(0, 1)) ** 2)  # K × N
    numer = 2 * (w * (y * t).sum(axis=(0, 1))).sum(axis=0) + EPS  # N
    denom = (w * (y**2 + t**2).sum(axis=(0, 1))).sum(axis=0) + EPS
    expected = (2 * w * y * numer / denom**2 - 2 * w * t / denom) / 3
    np.testing.assert_allclose(Y.grad.numpy(), expected, rtol=1e-10, atol=1e-14)


def test_properties_defaults_and_display():
    layer = dlf.dicePixelClassificationLayer()
    assert (layer.Name, layer.Classes, layer.OutputSize, layer.LossFunction) == (
        "",
        "auto",
        "auto",
        "generalizedDiceLoss",
    )
    assert (layer.default_name, layer.NumInputs, layer.NumOutputs) == ("classoutput", 1, 0)
    named = dlf.dicePixelClassificationLayer("Name", "pixclass", "Classes", ["sky", "road", "car"])
    assert named.Name == "pixclass" and named.OutputSize == 3
    assert dlf.categories(named.Classes) == ["sky", "road", "car"]
    assert "LossFunction: 'generalizedDiceLoss'" in repr(named)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"Classes": ["only"]}, r"Classes must name two or more classes; got \['only'\]"),
        ({"Classes": ["a", "a"]}, r"Classes must be unique"),
        ({"ClassWeights": [1, 2]}, r"ClassWeights"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.dicePixelClassificationLayer(**options)


def test_scores_must_fit_the_classes_and_have_spatial_dimensions():
    layer = dlf.dicePixelClassificationLayer(Classes=["a", "b", "c"])
    with pytest.raises(DLFormatError, match=r'predictions have 2 channels \("C"\); the layer has 3 classes'):
        layer.forwardLoss(dlf.dlarray(torch.rand(4, 4, 2, 1), "SSCB"), torch.rand(4, 4, 2, 1))
    with pytest.raises(DLFormatError, match=r'needs a dlarray with "S" and "C"|"S"'):
        layer.forwardLoss(dlf.dlarray(torch.rand(3, 2), "CB"), torch.rand(3, 2))
    with pytest.raises(DLFormatError, match=r"X and target must have the same size; got 4×4×3×1 and 4×4×3×2"):
        layer.forwardLoss(dlf.dlarray(torch.rand(4, 4, 3, 1), "SSCB"), torch.rand(4, 4, 3, 2))


def test_trainNetwork_trains_a_segmentation_network_with_it():
    """The first iteration's loss is the reference's on the network's own first scores (a 1×1
    convolution of known weights), from label images as MATLAB's trainNetwork takes them."""
    rng = np.random.default_rng(0)
    X = rng.random((6, 6, 1, 4)).astype(np.float32)
    labels = np.where(X[:, :, 0, :] > 0.5, "bright", "dark").astype(object)
    W, B = np.array([0.7, -0.4]), np.array([-0.2, 0.3])
    conv = dlf.convolution2dLayer(
        1,
        2,
        Weights=torch.tensor(W, dtype=torch.float32).reshape(1, 1, 1, 2),
        Bias=torch.tensor(B, dtype=torch.float32).reshape(1, 1, 2),
    )
    layers = [
        dlf.imageInputLayer([6, 6, 1], Normalization="none"),
        conv,
        dlf.softmaxLayer(),
        dlf.dicePixelClassificationLayer(),
    ]
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=4, Shuffle="never", Verbose=False)
    net, info = dlf.trainNetwork(X, labels, layers, options)
    assert dlf.categories(net.Layers[-1].Classes) == ["bright", "dark"]  # "auto": the sorted label names
    z = X[:, :, 0, :].astype(np.float64)[:, :, None, :] * W[:, None] + B[:, None]  # H×W×C×N
    y = np.exp(z) / np.exp(z).sum(axis=2, keepdims=True)
    t = np.stack([labels == "bright", labels == "dark"], axis=2).astype(np.float64)
    expected = (1 - dice_reference(y, t, 2)).sum() / 4
    assert info.TrainingLoss[0] == pytest.approx(expected, rel=1e-5)
