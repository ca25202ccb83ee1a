"""Float64 NumPy forward passes of MATLAB's layers, for checking loaded networks value for value.

Written from MathWorks' documented definitions (the layers' reference pages; the recurrent
equations as docs/networks.md, "Recurrent layers, exactly", sets them out), never with torch or
dlformat. Arrays are in MATLAB's layouts: images ``H×W×C×N``, sequences ``C×N×T``, learnables as
the file saves them (``H×W×C×F`` filters, per-channel vectors of any vector shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tests.functional.test_recurrent import gru_reference, lstm_reference

__all__ = [
    "batchnorm",
    "bilstm",
    "conv2d",
    "fully_connected",
    "gru",
    "lstm",
    "maxpool2d",
    "relu",
    "softmax",
]


def _channels(value: np.ndarray) -> np.ndarray:
    """A per-channel vector (saved ``1×1×C``, ``C×1``, ...) shaped to broadcast over ``H×W×C×N``."""
    return np.asarray(value, dtype=np.float64).reshape(1, 1, -1, 1)


def conv2d(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray,
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
) -> np.ndarray:
    """convolution2dLayer: cross-correlation of ``x`` with ``H×W×C×F`` filters, ``padding`` as
    MATLAB's ``PaddingSize`` ``[top bottom left right]`` of zeros."""
    top, bottom, left, right = (int(item) for item in padding)
    x = np.pad(x, ((top, bottom), (left, right), (0, 0), (0, 0)))
    weights = np.asarray(weights, dtype=np.float64).reshape(*weights.shape[:3], -1)
    windows = np.lib.stride_tricks.sliding_window_view(x, weights.shape[:2], axis=(0, 1))
    windows = windows[:: int(stride[0]), :: int(stride[1])]
    return np.einsum("hwcnij,ijcf->hwfn", windows, weights) + _channels(bias)


def maxpool2d(
    x: np.ndarray, pool: Sequence[int], stride: Sequence[int], padding: Sequence[int] = (0, 0, 0, 0)
) -> np.ndarray:
    """maxPooling2dLayer: the largest value of each window; padding never wins (``-inf``)."""
    top, bottom, left, right = (int(item) for item in padding)
    x = np.pad(x, ((top, bottom), (left, right), (0, 0), (0, 0)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(x, [int(item) for item in pool], axis=(0, 1))
    return windows[:: int(stride[0]), :: int(stride[1])].max(axis=(-2, -1))


def batchnorm(
    x: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    scale: np.ndarray,
    offset: np.ndarray,
    epsilon: float,
) -> np.ndarray:
    """batchNormalizationLayer at prediction: the trained statistics, per channel."""
    return _channels(scale) * (x - _channels(mean)) / np.sqrt(_channels(variance) + epsilon) + _channels(
        offset
    )


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def softmax(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """softmaxLayer over the channels (the first dimension of ``C×N`` scores)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def fully_connected(x: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """fullyConnectedLayer: ``weights`` as the file saves them, ``H×W×C×K`` over an ``H×W×C×N``
    image (every element of an observation, summed), or ``K×C`` over ``C×N`` or ``C×N×T`` data."""
    weights = np.asarray(weights, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64).reshape(-1)
    if x.ndim == 4:
        return np.einsum("hwcn,hwck->kn", x, weights.reshape(*x.shape[:3], -1)) + bias[:, None]
    return np.einsum("kc,c...->k...", weights, x) + bias.reshape(-1, *([1] * (x.ndim - 1)))


def gru(x: np.ndarray, h0: np.ndarray, W: np.ndarray, R: np.ndarray, b: np.ndarray, mode: str) -> np.ndarray:
    """gruLayer on ``C×N×T`` from the state ``h0`` (``H×1``, every observation): ``H×N×T``."""
    h = np.repeat(np.asarray(h0, dtype=np.float64).reshape(-1, 1), x.shape[1], axis=1)
    return gru_reference(x, h, W, R, b, mode=mode)[0]


def lstm(
    x: np.ndarray, h0: np.ndarray, c0: np.ndarray, W: np.ndarray, R: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """lstmLayer on ``C×N×T`` from the states ``h0``, ``c0`` (``H×1``, every observation): ``H×N×T``."""
    n = x.shape[1]
    h, c = (np.repeat(np.asarray(v, dtype=np.float64).reshape(-1, 1), n, axis=1) for v in (h0, c0))
    return lstm_reference(x, h, c, W, R, np.asarray(b, dtype=np.float64).reshape(-1))[0]


def bilstm(
    x: np.ndarray, h0: np.ndarray, c0: np.ndarray, W: np.ndarray, R: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """bilstmLayer on ``C×N×T``: every matrix (and the ``2*H×1`` states) stacks the forward
    direction over the backward one; the backward direction reads the sequence from its end;
    the output is the forward hidden state over the backward one (``2*H×N×T``)."""
    H = R.shape[1]
    n = x.shape[1]

    def state(value: np.ndarray, half: slice) -> np.ndarray:
        return np.repeat(np.asarray(value, dtype=np.float64).reshape(-1, 1)[half], n, axis=1)

    forward, backward = slice(0, H), slice(H, 2 * H)
    rows = (slice(0, 4 * H), slice(4 * H, 8 * H))
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    ahead = lstm_reference(x, state(h0, forward), state(c0, forward), W[rows[0]], R[rows[0]], b[rows[0]])[0]
    behind = lstm_reference(
        x[:, :, ::-1], state(h0, backward), state(c0, backward), W[rows[1]], R[rows[1]], b[rows[1]]
    )[0]
    return np.concatenate([ahead, behind[:, :, ::-1]], axis=0)
