"""``attention`` against a float64 NumPy reference of MATLAB's definition.

Heads take consecutive channel blocks; the scores ``Scale * k'q`` (``numKeys × numQueries``) go
through a softmax over the keys; masks: "causal" (query m never attends key n > m), AttentionMask
arrays (``numKeys × numQueries (× numObservations)``, nonzero = allowed), PaddingMask
(``numObservations × numKeys``, zero = padding); the weights output is ``numKeys × numQueries ×
numHeads × numObservations``. The sequence is ``T``, or the single ``S`` when there is no ``T``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def canonical(fmt: str) -> str:
    return "".join(sorted(fmt, key=RANK.__getitem__))


def layout(x: np.ndarray, fmt: str) -> np.ndarray:
    """(channels, sequence, batch) data laid out in the order of ``fmt`` (C, T or one S, maybe B)."""
    sequence = "T" if "T" in fmt else "S"
    source = "C" + sequence + "B"
    if "B" not in fmt:
        assert x.shape[2] == 1
        x, source = x[:, :, 0], source[:2]
    return x.transpose([source.index(label) for label in fmt])


def reference(q, k, v, heads, scale="auto", allowed=None):
    """MATLAB's attention on (channels, sequence, batch) arrays; ``allowed`` is numKeys × numQueries
    × numObservations (True: the query may attend to the key). A query with no key to attend to
    gets zero weights (dlformat's choice, that of torch's fused kernel)."""
    keys, queries, batch = k.shape[1], q.shape[1], q.shape[2]
    dq, dv = q.shape[0] // heads, v.shape[0] // heads
    if scale == "auto":
        scale = 1 / math.sqrt(k.shape[0] / heads)
    if allowed is None:
        allowed = np.ones((keys, queries, batch), dtype=bool)
    Y = np.zeros((v.shape[0], queries, batch))
    W = np.zeros((keys, queries, heads, batch))
    for b in range(batch):
        for h in range(heads):
            qh, kh = q[h * dq : (h + 1) * dq, :, b], k[h * dq : (h + 1) * dq, :, b]
            vh = v[h * dv : (h + 1) * dv, :, b]
            scores = scale * kh.T @ qh  # numKeys × numQueries
            for m in range(queries):
                mask = allowed[:, m, b]
                if not mask.any():
                    continue
                e = np.where(mask, np.exp(scores[:, m] - scores[mask, m].max()), 0.0)
                W[:, m, h, b] = e / e.sum()
            Y[h * dv : (h + 1) * dv, :, b] = vh @ W[:, :, h, b]
    return Y, W


def causal(keys, queries, batch):
    n, m = np.meshgrid(np.arange(keys), np.arange(queries), indexing="ij")
    return np.repeat((n <= m)[:, :, None], batch, axis=2)


def rng_data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def binary(shape, seed, always=None):
    """0/1 float array; index ``always`` (e.g. the first key) set to 1 so no query is left without keys."""
    mask = (np.random.default_rng(seed).uniform(size=shape) < 0.6).astype(np.float64)
    if always is not None:
        mask[always] = 1.0
    return mask


def call(fmt, q, k, v, heads, return_weights, **options):
    inputs = [dlf.dlarray(torch.from_numpy(layout(x, fmt)), fmt) for x in (q, k, v)]
    result = F.attention(*inputs, heads, ReturnWeights=return_weights, **options)
    return result if return_weights else (result, None)


def check(result, expected, fmt, weights=None, expected_weights=None, atol=1e-12):
    assert dlf.dims(result) == canonical(fmt)
    want = layout(expected, canonical(fmt))
    assert tuple(result.shape) == want.shape
    np.testing.assert_allclose(dlf.extractdata(result).numpy(), want, rtol=0, atol=atol)
    if weights is not None:
        assert isinstance(weights, dlf.DLArray) and dlf.dims(weights) == ""
        assert tuple(weights.shape) == expected_weights.shape
        np.testing.assert_allclose(dlf.extractdata(weights).numpy(), expected_weights, rtol=0, atol=atol)


# fmt, query channels, value channels, numQueries, numKeys, batch, heads
SHAPES = [
    pytest.param("CBT", 4, 4, 5, 5, 2, 1, id="CBT-1-head"),
    pytest.param("CBT", 4, 4, 5, 5, 2, 2, id="CBT-2-heads"),
    pytest.param("CBT", 4, 4, 3, 3, 2, 4, id="CBT-4-heads-of-1"),
    pytest.param("TCB", 6, 6, 4, 4, 3, 3, id="TCB"),
    pytest.param("BTC", 4, 6, 3, 5, 2, 2, id="BTC-cross"),
    pytest.param("CBT", 4, 6, 3, 5, 2, 2, id="CBT-cross-value-channels"),
    pytest.param("CBT", 4, 2, 6, 2, 1, 2, id="CBT-more-queries"),
    pytest.param("CT", 4, 4, 5, 5, 1, 2, id="CT"),
    pytest.param("SCB", 4, 4, 5, 5, 2, 2, id="SCB"),
    pytest.param("SC", 6, 3, 4, 4, 1, 3, id="SC"),
]


@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
@pytest.mark.parametrize(("fmt", "cq", "cv", "nq", "nk", "batch", "heads"), SHAPES)
def test_no_mask(fmt, cq, cv, nq, nk, batch, heads, return_weights):
    q, k, v = rng_data((cq, nq, batch), 1), rng_data((cq, nk, batch), 2), rng_data((cv, nk, batch), 3)
    Y, W = call(fmt, q, k, v, heads, return_weights)
    expected, expected_weights = reference(q, k, v, heads)
    check(Y, expected, fmt, W, expected_weights)
    assert Y.dtype == torch.float64


@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
@pytest.mark.parametrize(
    ("fmt", "cq", "cv", "nq", "nk", "batch", "heads", "options", "allowed"),
    [
        pytest.param("CBT", 4, 4, 5, 5, 2, 2, {"Scale": 0.3}, None, id="scale"),
        pytest.param("CBT", 4, 4, 5, 5, 2, 2, {"Scale": -1.5}, None, id="negative-scale"),
        pytest.param("CBT", 4, 4, 5, 5, 2, 2, {"AttentionMask": "causal"}, causal(5, 5, 2), id="causal"),
        pytest.param("CT", 4, 4, 5, 5, 1, 2, {"AttentionMask": "Causal"}, causal(5, 5, 1), id="causal-CT"),
        pytest.param("SCB", 4, 4, 4, 4, 2, 1, {"AttentionMask": "causal"}, causal(4, 4, 2), id="causal-SCB"),
        pytest.param("CBT", 4, 6, 3, 5, 2, 2, {"AttentionMask": "causal"}, causal(5, 3, 2), id="causal-cross"),
        pytest.param(
            "CBT", 4, 4, 4, 6, 2, 2,
            {"AttentionMask": binary((6, 4), 4, always=(0, slice(None)))},
            binary((6, 4), 4, always=(0, slice(None)))[:, :, None].repeat(2, 2) > 0,
            id="mask-2D",
        ),
        pytest.param(
            "TCB", 4, 4, 4, 6, 3, 2,
            {"AttentionMask": binary((6, 4, 3), 5, always=(2, slice(None), slice(None))) > 0},
            binary((6, 4, 3), 5, always=(2, slice(None), slice(None))) > 0,
            id="mask-3D-logical",
        ),
        pytest.param(
            "CBT", 4, 4, 4, 5, 2, 2,
            {"PaddingMask": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1.0]])},
            np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).T[:, None, :].repeat(4, 1) > 0,
            id="padding",
        ),
        pytest.param(
            "CBT", 4, 4, 5, 5, 2, 2,
            {"PaddingMask": np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1.0]]), "AttentionMask": "causal"},
            (np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]]).T[:, None, :] > 0) & causal(5, 5, 2),
            id="padding-and-causal",
        ),
        pytest.param(
            "CBT", 4, 4, 4, 5, 2, 1,
            {
                "PaddingMask": np.array([[1, 1, 1, 1, 0], [1, 0, 1, 1, 1.0]]),
                "AttentionMask": binary((5, 4), 6, always=(0, slice(None))),
                "Scale": 0.7,
            },
            (np.array([[1, 1, 1, 1, 0], [1, 0, 1, 1, 1]]).T[:, None, :] > 0)
            & (binary((5, 4), 6, always=(0, slice(None)))[:, :, None] > 0),
            id="padding-and-mask-and-scale",
        ),
    ],
)  # fmt: skip
def test_scale_and_masks(fmt, cq, cv, nq, nk, batch, heads, options, allowed, return_weights):
    q, k, v = rng_data((cq, nq, batch), 7), rng_data((cq, nk, batch), 8), rng_data((cv, nk, batch), 9)
    Y, W = call(fmt, q, k, v, heads, return_weights, **options)
    expected, expected_weights = reference(q, k, v, heads, options.get("Scale", "auto"), allowed)
    check(Y, expected, fmt, W, expected_weights)


def test_hand_example_one_head():
    """Two keys, one query: weights softmax([k1·q, k2·q] / sqrt(2))."""
    q = torch.tensor([[1.0], [0.0]], dtype=torch.float64)  # 2(C) × 1(T)
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)  # 2(C) × 2(T)
    v = torch.tensor([[10.0, 20.0]], dtype=torch.float64)  # 1(C) × 2(T)
    Y, W = F.attention(
        dlf.dlarray(q, "CT"), dlf.dlarray(k, "CT"), dlf.dlarray(v, "CT"), 1, ReturnWeights=True
    )
    e = math.exp(1 / math.sqrt(2))
    weights = [e / (e + 1), 1 / (e + 1)]
    assert dlf.dims(Y) == "CT" and tuple(Y.shape) == (1, 1) and tuple(W.shape) == (2, 1, 1, 1)
    np.testing.assert_allclose(dlf.extractdata(W).reshape(-1).numpy(), weights, rtol=1e-14)
    assert dlf.extractdata(Y).item() == pytest.approx(10 * weights[0] + 20 * weights[1], rel=1e-14)


@pytest.mark.parametrize("scale", ["AUTO", "Auto", np.float64(0.5), torch.tensor(0.5), 0.5, 2])
def test_scale_forms(scale):
    q, k = rng_data((4, 3, 2), 10), rng_data((4, 3, 2), 11)
    Y, W = call("CBT", q, k, k, 2, True, Scale=scale)
    value = "auto" if isinstance(scale, str) else float(scale)
    expected, expected_weights = reference(q, k, k, 2, value)
    check(Y, expected, "CBT", W, expected_weights)


def test_weights_sum_to_one_over_keys_and_respect_the_causal_mask():
    q, k = rng_data((4, 5, 3), 12), rng_data((4, 5, 3), 13)
    _, W = call("CBT", q, k, k, 2, True, AttentionMask="causal")
    weights = dlf.extractdata(W).numpy()  # numKeys × numQueries × numHeads × numObservations
    np.testing.assert_allclose(weights.sum(axis=0), 1.0, rtol=1e-14)
    for n in range(5):
        for m in range(5):
            assert (weights[n, m] == 0).all() == (n > m)


# -- mask forms --------------------------------------------------------------------------------
KEEP = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]])  # numObservations × numKeys


@pytest.mark.parametrize(
    "padding",
    [
        pytest.param(lambda: KEEP.astype(np.float64), id="numpy"),
        pytest.param(lambda: torch.from_numpy(KEEP), id="integer-tensor"),
        pytest.param(lambda: torch.from_numpy(KEEP > 0), id="logical-tensor"),
        pytest.param(lambda: torch.from_numpy(KEEP * 3.5), id="nonzero-is-kept"),
        pytest.param(lambda: dlf.dlarray(torch.from_numpy(KEEP)), id="unformatted-dlarray"),
        pytest.param(lambda: dlf.dlarray(torch.from_numpy(KEEP), "BT"), id="BT"),
        pytest.param(lambda: dlf.dlarray(torch.from_numpy(KEEP.T.copy()), "TB"), id="TB"),
        pytest.param(lambda: dlf.dlarray(torch.from_numpy(KEEP[None]), "CBT"), id="CBT-one-channel"),
        pytest.param(
            # MATLAB reads the first channel only; the others would mask differently
            lambda: dlf.dlarray(torch.from_numpy(np.stack([KEEP, 1 - KEEP, np.zeros_like(KEEP)])), "CBT"),
            id="CBT-first-channel",
        ),
        pytest.param(
            lambda: dlf.dlarray(torch.from_numpy(np.stack([KEEP.T, KEEP.T * 0])), "CTB"),
            id="CTB-first-channel",
        ),
    ],
)
@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
def test_padding_mask_forms(padding, return_weights):
    q, k = rng_data((4, 3, 2), 14), rng_data((4, 5, 2), 15)
    Y, W = call("CBT", q, k, k, 2, return_weights, PaddingMask=padding())
    allowed = np.repeat((KEEP.T > 0)[:, None, :], 3, axis=1)
    expected, expected_weights = reference(q, k, k, 2, allowed=allowed)
    check(Y, expected, "CBT", W, expected_weights)


@pytest.mark.parametrize(
    ("fmt", "padding"),
    [
        pytest.param(
            "SCB", lambda: dlf.dlarray(torch.from_numpy(KEEP.T.copy()[:, None, :]), "SCB"), id="SCB"
        ),
        pytest.param("SCB", lambda: dlf.dlarray(torch.from_numpy(KEEP), "BS"), id="BS"),
        pytest.param("SCB", lambda: KEEP, id="SCB-numObservations-by-numKeys"),
    ],
)
def test_padding_mask_over_a_spatial_sequence(fmt, padding):
    q, k = rng_data((4, 5, 2), 16), rng_data((4, 5, 2), 17)
    Y, W = call(fmt, q, k, k, 2, True, PaddingMask=padding())
    expected, expected_weights = reference(q, k, k, 2, allowed=np.repeat((KEEP.T > 0)[:, None, :], 5, axis=1))
    check(Y, expected, fmt, W, expected_weights)


@pytest.mark.parametrize(
    "padding",
    [
        pytest.param(lambda keep: keep, id="vector"),
        pytest.param(lambda keep: keep[None], id="1-by-numKeys"),
        pytest.param(lambda keep: dlf.dlarray(torch.from_numpy(keep), "T"), id="T"),
        pytest.param(lambda keep: dlf.dlarray(torch.from_numpy(keep[None]), "CT"), id="CT"),
    ],
)
def test_padding_mask_without_batch(padding):
    keep = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    q, k = rng_data((4, 3, 1), 18), rng_data((4, 5, 1), 19)
    Y, W = call("CT", q, k, k, 2, True, PaddingMask=padding(keep))
    expected, expected_weights = reference(
        q, k, k, 2, allowed=np.repeat((keep > 0)[:, None, None], 3, axis=1)
    )
    check(Y, expected, "CT", W, expected_weights)


@pytest.mark.parametrize(
    "mask",
    [
        pytest.param(lambda m: m, id="numpy"),
        pytest.param(lambda m: torch.from_numpy(m > 0), id="logical"),
        pytest.param(lambda m: torch.from_numpy(m * -2.0), id="nonzero-is-allowed"),
        pytest.param(lambda m: dlf.dlarray(torch.from_numpy(m)), id="dlarray"),
        pytest.param(lambda m: m[:, :, None], id="numKeys-by-numQueries-by-1"),
    ],
)
@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
def test_attention_mask_forms(mask, return_weights):
    m = binary((5, 3), 20, always=(1, slice(None)))
    q, k = rng_data((4, 3, 2), 21), rng_data((4, 5, 2), 22)
    Y, W = call("CBT", q, k, k, 2, return_weights, AttentionMask=mask(m))
    expected, expected_weights = reference(q, k, k, 2, allowed=np.repeat((m > 0)[:, :, None], 2, axis=2))
    check(Y, expected, "CBT", W, expected_weights)


@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
def test_a_query_with_no_key_gets_zero_weights_and_output(return_weights):
    """Both paths agree: an observation whose keys are all padding attends to nothing (zeros, no NaN)."""
    q, k = rng_data((4, 3, 2), 23), rng_data((4, 5, 2), 24)
    keep = np.array([[0, 0, 0, 0, 0], [1, 1, 0, 1, 1]])
    Y, W = call("CBT", q, k, k, 2, return_weights, PaddingMask=keep)
    expected, expected_weights = reference(q, k, k, 2, allowed=np.repeat((keep.T > 0)[:, None, :], 3, axis=1))
    assert not np.isnan(dlf.extractdata(Y).numpy()).any()
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy()[:, 0], 0.0)
    check(Y, expected, "CBT", W, expected_weights)


# -- unformatted inputs ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data_format", "result_shape"),
    [("CBT", (6, 2, 3)), ("TCB", (6, 2, 3)), ("BTC", (6, 2, 3)), ("CT", (6, 3)), ("SCB", (3, 6, 2))],
)
@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_inputs_with_data_format(data_format, result_shape, kind):
    batch = 2 if "B" in data_format else 1
    q, k, v = rng_data((4, 3, batch), 25), rng_data((4, 5, batch), 26), rng_data((6, 5, batch), 27)
    wrap = {
        "tensor": torch.from_numpy,
        "numpy": lambda x: x,
        "dlarray": lambda x: dlf.dlarray(torch.from_numpy(x)),
    }[kind]
    Y = F.attention(*(wrap(layout(x, data_format)) for x in (q, k, v)), 2, DataFormat=data_format)
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == ""
    expected = layout(reference(q, k, v, 2)[0], canonical(data_format))
    assert tuple(Y.shape) == expected.shape == result_shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_unformatted_keys_and_values_take_the_queries_format():
    """As in MATLAB's example: formatted queries, keys and values as plain arrays in its layout."""
    q, k, v = rng_data((4, 3, 2), 28), rng_data((4, 5, 2), 29), rng_data((2, 5, 2), 30)
    Y = F.attention(
        dlf.dlarray(torch.from_numpy(layout(q, "CBT")), "CBT"),
        layout(k, "CBT"),
        torch.from_numpy(layout(v, "CBT")),
        2,
    )
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(), layout(reference(q, k, v, 2)[0], "CBT"), atol=1e-12
    )


def test_keys_and_values_may_be_formatted_in_another_order():
    q, k, v = rng_data((4, 3, 2), 31), rng_data((4, 5, 2), 32), rng_data((2, 5, 2), 33)
    Y = F.attention(
        dlf.dlarray(torch.from_numpy(layout(q, "CBT")), "CBT"),
        dlf.dlarray(torch.from_numpy(layout(k, "TBC")), "TBC"),
        dlf.dlarray(torch.from_numpy(layout(v, "BCT")), "BCT"),
        2,
    )
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(), layout(reference(q, k, v, 2)[0], "CBT"), atol=1e-12
    )


# -- precision ---------------------------------------------------------------------------------
f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64


@pytest.mark.parametrize(
    ("dtypes", "expected", "tolerance"),
    [
        ((f64, f64, f64), f64, 1e-12),
        ((f64, f32, f32), f32, 1e-5),  # MATLAB: single wins over double
        ((f32, f64, f64), f32, 1e-5),
        ((f64, f64, f32), f32, 1e-5),
        ((bf16, f32, f32), f32, 1e-5),  # torch's promotion among narrower types
        ((bf16, bf16, bf16), bf16, 5e-2),
        ((bf16, f64, f64), bf16, 5e-2),
    ],
)
@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
def test_precision_rule(dtypes, expected, tolerance, return_weights):
    arrays = [rng_data((4, 3, 2), 34), rng_data((4, 5, 2), 35), rng_data((4, 5, 2), 36)]
    tensors = [torch.from_numpy(layout(x, "CBT")).to(dtype) for x, dtype in zip(arrays, dtypes, strict=True)]
    result = F.attention(*(dlf.dlarray(t, "CBT") for t in tensors), 2, ReturnWeights=return_weights)
    Y, W = result if return_weights else (result, None)
    assert Y.dtype == expected and dlf.dims(Y) == "CBT"
    if W is not None:
        assert W.dtype == expected
    held = [t.to(f64).numpy().transpose(0, 2, 1) for t in tensors]  # the values each input holds, (C, T, B)
    want = layout(reference(*held, 2)[0], "CBT")
    np.testing.assert_allclose(dlf.extractdata(Y).to(f64).numpy(), want, rtol=tolerance, atol=tolerance)


# -- dropout -----------------------------------------------------------------------------------
def test_dropout_zeroes_weights_and_rescales_the_rest():
    torch.manual_seed(0)
    q, k, v = rng_data((4, 6, 3), 37), rng_data((4, 8, 3), 38), rng_data((4, 8, 3), 39)
    Y, W = call("CBT", q, k, v, 2, True, DropoutProbability=0.5)
    _, expected_weights = reference(q, k, v, 2)
    weights = dlf.extractdata(W).numpy()
    dropped = weights == 0
    assert 0.2 < dropped.mean() < 0.8  # about half of 576
    np.testing.assert_allclose(weights[~dropped], expected_weights[~dropped] / 0.5, rtol=1e-12)
    # the output uses the weights returned
    per_head = np.stack([v[h * 2 : (h + 1) * 2] for h in range(2)])  # head × 2 × numKeys × batch
    out = np.einsum("hdkb,kqhb->hdqb", per_head, weights).reshape(4, 6, 3)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), layout(out, "CBT"), atol=1e-12)


@pytest.mark.parametrize("return_weights", [False, True], ids=["fused", "weights"])
def test_dropout_applies_in_both_paths(return_weights):
    torch.manual_seed(1)
    q = rng_data((4, 6, 2), 40)
    Y, _ = call("CBT", q, q, q, 2, return_weights, DropoutProbability=0.9)
    assert not np.allclose(dlf.extractdata(Y).numpy(), layout(reference(q, q, q, 2)[0], "CBT"), atol=1e-3)


# -- errors ------------------------------------------------------------------------------------
def cbt(channels=4, length=5, batch=2):
    return dlf.dlarray(torch.ones(channels, batch, length), "CBT")


Q = cbt()


@pytest.mark.parametrize(
    ("arguments", "options", "message"),
    [
        ((Q, Q, Q, 3), {}, r"attention: numHeads \(3\) must divide the channels of the queries \(4\)"),
        ((Q, Q, cbt(5), 2), {}, r"attention: numHeads \(2\) must divide the channels of the values \(5\)"),
        (
            (Q, cbt(6), Q, 2),
            {},
            r"attention needs queries and keys with the same channels, keys and values of the same length, and one "
            r"batch size; got queries \(2, 5, 4\), keys \(2, 5, 6\), values \(2, 5, 4\) as \(batch, sequence, channels\)",
        ),
        ((Q, Q, cbt(length=4), 2), {}, r"keys and values of the same length.*values \(2, 4, 4\)"),
        (
            (Q, cbt(batch=3), cbt(batch=3), 2),
            {},
            r"one batch size; got queries \(2, 5, 4\), keys \(3, 5, 4\)",
        ),
        (
            (dlf.dlarray(torch.ones(4, 2, 5), "CBU"), Q, Q, 2),
            {},
            r'attention queries: attention attends over "T", or over a single "S" when there is no "T"; it takes '
            r'formats such as "CBT", "CT", "SCB" \(with "C"\); got "CBU"',
        ),
        ((dlf.dlarray(torch.ones(3, 3, 4, 2), "SSCB"), Q, Q, 2), {}, 'attention queries: .*got "SSCB"'),
        ((dlf.dlarray(torch.ones(3, 4, 2, 5), "SCBT"), Q, Q, 2), {}, 'attention queries: .*got "SCBT"'),
        ((dlf.dlarray(torch.ones(4, 2), "CB"), Q, Q, 2), {}, 'attention queries: .*got "CB"'),
        ((Q, dlf.dlarray(torch.ones(4, 2, 5), "CBU"), Q, 2), {}, 'attention keys: .*got "CBU"'),
        ((Q, Q, dlf.dlarray(torch.ones(4, 2), "CB"), 2), {}, 'attention values: .*got "CB"'),
        (
            (dlf.dlarray(torch.ones(2, 5), "BT"), Q, Q, 1),
            {},
            'attention needs data with a "C" dimension; got format "BT"',
        ),
        ((Q, Q, Q, 0), {}, r"numHeads must be a positive integer; got 0 \(int\)"),
        ((Q, Q, Q, 1.5), {}, "numHeads must be a positive integer; got 1.5"),
        ((Q, Q, Q, 2), {"DropoutProbability": 1}, r"DropoutProbability must be a number in \[0, 1\); got 1"),
        (
            (Q, Q, Q, 2),
            {"DropoutProbability": -0.1},
            r"DropoutProbability must be a number in \[0, 1\); got -0.1",
        ),
        ((Q, Q, Q, 2), {"Scale": "big"}, 'Scale must be a finite real scalar; got "big"'),
        ((Q, Q, Q, 2), {"Scale": math.inf}, "Scale must be a finite real scalar; got inf"),
        (
            (Q, Q, Q, 2),
            {"AttentionMask": "upper"},
            'AttentionMask must be one of "none", "causal"; got "upper"',
        ),
        (
            (Q, Q, Q, 2),
            {"AttentionMask": torch.ones(5, 5, 2, 1)},
            r"attention AttentionMask must be numKeys × numQueries \(× numObservations\); got 5×5×2×1",
        ),
        (
            (Q, Q, Q, 2),
            {"AttentionMask": torch.ones(5)},
            "attention AttentionMask must be numKeys × numQueries",
        ),
        (
            (Q, Q, Q, 2),
            {"AttentionMask": torch.ones(5, 4)},
            "attention AttentionMask of size 5×4×1 does not fit 5×5×2",
        ),
        (
            (Q, Q, Q, 2),
            {"AttentionMask": torch.ones(5, 5, 3)},
            "attention AttentionMask of size 5×5×3 does not fit 5×5×2",
        ),
        (
            (Q, Q, Q, 2),
            {"PaddingMask": torch.ones(3, 5)},
            "attention PaddingMask of size 3×5 does not fit 2×5",
        ),
        (
            (Q, Q, Q, 2),
            {"PaddingMask": torch.ones(2, 4)},
            "attention PaddingMask of size 2×4 does not fit 2×5",
        ),
        (
            (Q, Q, Q, 2),
            {"DataFormat": "CBT"},
            'attention: DataFormat is only for unformatted data; the input already has format "CBT"',
        ),
        ((torch.ones(4, 2, 5), Q, Q, 2), {}, r'attention needs a formatted dlarray, or DataFormat="\.\.\."'),
    ],
)
def test_errors(arguments, options, message):
    with pytest.raises(DLFormatError, match=message):
        F.attention(*arguments, **options)


def test_the_masks_are_checked_on_both_paths():
    with pytest.raises(DLFormatError, match="attention PaddingMask of size 3×5 does not fit 2×5"):
        F.attention(Q, Q, Q, 2, PaddingMask=torch.ones(3, 5), ReturnWeights=True)


# -- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "return_weights"),
    [({}, False), ({}, True), ({"AttentionMask": "causal"}, False), ({"AttentionMask": "causal"}, True),
     ({"PaddingMask": np.array([[1, 1, 0], [1, 1, 1]])}, False)],
)  # fmt: skip
def test_gradcheck(options, return_weights):
    q = torch.from_numpy(rng_data((4, 2, 3), 41)).requires_grad_()
    k = torch.from_numpy(rng_data((4, 2, 3), 42)).requires_grad_()
    v = torch.from_numpy(rng_data((2, 2, 3), 43)).requires_grad_()

    def function(q, k, v):
        result = F.attention(
            *(dlf.dlarray(x, "CBT") for x in (q, k, v)), 2, ReturnWeights=return_weights, **options
        )
        return (result[0]._data, result[1]._data) if return_weights else result._data

    assert torch.autograd.gradcheck(function, (q, k, v), fast_mode=True)
