"""``ctc`` against a float64 NumPy transcription of the CTC forward algorithm (Graves et al. 2006).

For each observation: the target with a blank before, between and after its labels; α over time
steps in probability space (sums of the two or three predecessors, the skip only between
different labels); the sequence probability is α of the last two states at the last valid time
step. MATLAB's ``ctc`` reduces by the mean over the batch (MathWorks, ``ctc``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def ctc_reference(probabilities, target, blank):
    """−log p(target | probabilities) for one sequence: probabilities T × C, target 0-based labels."""
    extended = [blank]
    for label in target:
        extended += [label, blank]
    steps, states = probabilities.shape[0], len(extended)
    alpha = np.zeros(states)
    alpha[0] = probabilities[0, blank]
    if states > 1:
        alpha[1] = probabilities[0, extended[1]]
    for t in range(1, steps):
        previous = alpha.copy()
        for s in range(states):
            total = previous[s] + (previous[s - 1] if s >= 1 else 0.0)
            if s >= 2 and extended[s] != blank and extended[s] != extended[s - 2]:
                total += previous[s - 2]
            alpha[s] = total * probabilities[t, extended[s]]
    return -np.log(alpha[-1] + (alpha[-2] if states > 1 else 0.0))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


C, B, T = 5, 3, 7
PROBABILITIES = softmax(np.random.default_rng(0).standard_normal((C, B, T)), 0)
TARGETS = np.array([[2, 3, 3, 4], [5, 2, 1, 1], [4, 1, 1, 1]], dtype=float)  # padded with 1s
TARGET_LENGTHS = [4, 2, 1]
Y_LENGTHS = [7, 5, 3]


def masks():
    y_mask = (np.arange(T)[None, :] < np.array(Y_LENGTHS)[:, None]).astype(float)
    t_mask = (np.arange(4)[None, :] < np.array(TARGET_LENGTHS)[:, None]).astype(float)
    return y_mask, t_mask


def expected_loss(blank_index, targets):
    return expected_loss_of(PROBABILITIES, blank_index, targets)


def expected_loss_of(probabilities, blank_index=0, targets=TARGETS):
    losses = [
        ctc_reference(
            probabilities[:, b, : Y_LENGTHS[b]].T,
            [int(k) - 1 for k in targets[b, : TARGET_LENGTHS[b]]],
            blank_index,
        )
        for b in range(B)
    ]
    return float(np.mean(losses))


@pytest.mark.parametrize(("blank", "blank_channel"), [("first", 0), ("last", C - 1)])
def test_the_loss_matches_the_forward_algorithm(blank, blank_channel):
    targets = TARGETS
    if blank == "last":  # shift the labels 2..5 down to 1..4 so that none is the last channel
        targets = TARGETS - 1
        targets[targets == 0] = 1
    y_mask, t_mask = masks()
    Y = dlf.dlarray(torch.tensor(PROBABILITIES), "CBT")
    loss = dlf.ctc(Y, targets, y_mask, t_mask, BlankIndex=blank)
    assert dlf.dims(loss) == "" and loss.dtype == torch.float64 and dlf.numel(loss) == 1
    assert dlf.extractdata(loss).item() == pytest.approx(expected_loss(blank_channel, targets), rel=1e-12)


def test_unformatted_input_and_gradients():
    y_mask, t_mask = masks()
    X = dlf.dlarray(torch.tensor(PROBABILITIES.transpose(2, 1, 0).copy()))  # T × B × C

    def loss_and_gradient(X):
        loss = dlf.ctc(X, torch.tensor(TARGETS), torch.tensor(y_mask), torch.tensor(t_mask), DataFormat="TBC")
        return loss, dlf.dlgradient(loss, X)

    loss, grad = dlf.dlfeval(loss_and_gradient, X)
    assert dlf.extractdata(loss).item() == pytest.approx(expected_loss(0, TARGETS), rel=1e-12)

    # d loss / d p for every element, against central differences of the NumPy reference (masked
    # time steps get zero)
    step = 1e-6
    numeric = np.zeros_like(PROBABILITIES)
    for index in np.ndindex(*PROBABILITIES.shape):
        plus, minus = PROBABILITIES.copy(), PROBABILITIES.copy()
        plus[index] += step
        minus[index] -= step
        numeric[index] = (expected_loss_of(plus) - expected_loss_of(minus)) / (2 * step)
    np.testing.assert_allclose(
        dlf.extractdata(grad).numpy().transpose(2, 1, 0), numeric, rtol=1e-5, atol=1e-8
    )


Y0 = dlf.dlarray(torch.full((3, 1, 2), 1 / 3), "CBT")
ONE = torch.ones(1, 1)
TWO = torch.ones(1, 2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.ctc(dlf.dlarray(torch.ones(3, 2), "CB"), np.array([[2]]), TWO, ONE),
            'ctc needs data with "C" and "B" and "T" dimensions; got format "CB"',
        ),
        (
            lambda: dlf.ctc(Y0, np.array([[2]]), TWO, ONE, BlankIndex="middle"),
            'BlankIndex must be one of "first", "last"',
        ),
        (lambda: dlf.ctc(Y0, np.array([[1]]), TWO, ONE), "targets hold the blank's index 1"),
        (
            lambda: dlf.ctc(Y0, np.array([[3]]), TWO, ONE, BlankIndex="last"),
            "targets hold the blank's index 3",
        ),
        (lambda: dlf.ctc(Y0, np.array([[4]]), TWO, ONE), "targets must be integer class indices from 1 to 3"),
        (lambda: dlf.ctc(Y0, np.array([[2.5]]), TWO, ONE), "targets must be integer class indices"),
        (lambda: dlf.ctc(Y0, np.array([[2]]), torch.ones(1, 3), ONE), "YMask must have T = 2 columns"),
        (
            lambda: dlf.ctc(Y0, np.array([[2]]), torch.tensor([[0.0, 1.0]]), ONE),
            "each row of YMask must mark a leading run",
        ),
        (
            lambda: dlf.ctc(Y0, np.array([[2]]), TWO, TWO),
            r"targetsMask must have the size of targets \(1×1\)",
        ),
        (lambda: dlf.ctc(Y0, torch.ones(2, 1), TWO, ONE), "targets must be B×n with B = 1"),
        (
            lambda: dlf.ctc(Y0, np.array([[2]]), TWO, ONE, DataFormat="CBT"),
            "DataFormat is only for unformatted data",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
