"""selfAttentionLayer against a float64 NumPy reference written from MATLAB's description."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def reference_attention(layer, x_bnc: np.ndarray, causal: bool) -> np.ndarray:
    """(batch, sequence, channels) in, (batch, sequence, OutputSize) out, in float64."""
    w = {name: getattr(layer, name).detach().double().numpy() for name in layer.learnables}
    heads, key_channels = layer.NumHeads, layer.NumKeyChannels
    value_channels = layer.NumValueChannels
    dk, dv = key_channels // heads, value_channels // heads
    batch, length, _ = x_bnc.shape
    out = np.zeros((batch, length, layer.OutputSize))
    for b in range(batch):
        x = x_bnc[b].T  # channels × sequence, MATLAB's orientation
        q = w["QueryWeights"] @ x + w["QueryBias"]
        k = w["KeyWeights"] @ x + w["KeyBias"]
        v = w["ValueWeights"] @ x + w["ValueBias"]
        merged = np.zeros((value_channels, length))
        for h in range(heads):
            qh, kh, vh = q[h * dk : (h + 1) * dk], k[h * dk : (h + 1) * dk], v[h * dv : (h + 1) * dv]
            scores = kh.T @ qh / math.sqrt(dk)  # keys × queries
            if causal:
                keys, queries = np.indices(scores.shape)
                scores[keys > queries] = -np.inf  # query m never sees key n > m
            weights = np.exp(scores - scores.max(axis=0))
            weights /= weights.sum(axis=0)
            merged[h * dv : (h + 1) * dv] = vh @ weights
        out[b] = (w["OutputWeights"] @ merged + w["OutputBias"]).T
    return out


@pytest.mark.parametrize("mask", ["none", "causal"])
@pytest.mark.parametrize(
    ("heads", "keys", "values", "output"), [(1, 4, "auto", "auto"), (2, 8, 6, 5), (4, 8, 4, 3)]
)
def test_matches_the_reference(mask, heads, keys, values, output):
    torch.manual_seed(0)
    layer = dlf.selfAttentionLayer(
        heads,
        keys,
        NumValueChannels=values,
        OutputSize=output,
        AttentionMask=mask,
        dtype=torch.float64,
        BiasInitializer="narrow-normal",
    )
    x = torch.randn(3, 5, 7, dtype=torch.float64)  # B T C
    Y = layer(dlf.dlarray(x, "BTC"))
    assert dlf.dims(Y) == "CBT"
    expected = reference_attention(layer, x.numpy(), mask == "causal")
    np.testing.assert_allclose(dlf.stripdims(Y, "BTC").detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    assert layer.OutputSize == (7 if output == "auto" else output)


def test_causal_mask_equals_sdpa_with_a_lower_triangular_mask():
    """The documented convention: element m attends to 0..m, as scaled_dot_product_attention's boolean tril mask."""
    torch.manual_seed(1)
    layer = dlf.selfAttentionLayer(2, 4, AttentionMask="causal", InputSize=3)
    x = torch.randn(2, 6, 3)
    rows = [
        torch.nn.functional.linear(x, getattr(layer, f"{r}Weights"), getattr(layer, f"{r}Bias")[:, 0])
        for r in ("Query", "Key", "Value")
    ]
    q, k, v = (t.view(2, 6, 2, 2).transpose(1, 2) for t in rows)
    allowed = torch.ones(6, 6, dtype=torch.bool).tril()
    attended = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    expected = torch.nn.functional.linear(
        attended.transpose(1, 2).reshape(2, 6, 4), layer.OutputWeights, layer.OutputBias[:, 0]
    )
    got = dlf.stripdims(layer(dlf.dlarray(x, "BTC")), "BTC")
    torch.testing.assert_close(got, expected)


def test_causal_outputs_do_not_depend_on_later_elements():
    layer = dlf.selfAttentionLayer(2, 4, AttentionMask="causal", InputSize=3)
    x = torch.randn(3, 1, 8)
    changed = x.clone()
    changed[:, :, 5:] = torch.randn(3, 1, 3)
    first, second = (dlf.stripdims(layer(dlf.dlarray(t, "CBT"))) for t in (x, changed))
    torch.testing.assert_close(first[:, :, :5], second[:, :, :5])
    assert not torch.allclose(first[:, :, 5:], second[:, :, 5:])


@pytest.mark.parametrize(
    ("fmt", "shape", "order"),
    [
        ("CT", (3, 6), "CT"),
        ("SCB", (6, 3, 2), "SCB"),
        ("TCB", (6, 3, 2), "CBT"),
        ("SCBT", (2, 3, 2, 6), None),
    ],
)
def test_attends_over_t_or_the_single_s(fmt, shape, order):
    layer = dlf.selfAttentionLayer(1, 4, InputSize=3, dtype=torch.float64)
    X = dlf.dlarray(torch.randn(shape, dtype=torch.float64), fmt)
    if order is None:
        with pytest.raises(
            DLFormatError, match=r'attends over "T", or over a single "S" when there is no "T"; .* got "SCBT"'
        ):
            layer(X)
        return
    Y = layer(X)
    assert dlf.dims(Y) == order
    x_bnc = dlf.stripdims(X, {"CT": "BTC", "SCB": "BSC", "CBT": "BTC"}[order]).numpy()
    expected = reference_attention(layer, x_bnc, False)
    back = dlf.stripdims(Y, {"CT": "BTC", "SCB": "BSC", "CBT": "BTC"}[order]).detach().numpy()
    np.testing.assert_allclose(back, expected, rtol=1e-10, atol=1e-12)


def test_dropout_acts_in_training_only():
    layer = dlf.selfAttentionLayer(1, 4, DropoutProbability=0.5, InputSize=3)
    X = dlf.dlarray(torch.randn(3, 2, 16), "CBT")
    layer.eval()
    torch.testing.assert_close(dlf.stripdims(layer(X)), dlf.stripdims(layer(X)))
    layer.train()
    torch.manual_seed(0)
    first = dlf.stripdims(layer(X))
    torch.manual_seed(1)
    assert not torch.allclose(first, dlf.stripdims(layer(X)))


def test_input_size_is_fixed_by_the_first_input_and_checked_after():
    layer = dlf.selfAttentionLayer(2, 4)
    assert layer.InputSize == "auto" and layer.QueryWeights is None and not layer.Initialized
    layer(dlf.dlarray(torch.randn(5, 2, 3), "CBT"))
    assert (layer.InputSize, layer.OutputSize) == (5, 5)
    assert tuple(layer.QueryWeights.shape) == (4, 5) and tuple(layer.OutputWeights.shape) == (5, 4)
    with pytest.raises(DLFormatError, match=r"has InputSize 5; the \"CBT\" input of size 6×\d+×\d+ has 6 channels"):
        layer(dlf.dlarray(torch.randn(6, 2, 3), "CBT"))


def test_weight_factors_cover_all_four_weights_and_bias_l2_defaults_to_zero():
    layer = dlf.selfAttentionLayer(1, 4, InputSize=3, WeightLearnRateFactor=2)
    assert layer.BiasL2Factor == 0 and layer.WeightL2Factor == 1
    assert all(
        dlf.getLearnRateFactor(layer, name) == 2
        for name in ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
    )
    dlf.setLearnRateFactor(layer, "KeyWeights", 0.5)
    assert layer.WeightLearnRateFactor == (2.0, 0.5, 2.0, 2.0)


def test_glorot_bounds_use_input_and_output_channels():
    layer = dlf.selfAttentionLayer(1, 400, InputSize=200)
    bound = math.sqrt(6 / (200 + 400))
    assert layer.QueryWeights.abs().max() <= bound and layer.QueryWeights.abs().max() > 0.9 * bound
    assert torch.equal(layer.QueryBias, torch.zeros(400, 1))


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((3, 8), {}, r"NumKeyChannels \(8\) must be divisible by NumHeads \(3\)"),
        ((2, 8), {"NumValueChannels": 5}, r"NumValueChannels \(5\) must be divisible by NumHeads \(2\)"),
        ((2, 8), {"AttentionMask": "upper"}, r"AttentionMask must be one of"),
        ((2, 8), {"DropoutProbability": 1}, r"DropoutProbability must be a number in \[0, 1\)"),
    ],
)
def test_bad_options(args, kwargs, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.selfAttentionLayer(*args, **kwargs)
