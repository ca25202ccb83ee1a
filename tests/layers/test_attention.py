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
    with pytest.raises(
        DLFormatError, match=r"has InputSize 5; the \"CBT\" input of size 6×\d+×\d+ has 6 channels"
    ):
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


# -- the options beyond the basic layer, and attentionLayer --------------------------------------


def reference_heads(q, k, v, heads, scale, allowed):
    """MATLAB's attention for one observation in float64: q ``C×Nq``, k ``C×Nk``, v ``Cv×Nk``;
    ``allowed`` ``Nk×Nq`` (True: the query may attend to the key). Returns (``Cv×Nq``, weights
    ``Nk×Nq×heads``); a query with no allowed key gets zero weights."""
    dk, dv = q.shape[0] // heads, v.shape[0] // heads
    out = np.zeros((v.shape[0], q.shape[1]))
    weights = np.zeros((k.shape[1], q.shape[1], heads))
    for h in range(heads):
        scores = scale * k[h * dk : (h + 1) * dk].T @ q[h * dk : (h + 1) * dk]  # keys × queries
        scores = np.where(allowed, scores, -np.inf)
        top = np.where(np.isfinite(scores.max(axis=0)), scores.max(axis=0), 0.0)
        e = np.where(allowed, np.exp(scores - top), 0.0)
        total = e.sum(axis=0)
        w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        weights[:, :, h] = w
        out[h * dv : (h + 1) * dv] = v[h * dv : (h + 1) * dv] @ w
    return out, weights


def projections(layer):
    return {name: getattr(layer, name).detach().double().numpy() for name in layer.learnables}


def self_attention_reference(layer, x_cbt, allowed_per_obs):
    """selfAttentionLayer on a ``C×B×T`` array; ``allowed_per_obs[b]`` the ``T×T`` keys × queries mask."""
    w = projections(layer)
    outputs, scores = [], []
    for b in range(x_cbt.shape[1]):
        x = x_cbt[:, b, :]
        q, k, v = (w[f"{r}Weights"] @ x + w[f"{r}Bias"] for r in ("Query", "Key", "Value"))
        merged, weights = reference_heads(
            q, k, v, layer.NumHeads, 1 / math.sqrt(layer.NumKeyChannels // layer.NumHeads), allowed_per_obs[b]
        )
        outputs.append(w["OutputWeights"] @ merged + w["OutputBias"])
        scores.append(weights)
    return np.stack(outputs, axis=1), np.stack(scores, axis=3)  # C×B×T, Nk×Nq×heads×B


def causal(length):
    keys, queries = np.indices((length, length))
    return keys <= queries


@pytest.mark.parametrize("mask_kind", ["none", "causal", "array2d", "array3d"])
@pytest.mark.parametrize("padded", [False, True])
def test_self_attention_masks_padding_and_scores_match_the_reference(mask_kind, padded):
    torch.manual_seed(1)
    batch, length, channels = 3, 6, 4
    rng = np.random.default_rng(2)
    array = rng.random((length, length, batch)) > 0.4
    array[0] = True  # every query may attend to the first key
    attention_mask = {
        "none": "none",
        "causal": "causal",
        "array2d": torch.as_tensor(array[:, :, 0]),
        "array3d": torch.as_tensor(array).double(),  # numeric 0/1 as MATLAB allows
    }[mask_kind]
    layer = dlf.selfAttentionLayer(
        2,
        8,
        AttentionMask=attention_mask,
        HasPaddingMaskInput=padded,
        HasScoresOutput=True,
        BiasInitializer="narrow-normal",
        dtype=torch.float64,
    )
    x = torch.randn(channels, batch, length, dtype=torch.float64)
    lengths = [6, 4, 2]
    keep = np.array([[t < n for t in range(length)] for n in lengths])  # B × T
    allowed = []
    for b in range(batch):
        base = {
            "none": np.ones((length, length), bool),
            "causal": causal(length),
            "array2d": array[:, :, 0],
            "array3d": array[:, :, b],
        }[mask_kind]
        allowed.append(base & keep[b][:, None] if padded else base)
    inputs = [dlf.dlarray(x, "CBT")]
    if padded:
        inputs.append(dlf.dlarray(torch.as_tensor(keep, dtype=torch.float64)[None], "CBT"))
    Y, scores = layer(*inputs)
    expected, expected_scores = self_attention_reference(layer, x.numpy(), allowed)
    assert dlf.dims(Y) == "CBT" and dlf.dims(scores) == "UUUU"
    assert tuple(scores.shape) == (length, length, 2, batch)
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        dlf.stripdims(scores).detach().numpy(), expected_scores, rtol=1e-10, atol=1e-12
    )


def test_self_attention_without_scores_gives_the_same_output_on_the_fused_path():
    torch.manual_seed(3)
    x = dlf.dlarray(torch.randn(4, 2, 5, dtype=torch.float64), "CBT")
    mask = dlf.dlarray(torch.tensor([[1.0, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.float64)[None], "CBT")
    with_scores = dlf.selfAttentionLayer(
        2, 4, InputSize=4, HasPaddingMaskInput=True, HasScoresOutput=True, dtype=torch.float64
    )
    plain = dlf.selfAttentionLayer(2, 4, InputSize=4, HasPaddingMaskInput=True, dtype=torch.float64)
    plain.load_state_dict(with_scores.state_dict())
    Y, _ = with_scores(x, mask)
    torch.testing.assert_close(dlf.stripdims(plain(x, mask)), dlf.stripdims(Y), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("options", "inputs", "outputs"),
    [
        ({}, ("in",), ("out",)),
        ({"HasPaddingMaskInput": True}, ("in", "mask"), ("out",)),
        ({"HasScoresOutput": True}, ("in",), ("out", "scores")),
        ({"HasPaddingMaskInput": 1, "HasScoresOutput": 1}, ("in", "mask"), ("out", "scores")),
    ],
)
def test_self_attention_ports(options, inputs, outputs):
    layer = dlf.selfAttentionLayer(2, 8, **options)
    assert (layer.InputNames, layer.OutputNames) == (inputs, outputs)
    assert (layer.NumInputs, layer.NumOutputs) == (len(inputs), len(outputs))


def test_self_attention_weights_given_at_construction_fix_the_sizes_and_are_used():
    w = {
        "QueryWeights": torch.randn(4, 3, dtype=torch.float64),
        "KeyWeights": torch.randn(4, 3, dtype=torch.float64),
        "ValueWeights": torch.randn(6, 3, dtype=torch.float64),
        "OutputWeights": torch.randn(5, 6, dtype=torch.float64),
        "QueryBias": torch.randn(4, 1, dtype=torch.float64),
        "KeyBias": torch.randn(4, 1, dtype=torch.float64),
        "ValueBias": torch.randn(6, 1, dtype=torch.float64),
        "OutputBias": torch.randn(5, 1, dtype=torch.float64),
    }
    layer = dlf.selfAttentionLayer(2, 4, NumValueChannels=6, OutputSize=5, **w)
    assert layer.InputSize == 3 and layer.Initialized
    for name, value in w.items():
        assert torch.equal(getattr(layer, name).detach(), value)
    x = torch.randn(3, 2, 4, dtype=torch.float64)
    expected, _ = self_attention_reference(layer, x.numpy(), [np.ones((4, 4), bool)] * 2)
    Y = layer(dlf.dlarray(x, "CBT"))
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10)


def test_self_attention_padding_mask_on_a_spatial_sequence():
    torch.manual_seed(4)
    layer = dlf.selfAttentionLayer(1, 4, HasPaddingMaskInput=True, dtype=torch.float64)
    x = torch.randn(5, 4, 2, dtype=torch.float64)  # S C B
    keep = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)  # B × S
    mask = dlf.dlarray(torch.as_tensor(keep.T, dtype=torch.float64)[:, None, :], "SCB")
    Y = layer(dlf.dlarray(x, "SCB"), mask)
    expected, _ = self_attention_reference(
        layer, x.permute(1, 2, 0).numpy(), [np.ones((5, 5), bool) & keep[b][:, None] for b in range(2)]
    )
    assert dlf.dims(Y) == "SCB"
    np.testing.assert_allclose(dlf.stripdims(Y).permute(1, 2, 0).detach().numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("scale", ["auto", 0.3])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "array"])
def test_attention_layer_matches_the_reference(scale, mask_kind):
    torch.manual_seed(5)
    heads, batch, nq, nk = 2, 3, 4, 6
    q = torch.randn(8, batch, nq, dtype=torch.float64)
    k = torch.randn(8, batch, nk, dtype=torch.float64)
    v = torch.randn(6, batch, nk, dtype=torch.float64)
    rng = np.random.default_rng(6)
    array = rng.random((nk, nq)) > 0.5
    array[0] = True
    keep = np.array([[t < n for t in range(nk)] for n in (6, 3, 1)])
    layer = dlf.attentionLayer(
        heads,
        Scale=scale,
        AttentionMask={"none": "none", "causal": "causal", "array": array}[mask_kind],
        HasPaddingMaskInput=True,
        HasScoresOutput=True,
    )
    mask = dlf.dlarray(torch.as_tensor(keep, dtype=torch.float64)[None], "CBT")
    Y, scores = layer(dlf.dlarray(q, "CBT"), dlf.dlarray(k, "CBT"), dlf.dlarray(v, "CBT"), mask)
    factor = 1 / math.sqrt(8 // heads) if scale == "auto" else scale
    base = {
        "none": np.ones((nk, nq), bool),
        "causal": np.indices((nk, nq))[0] <= np.indices((nk, nq))[1],
        "array": array,
    }
    for b in range(batch):
        out, weights = reference_heads(
            q[:, b].numpy(),
            k[:, b].numpy(),
            v[:, b].numpy(),
            heads,
            factor,
            base[mask_kind] & keep[b][:, None],
        )
        np.testing.assert_allclose(dlf.stripdims(Y)[:, b].numpy(), out, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dlf.stripdims(scores)[..., b].numpy(), weights, rtol=1e-10, atol=1e-12)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (6, batch, nq)


def test_attention_layer_ports_defaults_and_training_dropout():
    layer = dlf.attentionLayer(4)
    assert layer.InputNames == ("query", "key", "value") and layer.OutputNames == ("out",)
    assert (layer.Scale, layer.AttentionMask, layer.DropoutProbability) == ("auto", "none", 0.0)
    assert (layer.HasPaddingMaskInput, layer.HasScoresOutput, layer.Name) == (False, False, "")
    assert layer.learnables == ()
    layer = dlf.attentionLayer(1, DropoutProbability=0.5, HasScoresOutput=True)
    x = dlf.dlarray(torch.randn(4, 2, 6), "CBT")
    _, predicted = layer.predict(x, x, x)
    torch.testing.assert_close(dlf.stripdims(predicted).sum(0), torch.ones(6, 1, 2))
    torch.manual_seed(0)
    _, trained = layer(x, x, x, training=True)
    assert bool((dlf.stripdims(trained) == 0).any())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dlf.attentionLayer(0), r"NumHeads"),
        (lambda: dlf.attentionLayer(2, Scale="big"), r"Scale must be one of"),
        (lambda: dlf.attentionLayer(2, AttentionMask="upper"), r"AttentionMask must be"),
        (lambda: dlf.attentionLayer(2, AttentionMask=torch.full((3, 3), 2.0)), r"zeros and ones"),
        (lambda: dlf.selfAttentionLayer(2, 8, AttentionMask=torch.ones(3)), r"numKeys × numQueries"),
        (lambda: dlf.attentionLayer(2, HasScoresOutput="yes"), r"HasScoresOutput"),
        (lambda: dlf.attentionLayer(2, DropoutProbability=1), r"DropoutProbability"),
    ],
)
def test_attention_bad_options(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()


def test_attention_layer_call_errors_name_the_layer():
    layer = dlf.attentionLayer(3, Name="cross")
    x = dlf.dlarray(torch.randn(4, 2, 5), "CBT")
    with pytest.raises(DLFormatError, match=r"cross.*numHeads \(3\) must divide"):
        layer(x, x, x)
    with pytest.raises(DLFormatError, match=r"takes 3 inputs \(query, key, value\); got 4"):
        dlf.attentionLayer(2)(x, x, x, x)
    with pytest.raises(DLFormatError, match=r"AttentionMask of size 3×3"):
        dlf.attentionLayer(2, AttentionMask=torch.ones(3, 3))(x, x, x)


def test_the_mask_input_and_scores_output_are_network_ports():
    net = dlf.dlnetwork(Initialize=False)
    net = dlf.addLayers(
        net,
        [
            dlf.sequenceInputLayer(4, Name="x"),
            dlf.selfAttentionLayer(2, 8, HasPaddingMaskInput=True, HasScoresOutput=True, Name="sa"),
            dlf.indexing1dLayer("last", Name="last"),
        ],
    )
    net = dlf.connectLayers(dlf.addLayers(net, dlf.sequenceInputLayer(1, Name="m")), "m", "sa/mask")
    net = dlf.initialize(net)
    assert net.InputNames == ("x", "m") and set(net.OutputNames) == {"sa/scores", "last"}
    X = dlf.dlarray(torch.randn(4, 2, 6), "CBT")
    mask = dlf.dlarray(torch.tensor([[1.0, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])[None], "CBT")
    Y, scores = dlf.predict(net, X, mask, Outputs=["last", "sa/scores"])
    assert (dlf.dims(Y), dlf.dims(scores), tuple(scores.shape)) == ("CB", "UUUU", (6, 6, 2, 2))
    weights = dlf.stripdims(scores).detach()
    assert bool((weights[4:, :, :, 0] == 0).all()) and bool((weights[4:, :, :, 1] > 0).all())


# -- "CB" data: each observation a sequence of one element (issue 23 item 8) -----------------------


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_self_attention_on_cb_data_is_one_element_sequences(mask):
    """A real CNN-BiLSTM-attention script feeds selfAttentionLayer the "CB" output of
    bilstmLayer(..., OutputMode="last"). Each observation is one element: its softmax over one key
    is 1, so the output is OutputWeights·(ValueWeights·x + ValueBias) + OutputBias, and the weights
    the scores output shows are all 1."""
    layer = dlf.selfAttentionLayer(2, 8, AttentionMask=mask, HasScoresOutput=True, dtype=torch.float64)
    x = np.random.default_rng(3).standard_normal((6, 4))
    Y, scores = layer(dlf.dlarray(torch.from_numpy(x), "CB"))
    w = projections(layer)
    expected = w["OutputWeights"] @ (w["ValueWeights"] @ x + w["ValueBias"]) + w["OutputBias"]
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (6, 4)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-14)
    # the general reference on a length-1 sequence agrees, and so does the layer on "CBT" data
    reference, weights = self_attention_reference(layer, x[:, :, None], [np.ones((1, 1), bool)] * 4)
    np.testing.assert_allclose(expected, reference[:, :, 0], rtol=1e-12)
    assert tuple(scores.shape) == (1, 1, 2, 4) and np.array_equal(weights, np.ones((1, 1, 2, 4)))
    np.testing.assert_array_equal(dlf.extractdata(scores).numpy(), weights)
    sequence = layer(dlf.dlarray(torch.from_numpy(x)[:, :, None], "CBT"))[0]
    torch.testing.assert_close(dlf.extractdata(sequence)[:, :, 0], dlf.extractdata(Y), rtol=0, atol=0)


def test_self_attention_on_cb_data_in_a_network_after_a_bilstm():
    layers = [
        dlf.sequenceInputLayer(3),
        dlf.bilstmLayer(4, OutputMode="last"),
        dlf.selfAttentionLayer(1, 2),
        dlf.fullyConnectedLayer(1),
    ]
    net = dlf.dlnetwork(layers)
    Y = net.predict(dlf.dlarray(torch.randn(3, 5, 7), "CBT"))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (1, 5)
    assert tuple(net.Layers[2].QueryWeights.shape) == (2, 8)
