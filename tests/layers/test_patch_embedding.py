"""patchEmbeddingLayer against a NumPy loop over patches written from MATLAB's definition
(a stride-PatchSize convolution, then the patch grid flattened column- or row-major)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def reference(x, weights, bias, patch, mode):
    """``x``: spatial sizes, then C, then the rest (B, T), MATLAB's order; one loop per patch."""
    count = len(patch)
    grid = [n // p for n, p in zip(x.shape[:count], patch, strict=True)]
    rest = x.shape[count + 1 :]
    out = np.zeros((math.prod(grid), weights.shape[-1], *rest))
    for position in itertools.product(*(range(g) for g in grid)):
        window = tuple(slice(i * p, (i + 1) * p) for i, p in zip(position, patch, strict=True))
        block = x[window]  # patch × C × rest
        value = np.tensordot(block, weights, axes=(list(range(count + 1)), list(range(count + 1))))
        value = np.moveaxis(value, -1, 0) + bias.reshape((-1,) + (1,) * len(rest))
        sizes = grid if mode == "column-major" else grid[::-1]
        index = position if mode == "column-major" else position[::-1]
        flat = sum(i * math.prod(sizes[:k]) for k, i in enumerate(index))  # first index fastest
        out[flat] = value
    return out


@pytest.mark.parametrize("mode", ["column-major", "row-major"])
@pytest.mark.parametrize(
    ("fmt", "sizes", "patch", "out"),
    [
        ("SSCB", (8, 12, 3, 2), [4, 3], "SCB"),
        ("SSCB", (9, 7, 2, 3), [2, 3], "SCB"),  # remainders left out
        ("SCB", (10, 2, 3), 5, "SCB"),
        ("SSSCB", (4, 6, 4, 2, 2), 2, "SCB"),
        ("SSCBT", (4, 6, 3, 2, 3), [2, 3], "SCBT"),
        ("SSC", (6, 4, 2), [3, 2], "SC"),
    ],
)
def test_matches_the_reference(mode, fmt, sizes, patch, out):
    torch.manual_seed(0)
    layer = dlf.patchEmbeddingLayer(
        patch, 5, SpatialFlattenMode=mode, BiasInitializer="narrow-normal", dtype=torch.float64
    )
    x = torch.randn(sizes, dtype=torch.float64)
    Y = layer(dlf.dlarray(x, fmt))
    patches = (patch,) * fmt.count("S") if isinstance(patch, int) else tuple(patch)
    assert layer.PatchSize == patches and layer.InputSize == sizes[fmt.count("S")]
    assert tuple(layer.Weights.shape) == (*patches, sizes[fmt.count("S")], 5)
    assert tuple(layer.Bias.shape) == (5, 1)
    expected = reference(
        x.numpy(), layer.Weights.detach().numpy(), layer.Bias.detach().numpy(), patches, mode
    )
    assert dlf.dims(Y) == out
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_the_pages_flatten_example():
    # a 3×3 grid of patches numbered 1..9 row by row: column-major reads down the columns
    weights = torch.ones(1, 1, 1, 1, dtype=torch.float64)
    grid = torch.arange(1.0, 10.0, dtype=torch.float64).reshape(3, 3)  # A = [1 2 3; 4 5 6; 7 8 9]
    x = dlf.dlarray(grid[:, :, None], "SSC")
    for mode, expected in (("column-major", [1, 4, 7, 2, 5, 8, 3, 6, 9]), ("row-major", list(range(1, 10)))):
        layer = dlf.patchEmbeddingLayer(1, 1, SpatialFlattenMode=mode, Weights=weights)
        assert dlf.stripdims(layer(x))[:, 0].tolist() == expected


def test_defaults_and_glorot_fans():
    layer = dlf.patchEmbeddingLayer([4, 4], 64, InputSize=3)
    assert (layer.SpatialFlattenMode, layer.WeightsInitializer, layer.BiasInitializer) == (
        "column-major",
        "glorot",
        "zeros",
    )
    assert (layer.WeightL2Factor, layer.BiasL2Factor, layer.BiasLearnRateFactor) == (1.0, 1.0, 1.0)
    bound = math.sqrt(6 / (16 * 3 + 16 * 64))
    assert (
        float(layer.Weights.detach().abs().max()) <= bound
        and float(layer.Weights.detach().abs().max()) > 0.9 * bound
    )
    assert torch.equal(layer.Bias, torch.zeros(64, 1))


def test_weights_given_fix_input_size_and_a_scalar_patch_sizes():
    layer = dlf.patchEmbeddingLayer(2, 4, Weights=torch.randn(2, 2, 3, 4))
    assert (layer.PatchSize, layer.InputSize) == ((2, 2), 3)
    assert layer.Initialized


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dlf.patchEmbeddingLayer(0, 4), r"PatchSize must be a positive integer or a row vector"),
        (lambda: dlf.patchEmbeddingLayer([2, 0], 4), r"PatchSize must be"),
        (lambda: dlf.patchEmbeddingLayer(2, 4, SpatialFlattenMode="diagonal"), r"SpatialFlattenMode"),
        (lambda: dlf.patchEmbeddingLayer(2, 4, BiasInitializer="glorot"), r"BiasInitializer"),
        (lambda: dlf.patchEmbeddingLayer(2, 4, InputSize=3), r"scalar PatchSize"),
        (lambda: dlf.patchEmbeddingLayer([2, 2], 4, Weights=torch.ones(2, 3, 3, 4)), r"Weights"),
    ],
)
def test_bad_options(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()


@pytest.mark.parametrize(
    ("layer", "fmt", "sizes", "message"),
    [
        (lambda: dlf.patchEmbeddingLayer([2, 2], 4), "SCB", (6, 3, 2), r"needs 2 spatial dimensions"),
        (lambda: dlf.patchEmbeddingLayer([4, 4], 4), "SSCB", (3, 8, 3, 2), r"at least its patch size"),
        (lambda: dlf.patchEmbeddingLayer(2, 4), "CBT", (3, 2, 5), r'"S"'),
        (lambda: dlf.patchEmbeddingLayer([2, 2], 4, InputSize=2), "SSCB", (4, 4, 3, 2), r"InputSize 2"),
    ],
)
def test_bad_inputs(layer, fmt, sizes, message):
    with pytest.raises(DLFormatError, match=message):
        layer()(dlf.dlarray(torch.randn(sizes), fmt))


def test_a_vision_transformer_front_end_as_matlab_builds_it():
    # the layout of MATLAB's ViT networks: patches, a class token, learned positions added
    net = dlf.dlnetwork(Initialize=False)
    net = dlf.addLayers(
        net,
        [
            dlf.imageInputLayer([16, 16, 3], Normalization="none", Name="imageinput"),
            dlf.patchEmbeddingLayer([4, 4], 8, Name="embedding", SpatialFlattenMode="row-major"),
            dlf.embeddingConcatenationLayer(Name="clsembed_concat"),
        ],
    )
    net = dlf.addLayers(net, dlf.positionEmbeddingLayer(8, 17, Name="posembed_input"))
    net = dlf.addLayers(
        net,
        [
            dlf.additionLayer(2, Name="add"),
            dlf.selfAttentionLayer(2, 8, Name="mha"),
            dlf.indexing1dLayer("first", Name="cls"),
            dlf.fullyConnectedLayer(4, Name="head"),
        ],
    )
    net = dlf.connectLayers(net, "clsembed_concat", "posembed_input")
    net = dlf.connectLayers(net, "clsembed_concat", "add/in1")
    net = dlf.connectLayers(net, "posembed_input", "add/in2")
    net = dlf.initialize(net)
    Y = dlf.predict(net, dlf.dlarray(torch.randn(16, 16, 3, 2), "SSCB"))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (4, 2)
