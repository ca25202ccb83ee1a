"""``lstm`` and ``gru`` against float64 NumPy step-by-step references written from MATLAB's
documented equations (the ``lstmLayer``/``gruLayer`` pages, "Algorithms"): gates stacked
LSTM ``[input; forget; cell candidate; output]``, GRU ``[reset; update; candidate]``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def hard_sigmoid(x):
    return np.where(x < -2.5, 0.0, np.where(x > 2.5, 1.0, 0.2 * x + 0.5))


def softsign(x):
    return x / (1.0 + np.abs(x))


STATE = {"tanh": np.tanh, "softsign": softsign}
GATE = {"sigmoid": sigmoid, "hard-sigmoid": hard_sigmoid}


def lstm_reference(x, h, c, W, R, b, state="tanh", gate="sigmoid"):
    """MATLAB's LSTM on ``x`` (features × B × T) with states ``H × B``: Y (H × B × T), h, c."""
    act, sig = STATE[state], GATE[gate]
    H = R.shape[1]
    outputs = []
    for t in range(x.shape[2]):
        z = W @ x[:, :, t] + R @ h + b.reshape(-1, 1)
        i, f, g, o = z[:H], z[H : 2 * H], z[2 * H : 3 * H], z[3 * H :]
        c = sig(f) * c + sig(i) * act(g)
        h = sig(o) * act(c)
        outputs.append(h)
    return np.stack(outputs, axis=2), h, c


def gru_reference(x, h, W, R, b, mode="after-multiplication", state="tanh", gate="sigmoid"):
    """MATLAB's GRU per ResetGateMode on ``x`` (features × B × T): Y (H × B × T), h."""
    act, sig = STATE[state], GATE[gate]
    H = R.shape[1]
    b = b.reshape(-1, 1)
    bw, br = (
        (b[: 3 * H], b[3 * H :]) if mode == "recurrent-bias-after-multiplication" else (b, np.zeros_like(b))
    )
    outputs = []
    for t in range(x.shape[2]):
        wx = W @ x[:, :, t]
        r = sig(wx[:H] + R[:H] @ h + bw[:H] + br[:H])
        z = sig(wx[H : 2 * H] + R[H : 2 * H] @ h + bw[H : 2 * H] + br[H : 2 * H])
        if mode == "before-multiplication":
            candidate = act(wx[2 * H :] + R[2 * H :] @ (r * h) + bw[2 * H :])
        else:
            candidate = act(wx[2 * H :] + bw[2 * H :] + r * (R[2 * H :] @ h + br[2 * H :]))
        h = (1 - z) * candidate + z * h
        outputs.append(h)
    return np.stack(outputs, axis=2), h


def data(shape, seed, scale=1.0):
    return scale * np.random.default_rng(seed).standard_normal(shape)


def t(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


D, B, T, H = 3, 2, 5, 4
ACTIVATIONS = [
    pytest.param("tanh", "sigmoid", id="tanh-sigmoid"),
    pytest.param("softsign", "sigmoid", id="softsign-sigmoid"),
    pytest.param("tanh", "hard-sigmoid", id="tanh-hard-sigmoid"),
    pytest.param("softsign", "hard-sigmoid", id="softsign-hard-sigmoid"),
]


def lstm_inputs(seed=0, columns=B):
    # scale 1.5: pre-activations reach past ±2.5, where hard-sigmoid saturates
    return (
        data((D, B, T), seed, 1.5),
        data((H, columns), seed + 1),
        data((H, columns), seed + 2),
        data((4 * H, D), seed + 3),
        data((4 * H, H), seed + 4),
        data(4 * H, seed + 5),
    )


@pytest.mark.parametrize(("state", "gate"), ACTIVATIONS)
def test_lstm_matches_matlabs_equations(state, gate):
    x, h0, c0, W, R, b = lstm_inputs()
    Y, h, c = F.lstm(
        dlf.dlarray(t(x), "CBT"), t(h0), t(c0), t(W), t(R), t(b),
        StateActivationFunction=state, GateActivationFunction=gate,
    )  # fmt: skip
    expected_y, expected_h, expected_c = lstm_reference(x, h0, c0, W, R, b, state, gate)
    assert (dlf.dims(Y), dlf.dims(h), dlf.dims(c)) == ("CBT", "CB", "CB")
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(h).numpy(), expected_h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(c).numpy(), expected_c, rtol=1e-12, atol=1e-12)


MODES = ["after-multiplication", "before-multiplication", "recurrent-bias-after-multiplication"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("state", "gate"), ACTIVATIONS)
def test_gru_matches_matlabs_equations(mode, state, gate):
    x, h0 = data((D, B, T), 10, 1.5), data((H, B), 11)
    W, R = data((3 * H, D), 12), data((3 * H, H), 13)
    b = data(6 * H if mode.startswith("recurrent") else 3 * H, 14)
    Y, h = F.gru(
        dlf.dlarray(t(x), "CBT"), t(h0), t(W), t(R), t(b),
        ResetGateMode=mode, StateActivationFunction=state, GateActivationFunction=gate,
    )  # fmt: skip
    expected_y, expected_h = gru_reference(x, h0, W, R, b, mode, state, gate)
    assert (dlf.dims(Y), dlf.dims(h)) == ("CBT", "CB")
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(h).numpy(), expected_h, rtol=1e-12, atol=1e-12)


def test_the_three_reset_gate_modes_differ():
    x, h0 = data((D, B, T), 20), data((H, B), 21)
    W, R, b = data((3 * H, D), 22), data((3 * H, H), 23), data(3 * H, 24)
    X = dlf.dlarray(t(x), "CBT")
    after = F.gru(X, t(h0), t(W), t(R), t(b))[0]
    before = F.gru(X, t(h0), t(W), t(R), t(b), ResetGateMode="before-multiplication")[0]
    zero_recurrent = F.gru(
        X, t(h0), t(W), t(R), t(np.concatenate([b, np.zeros(3 * H)])),
        ResetGateMode="recurrent-bias-after-multiplication",
    )[0]  # fmt: skip
    assert not torch.allclose(dlf.extractdata(after), dlf.extractdata(before))
    # zero recurrent biases: the recurrent-bias mode is after-multiplication
    torch.testing.assert_close(dlf.extractdata(zero_recurrent), dlf.extractdata(after))


def test_one_state_column_serves_every_observation():
    x, h0, c0, W, R, b = lstm_inputs(columns=1)
    Y, h, _ = F.lstm(dlf.dlarray(t(x), "CBT"), t(h0), t(c0), t(W), t(R), t(b))
    expected_y, expected_h, _ = lstm_reference(x, np.tile(h0, (1, B)), np.tile(c0, (1, B)), W, R, b)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(h).numpy(), expected_h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("state", "gate"), ACTIVATIONS[:2])
def test_lstm_state_carries_over_between_calls(state, gate):
    x, h0, c0, W, R, b = lstm_inputs(30)
    options = {"StateActivationFunction": state, "GateActivationFunction": gate}
    params = (t(W), t(R), t(b))
    whole, h, c = F.lstm(dlf.dlarray(t(x), "CBT"), t(h0), t(c0), *params, **options)
    first, h1, c1 = F.lstm(dlf.dlarray(t(x[:, :, :2]), "CBT"), t(h0), t(c0), *params, **options)
    second, h2, c2 = F.lstm(dlf.dlarray(t(x[:, :, 2:]), "CBT"), h1, c1, *params, **options)
    joined = torch.cat([dlf.extractdata(first), dlf.extractdata(second)], dim=2)
    torch.testing.assert_close(joined, dlf.extractdata(whole), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dlf.extractdata(h2), dlf.extractdata(h), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dlf.extractdata(c2), dlf.extractdata(c), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_gru_state_carries_over_between_calls(mode):
    x, h0 = data((D, B, T), 40), data((H, B), 41)
    W, R = data((3 * H, D), 42), data((3 * H, H), 43)
    b = t(data(6 * H if mode.startswith("recurrent") else 3 * H, 44))
    whole, h = F.gru(dlf.dlarray(t(x), "CBT"), t(h0), t(W), t(R), b, ResetGateMode=mode)
    first, h1 = F.gru(dlf.dlarray(t(x[:, :, :3]), "CBT"), t(h0), t(W), t(R), b, ResetGateMode=mode)
    second, h2 = F.gru(dlf.dlarray(t(x[:, :, 3:]), "CBT"), h1, t(W), t(R), b, ResetGateMode=mode)
    joined = torch.cat([dlf.extractdata(first), dlf.extractdata(second)], dim=2)
    torch.testing.assert_close(joined, dlf.extractdata(whole), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dlf.extractdata(h2), dlf.extractdata(h), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "permutation", "output"),
    [
        pytest.param("CBT", (0, 1, 2), "CBT", id="CBT"),
        pytest.param("TBC", (2, 1, 0), "CBT", id="TBC-given-time-first"),
        pytest.param("CT", None, "CT", id="CT-no-batch"),
        pytest.param("CB", None, "CB", id="CB-one-time-step"),
    ],
)
def test_formats(fmt, permutation, output):
    x, h0, c0, W, R, b = lstm_inputs(50, columns=1)
    if fmt == "CT":
        given, full = x[:, 0, :], x[:, :1, :]
    elif fmt == "CB":
        given, full = x[:, :, 0], x[:, :, :1]
    else:
        given, full = x.transpose(permutation), x
    Y, h, _ = F.lstm(dlf.dlarray(t(given), fmt), t(h0), t(c0), t(W), t(R), t(b))
    batch = full.shape[1]
    expected, expected_h, _ = lstm_reference(full, np.tile(h0, (1, batch)), np.tile(c0, (1, batch)), W, R, b)
    expected = expected[:, 0, :] if fmt == "CT" else expected[:, :, 0] if fmt == "CB" else expected
    assert dlf.dims(Y) == output
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(h).numpy(), expected_h, rtol=1e-12, atol=1e-12)


def test_spatial_dimensions_flatten_into_the_features_first_s_fastest():
    x = data((2, 3, B, T), 60)  # S × C × B × T: 6 features
    W, R, b = data((4 * H, 6), 61), data((4 * H, H), 62), data(4 * H, 63)
    zeros = np.zeros((H, 1))
    Y, _, _ = F.lstm(dlf.dlarray(t(x), "SCBT"), t(zeros), t(zeros), t(W), t(R), t(b))
    flat = x.reshape(6, B, T, order="F")
    expected, _, _ = lstm_reference(flat, np.zeros((H, B)), np.zeros((H, B)), W, R, b)
    assert dlf.dims(Y) == "CBT"
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_unformatted_data_with_dataformat_gives_unformatted_outputs():
    x, h0, c0, W, R, b = lstm_inputs(70)
    Y, h, c = F.lstm(t(x), t(h0), t(c0), t(W), t(R), t(b), DataFormat="CBT")
    expected, _, _ = lstm_reference(x, h0, c0, W, R, b)
    assert (dlf.dims(Y), dlf.dims(h), dlf.dims(c)) == ("", "", "")
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_matlab_name_value_pairs_and_single_precision_rule():
    x, h0, c0, W, R, b = lstm_inputs(80)
    X = dlf.dlarray(torch.from_numpy(x).float(), "CBT")
    Y, _, _ = F.lstm(X, t(h0), t(c0), t(W), t(R), t(b), "stateactivationfunction", "softsign")
    expected, _, _ = lstm_reference(x, h0, c0, W, R, b, "softsign")
    assert Y.dtype == torch.float32
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("gate", ["sigmoid", "hard-sigmoid"])
def test_gradients_reach_every_parameter(gate):
    x, h0, c0, W, R, b = (t(a).requires_grad_() for a in lstm_inputs(90))
    Y, _, c = F.lstm(dlf.dlarray(x, "CBT"), h0, c0, W, R, b, GateActivationFunction=gate)
    (dlf.stripdims(Y).sum() + dlf.stripdims(c).sum()).backward()
    for value in (x, h0, c0, W, R, b):
        assert value.grad is not None and value.grad.abs().sum() > 0


def test_fused_kernel_gradients_match_the_step_loop():
    """The default options run torch's fused kernel; its gradients equal those of the per-step
    loop the other options use (run here with the default activations)."""
    from dlformat.functional._recurrent import LSTM_GATES, RecurrentInputs, _lstm_step, _Recurrence

    x, h0, c0, W, R, b = (t(a) for a in lstm_inputs(95))
    params = [value.clone().requires_grad_() for value in (W, R, b)]
    fused, _, _ = F.lstm(dlf.dlarray(x, "CBT"), h0, c0, *params)
    fused_grads = torch.autograd.grad(dlf.stripdims(fused).square().sum(), params)
    inputs = RecurrentInputs("lstm", dlf.dlarray(x, "CBT"), (("H0", h0), ("C0", c0)), *params)
    run = _Recurrence(inputs, gates=LSTM_GATES)
    looped, _ = run.looped(_lstm_step(torch.tanh, torch.sigmoid))
    loop_grads = torch.autograd.grad(looped.square().sum(), params)
    for fused_grad, loop_grad in zip(fused_grads, loop_grads, strict=True):
        torch.testing.assert_close(fused_grad, loop_grad, rtol=1e-10, atol=1e-10)


def test_time_first_data_taken_as_it_is_gives_the_general_paths_values_and_gradients():
    """ "TBC" data is already the kernel's (T, B, C): it is passed without a permute and reshape;
    the values and gradients equal those of the same data given as "CBT" (which is permuted)."""
    x, h0, c0, W, R, b = (t(a) for a in lstm_inputs(96))
    results = []
    for fmt, given in (("TBC", x.permute(2, 1, 0).contiguous()), ("CBT", x)):
        leaves = [value.clone().requires_grad_() for value in (given, W, R, b)]
        Y, h, c = F.lstm(dlf.dlarray(leaves[0], fmt), h0, c0, *leaves[1:])
        loss = dlf.stripdims(Y).square().sum() + dlf.stripdims(h).sum() + dlf.stripdims(c).sum()
        grads = torch.autograd.grad(loss, leaves)
        results.append(
            (dlf.extractdata(Y), grads[0].permute(2, 1, 0) if fmt == "TBC" else grads[0], *grads[1:])
        )
    for fast, general in zip(*results, strict=True):  # the kernel's products may round differently
        torch.testing.assert_close(fast, general, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("run", ["lstm", "gru"])
def test_final_states_without_gradients_are_the_same_values_detached(run):
    """A layer without state outputs asks for its final states detached (state_gradients False):
    the same values as the tracked ones, the output's gradients unchanged."""
    from dlformat.functional._recurrent import RecurrentInputs, run_gru, run_lstm

    x, h0, c0, W, R, b = (t(a) for a in lstm_inputs(97))
    states = (("H0", h0), ("C0", c0)) if run == "lstm" else (("H0", h0),)
    rows = 4 * H if run == "lstm" else 3 * H
    operation = run_lstm if run == "lstm" else run_gru
    outcomes = []
    for tracked in (True, False):
        params = [value[:rows].clone().requires_grad_() for value in (W, R, b)]
        inputs = RecurrentInputs(run, dlf.dlarray(x, "CBT"), states, *params, state_gradients=tracked)
        Y, *finals = operation(inputs)
        assert all(final.requires_grad is tracked for final in finals)
        grads = torch.autograd.grad(dlf.stripdims(Y).square().sum(), params)
        outcomes.append((dlf.extractdata(Y), *finals, *grads))
    for with_graph, without in zip(*outcomes, strict=True):
        torch.testing.assert_close(without, with_graph.detach(), rtol=0, atol=0)


ERRORS = [
    pytest.param({"W": (4 * H, D + 1)}, "weights must be 16 × 3", id="weights-columns"),
    pytest.param({"W": (3 * H, D)}, "weights must be 16 × 3", id="weights-rows"),
    pytest.param({"R": (4 * H, H + 1)}, "recurrentWeights must be 4\\*NumHiddenUnits", id="recurrent"),
    pytest.param({"b": (3 * H,)}, "bias must have 16 elements", id="bias"),
    pytest.param({"h0": (H, 3)}, "H0 must be 4 × 1 or 4 × 2", id="h0-columns"),
    pytest.param({"c0": (H + 1, 1)}, "C0 must be 4 × 1 or 4 × 2", id="c0-rows"),
]


@pytest.mark.parametrize(("change", "message"), ERRORS)
def test_lstm_errors(change, message):
    shapes = {"h0": (H, 1), "c0": (H, 1), "W": (4 * H, D), "R": (4 * H, H), "b": (4 * H,)} | change
    values = {name: torch.randn(shape, dtype=torch.float64) for name, shape in shapes.items()}
    X = dlf.dlarray(torch.randn(D, B, T, dtype=torch.float64), "CBT")
    with pytest.raises(DLFormatError, match=message):
        F.lstm(X, values["h0"], values["c0"], values["W"], values["R"], values["b"])


def test_option_and_format_errors():
    X = dlf.dlarray(torch.randn(D, B, T), "CBT")
    params = (torch.zeros(H, 1), torch.randn(3 * H, D), torch.randn(3 * H, H))
    with pytest.raises(DLFormatError, match="ResetGateMode"):
        F.gru(X, *params, torch.randn(3 * H), ResetGateMode="sideways")
    with pytest.raises(DLFormatError, match="bias must have 24 elements"):
        F.gru(X, *params, torch.randn(3 * H), ResetGateMode="recurrent-bias-after-multiplication")
    with pytest.raises(DLFormatError, match="StateActivationFunction"):
        F.gru(X, *params, torch.randn(3 * H), StateActivationFunction="relu")
    with pytest.raises(DLFormatError, match='needs data with a "C" dimension'):
        F.gru(dlf.dlarray(torch.randn(B, T), "BT"), *params, torch.randn(3 * H))
    with pytest.raises(DLFormatError, match="DataFormat"):
        F.gru(torch.randn(D, B, T), *params, torch.randn(3 * H))


def layer_tensors(kind, seed, directions=1, dtype=torch.float32):
    """A layer's own tensors: weights, recurrent weights, an n × 1 bias, and the states (n × 1)."""
    gates = {"lstm": 4, "gru": 3, "gru-recurrent-bias": 3}[kind]
    rows = gates * directions * H
    bias_rows = 2 * rows if kind == "gru-recurrent-bias" else rows
    count = 2 if kind == "lstm" else 1
    values = [data((rows, D), seed), data((rows, H), seed + 1), data((bias_rows, 1), seed + 2)]
    states = [data((directions * H, 1), seed + 3 + index) for index in range(count)]
    return [t(value).to(dtype) for value in values], tuple(t(state).to(dtype) for state in states)


LAYER_PATHS = [
    pytest.param("lstm", 1, id="lstm"),
    pytest.param("lstm", 2, id="bilstm"),
    pytest.param("gru", 1, id="gru"),
    pytest.param("gru-recurrent-bias", 1, id="gru-recurrent-bias"),
]


def both_paths(kind, directions, X, states, params, last, state_gradients):
    """``layer_lstm``/``layer_gru`` and ``run_lstm``/``run_gru`` on the same tensors."""
    from dlformat.functional._recurrent import RecurrentInputs, layer_gru, layer_lstm, run_gru, run_lstm

    labels = ("H0", "C0")[: len(states)]
    named = tuple(zip(labels, states, strict=True))
    inputs = RecurrentInputs("op", X, named, *params, state_gradients=state_gradients)
    if kind == "lstm":
        options = {"directions": directions, "last": last}
        fast = layer_lstm(X, states, *params, state_gradients=state_gradients, **options)
        return fast, run_lstm(inputs, **options)
    options = {
        "reset_gate_mode": "recurrent-bias-after-multiplication" if kind != "gru" else "after-multiplication"
    }
    fast = layer_gru(X, states, *params, last=last, state_gradients=state_gradients, **options)
    return fast, run_gru(inputs, last=last, **options)


@pytest.mark.parametrize(("kind", "directions"), LAYER_PATHS)
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("state_gradients", [False, True])
def test_the_layers_path_gives_the_general_paths_values_states_and_gradients(
    kind, directions, last, state_gradients
):
    params, states = layer_tensors(kind, 120, directions)
    x = t(data((D, B, T), 119, 1.5)).float()
    outcomes = []
    for path in (0, 1):
        leaves = [value.clone().requires_grad_() for value in (x, *params, *states)]
        X = dlf.dlarray(leaves[0], "CBT")
        Y, *finals = both_paths(kind, directions, X, tuple(leaves[4:]), leaves[1:4], last, state_gradients)[
            path
        ]
        assert dlf.dims(Y) == ("CB" if last else "CBT")
        assert all(final.requires_grad is state_gradients for final in finals)
        loss = dlf.stripdims(Y).square().sum()
        if state_gradients:
            loss = loss + sum(final.sum() for final in finals)
        outcomes.append(
            (dlf.extractdata(Y), *(final.detach() for final in finals), *torch.autograd.grad(loss, leaves))
        )
    for fast, general in zip(*outcomes, strict=True):
        torch.testing.assert_close(fast, general, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        pytest.param({"dtype": 1}, "lstm", id="float64-recurrent-weights"),
        pytest.param({"dtype": 3}, "lstm", id="float64-state"),
        pytest.param({"state": (H, 3)}, "lstm", id="state-of-another-batch"),
        pytest.param({"state": (H, B, 1)}, "gru", id="state-3d"),
        pytest.param({"state": (1, H)}, "gru", id="state-row"),
        pytest.param({"format": "CBTU"}, "lstm", id="u-format"),
        pytest.param({"mode": "before-multiplication"}, "gru", id="gru-before-multiplication"),
    ],
)
def test_the_layers_path_leaves_other_inputs_to_the_general_path(change, kind):
    """None: the general path runs instead (and converts, reshapes or refuses with its errors)."""
    from dlformat.functional._recurrent import layer_gru, layer_lstm

    params, states = layer_tensors(kind, 130)
    values = [*params, *states]
    if "dtype" in change:
        values[change["dtype"]] = values[change["dtype"]].double()
    if "state" in change:
        values[3] = torch.zeros(change["state"])
    X = (
        dlf.dlarray(torch.randn(D, B, T, 2), "CBTU")
        if "format" in change
        else dlf.dlarray(torch.randn(D, B, T), "CBT")
    )
    if kind == "lstm":
        assert layer_lstm(X, tuple(values[3:]), *values[:3]) is None
    else:
        mode = change.get("mode", "after-multiplication")
        assert layer_gru(X, tuple(values[3:]), *values[:3], reset_gate_mode=mode) is None
