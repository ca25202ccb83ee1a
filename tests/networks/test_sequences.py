"""Sequences through networks: predictAndUpdateState and classifyAndUpdateState stepping one time
step per call equal one call over the whole sequence, resetState starts again; variable-length
sequences in minibatchpredict (MATLAB's cell arrays, padding, the padding mask)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

C, B, T, H = 3, 4, 6, 5


def recurrent_net(recurrent, **options):
    torch.manual_seed(0)
    layers = [dlf.sequenceInputLayer(C), recurrent, dlf.fullyConnectedLayer(2)]
    return dlf.dlnetwork(layers, **options).double()


def steps(x):
    """One "CBT" dlarray per time step of ``x``."""
    return [dlf.dlarray(torch.from_numpy(x[:, :, t : t + 1]), "CBT") for t in range(x.shape[2])]


def data(seed=1, batch=B, length=T):
    return np.random.default_rng(seed).standard_normal((C, batch, length))


def numpy(Y):
    return dlf.extractdata(Y).numpy()


def joined(outputs):
    return np.concatenate([dlf.extractdata(Y).numpy() for Y in outputs], axis=2)


@pytest.mark.parametrize(
    "recurrent",
    [
        pytest.param(lambda: dlf.lstmLayer(H), id="lstm"),
        pytest.param(lambda: dlf.lstmLayer(H, GateActivationFunction="hard-sigmoid"), id="lstm-looped"),
        pytest.param(lambda: dlf.gruLayer(H), id="gru"),
        pytest.param(lambda: dlf.gruLayer(H, ResetGateMode="before-multiplication"), id="gru-looped"),
    ],
)
def test_stepping_one_time_step_per_call_equals_one_call(recurrent):
    net = recurrent_net(recurrent())
    x = data()
    whole = numpy(dlf.predict(net, dlf.dlarray(torch.from_numpy(x), "CBT")))
    initial = [value.clone() for value in net.State.Value]
    stepped = [dlf.predictAndUpdateState(net, X) for X in steps(x)]
    assert {dlf.dims(Y) for Y in stepped} == {"CBT"} and tuple(stepped[0].shape) == (2, B, 1)
    np.testing.assert_array_equal(joined(stepped), whole)  # exactly, in float64
    assert [tuple(value.shape) for value in net.State.Value] == [(H, B)] * len(initial)
    assert dlf.resetState(net) is net
    for value, start in zip(net.State.Value, initial, strict=True):
        assert torch.equal(value, start) and tuple(value.shape) == (H, 1)
    again = [dlf.predictAndUpdateState(net, X) for X in steps(x)]
    np.testing.assert_array_equal(joined(again), whole)


def test_stepping_carries_a_given_initial_state_and_reset_restores_it():
    h0 = np.random.default_rng(3).standard_normal((H, 1))
    net = recurrent_net(dlf.gruLayer(H, HiddenState=h0))
    x = data(4)
    whole = numpy(dlf.predict(net, dlf.dlarray(torch.from_numpy(x), "CBT")))
    np.testing.assert_array_equal(joined([dlf.predictAndUpdateState(net, X) for X in steps(x)]), whole)
    dlf.resetState(net)
    np.testing.assert_array_equal(net.State.Value[0].numpy(), h0)


def test_predict_returns_the_state_of_every_observation_and_assigning_it_carries_on():
    """MATLAB's [Y, state] = predict(net, X); net.State = state: the state table holds one column
    per observation, and assigning it continues the sequence."""
    net = recurrent_net(dlf.lstmLayer(H))
    x = data(5)
    whole = numpy(dlf.predict(net, dlf.dlarray(torch.from_numpy(x), "CBT")))
    first, state = dlf.predict(net, dlf.dlarray(torch.from_numpy(x[:, :, :2]), "CBT"), ReturnState=True)
    assert [tuple(value.shape) for value in state.Value] == [(H, B), (H, B)]
    net.State = state
    second = dlf.predict(net, dlf.dlarray(torch.from_numpy(x[:, :, 2:]), "CBT"))
    np.testing.assert_array_equal(joined([first, second]), whole)
    with pytest.raises(DLFormatError, match=r"HiddenState' must have size 5×1 or 5×N \(one column per"):
        net.State = [(row[0], row[1], torch.zeros(H + 1, 1)) for row in state]


def test_a_bidirectional_layer_steps_its_forward_half_only():
    """A BiLSTM's backward direction reads each call's input from its end, so one step per call
    cannot equal one call (it needs the whole sequence): the forward direction's channels match
    exactly, the backward direction's do not. dlformat runs it (MATLAB's pages name no error)."""
    torch.manual_seed(0)
    net = dlf.dlnetwork([dlf.sequenceInputLayer(C), dlf.bilstmLayer(H)]).double()
    x = data(6)
    whole = numpy(dlf.predict(net, dlf.dlarray(torch.from_numpy(x), "CBT")))
    stepped = joined([dlf.predictAndUpdateState(net, X) for X in steps(x)])
    np.testing.assert_array_equal(stepped[:H], whole[:H])
    assert not np.allclose(stepped[H:], whole[H:])


# -- legacy networks: SeriesNetwork -------------------------------------------------------------
CLASSES = ["low", "mid", "high"]


def series_network():
    torch.manual_seed(2)
    lstm = dlf.lstmLayer(H, InputSize=C, dtype=torch.float64)
    fc = dlf.fullyConnectedLayer(len(CLASSES), InputSize=H, dtype=torch.float64)
    layers = [
        dlf.sequenceInputLayer(C),
        lstm,
        fc,
        dlf.softmaxLayer(),
        dlf.classificationLayer(Classes=CLASSES),
    ]
    return dlf.assembleNetwork(layers)


def test_classify_and_update_state_steps_like_one_classify_call():
    net = series_network()
    x = data(7)
    labels, scores = dlf.classify(net, dlf.dlarray(torch.from_numpy(x), "CBT"))
    assert labels.shape == (B, T) and dlf.dims(scores) == "CBT"
    stepped = [dlf.classifyAndUpdateState(net, X) for X in steps(x)]
    step_scores = joined([score for _, score in stepped])
    # the LSTM's steps are exact; softmax over 1 or 6 time steps may round the last bit differently
    np.testing.assert_allclose(step_scores, numpy(scores), rtol=1e-15, atol=0)
    expected = np.asarray(CLASSES, dtype=object)[step_scores.argmax(axis=0)]  # the highest score's class
    np.testing.assert_array_equal(np.concatenate([label for label, _ in stepped], axis=1), expected)
    np.testing.assert_array_equal(labels, expected)
    assert dlf.resetState(net) is net
    assert all(torch.equal(value, torch.zeros(H, 1, dtype=torch.float64)) for value in net.body.State.Value)
    Y = joined([dlf.predictAndUpdateState(net, X) for X in steps(x)])
    np.testing.assert_array_equal(Y, step_scores)


def test_the_update_state_functions_need_a_recurrent_network():
    fc = dlf.fullyConnectedLayer(2, InputSize=C, dtype=torch.float64)
    net = dlf.assembleNetwork(
        [dlf.featureInputLayer(C), fc, dlf.softmaxLayer(), dlf.classificationLayer(Classes=["a", "b"])]
    )
    X = dlf.dlarray(torch.randn(C, 2, dtype=torch.float64), "CB")
    for function in (dlf.classifyAndUpdateState, dlf.predictAndUpdateState):
        with pytest.raises(DLFormatError, match="supports recurrent neural networks only"):
            function(net, X)
    with pytest.raises(DLFormatError, match="classifyAndUpdateState needs a SeriesNetwork or DAGNetwork"):
        dlf.classifyAndUpdateState(dlf.dlnetwork([dlf.featureInputLayer(C)]), X)
    with pytest.raises(DLFormatError, match="Outputs is for dlnetwork objects"):
        dlf.predictAndUpdateState(series_network(), X, Outputs="fc")
