"""fullyConnectedLayer: MATLAB's column-major flattening of S and C, lazy InputSize, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def reference(layer, x: np.ndarray, fmt: str) -> np.ndarray:
    """MATLAB: reshape the S and C dimensions column-major into one vector per (B, T) index."""
    W = layer.Weights.detach().double().numpy()
    b = layer.Bias.detach().double().numpy()
    features = [size for size, label in zip(x.shape, fmt, strict=True) if label in "SC"]
    kept = x.shape[len(features) :]
    columns = x.reshape(int(np.prod(features)), int(np.prod(kept)), order="F")
    result = W @ columns + b
    return result.reshape((W.shape[0], *kept), order="F")


@pytest.mark.parametrize(
    ("fmt", "shape", "out_fmt"),
    [
        ("CB", (4, 3), "CB"),
        ("SSCB", (2, 3, 4, 5), "CB"),
        ("CBT", (4, 2, 6), "CBT"),
        ("SCBT", (3, 2, 2, 5), "CBT"),
        ("CT", (4, 6), "CT"),
        ("SSC", (2, 2, 3), "C"),
    ],
)
def test_matches_matlabs_column_major_reference(fmt, shape, out_fmt):
    layer = dlf.fullyConnectedLayer(7, dtype=torch.float64, BiasInitializer="narrow-normal")
    x = torch.randn(shape, dtype=torch.float64)
    Y = layer(dlf.dlarray(x, fmt))
    assert dlf.dims(Y) == out_fmt
    assert layer.InputSize == int(np.prod([s for s, label in zip(shape, fmt, strict=True) if label in "SC"]))
    np.testing.assert_allclose(
        dlf.stripdims(Y).detach().numpy(), reference(layer, x.numpy(), fmt).reshape(Y.shape), rtol=1e-12
    )


def test_first_spatial_dimension_varies_fastest():
    """Weights column j reads element j of the column-major vector: column 1 is S1=2, S2=1, C=1."""
    layer = dlf.fullyConnectedLayer(1, InputSize=12, WeightsInitializer="zeros")
    with torch.no_grad():
        layer.Weights[0, 1] = 1
    x = torch.arange(12.0).reshape(3, 2, 2).permute(2, 1, 0)  # x[s1, s2, c] = s1 + 2*s2 + 4*c
    Y = layer(dlf.dlarray(x[..., None], "SSCB"))
    assert dlf.stripdims(Y).item() == 1.0


def test_weights_given_fix_input_size_and_are_checked():
    W = np.random.default_rng(0).standard_normal((3, 8))
    layer = dlf.fullyConnectedLayer(3, Weights=W)
    assert layer.InputSize == 8 and layer.Weights.dtype == torch.float64 and tuple(layer.Bias.shape) == (3, 1)
    with pytest.raises(DLFormatError, match=r"FullyConnectedLayer Weights must have shape 3×5; got 3×8"):
        dlf.fullyConnectedLayer(3, InputSize=5, Weights=W)
    with pytest.raises(
        DLFormatError, match=r"Weights must be a matrix of size 3×InputSize; got a 1-D array of size 8$"
    ):
        dlf.fullyConnectedLayer(3, Weights=W[0])  # not "InputSize 'auto'", which nothing set
    with pytest.raises(
        DLFormatError,
        match=r"has InputSize 8; the \"CB\" input of size 4×2 has 4 features \(S and C flattened\)",
    ):
        layer(dlf.dlarray(torch.randn(4, 2, dtype=torch.float64), "CB"))


def test_learnables_wait_for_input_size_and_say_so():
    layer = dlf.fullyConnectedLayer(3)
    assert layer.Weights is None and not layer.Initialized and "Weights: []" in repr(layer)
    with pytest.raises(
        DLFormatError, match=r'InputSize "auto": its Weights gets its size from the first input'
    ):
        layer.Weights = np.zeros((3, 4))
    assert layer.BiasL2Factor == 0


def test_u_dimensions_are_refused():
    with pytest.raises(DLFormatError, match=r'cannot take format "CBU": "U" dimensions'):
        dlf.fullyConnectedLayer(3)(dlf.dlarray(torch.randn(2, 3, 4), "CBU"))


def test_gradients_reach_weights_and_bias():
    layer = dlf.fullyConnectedLayer(2, dtype=torch.float64)
    x = torch.randn(3, 4, dtype=torch.float64)
    dlf.stripdims(layer(dlf.dlarray(x, "CB"))).sum().backward()
    np.testing.assert_allclose(layer.Weights.grad.numpy(), np.tile(x.numpy().sum(axis=1), (2, 1)))
    np.testing.assert_allclose(layer.Bias.grad.numpy(), np.full((2, 1), 4.0))
