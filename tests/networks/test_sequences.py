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


# -- minibatchpredict: variable-length sequences -------------------------------------------------
K = 2
W_FC = np.array([[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]])
B_FC = np.array([[0.1], [-0.3]])
LENGTHS = (5, 2, 4)


def sequences(lengths=LENGTHS, seed=8):
    """MATLAB's cell array of s-by-c sequences (time steps × channels)."""
    generator = np.random.default_rng(seed)
    return [generator.standard_normal((length, C)) for length in lengths]


def fc_net(*tail):
    fc = dlf.fullyConnectedLayer(K, Weights=torch.tensor(W_FC), Bias=torch.tensor(B_FC), dtype=torch.float64)
    return dlf.dlnetwork([dlf.sequenceInputLayer(C), fc, *tail])


def fc_reference(x):
    """The fully connected layer on a c×s sequence: one output column per time step."""
    return W_FC @ x + B_FC


@pytest.mark.parametrize("direction", ["right", "left"])
def test_the_padding_mask_makes_indexing_take_each_sequences_own_last_step(direction):
    net = fc_net(dlf.indexing1dLayer("last", HasPaddingMaskInput=True))
    assert net.InputNames == ("sequenceinput", "indexing1d/mask") and net.Initialized
    X = sequences()
    Y = dlf.minibatchpredict(net, X, SequencePaddingDirection=direction, SequencePaddingValue=7.0)
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (K, len(X))
    expected = np.stack([fc_reference(x.T)[:, -1] for x in X], axis=1)
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-15, atol=1e-15)
    # the masks given as an input (MATLAB: a second input of ones per time step) do the same
    masks = [np.ones((len(x), 1)) for x in X]
    Y2 = dlf.minibatchpredict(net, X, masks, SequencePaddingDirection=direction, SequencePaddingValue=7.0)
    np.testing.assert_array_equal(numpy(Y2), numpy(Y))
    items = dlf.minibatchpredict(net, X, masks, Outputs="fc", UniformOutput=False)
    assert [tuple(item.shape) for item in items] == [(K, n) for n in LENGTHS]  # padding removed


def test_without_a_mask_the_last_step_of_a_right_padded_sequence_is_padding():
    """MATLAB's rule: padding is data to layers without a mask input; right padding puts it last."""
    net = fc_net(dlf.indexing1dLayer("last"))
    X = sequences()
    Y = numpy(dlf.minibatchpredict(net, X, SequencePaddingValue=3.0))
    padding = fc_reference(np.full((C, 1), 3.0))[:, 0]
    np.testing.assert_allclose(Y[:, 0], fc_reference(X[0].T)[:, -1], rtol=1e-15)  # the longest
    np.testing.assert_allclose(Y[:, 1], padding, rtol=1e-15)
    left = numpy(dlf.minibatchpredict(net, X, SequencePaddingDirection="left"))
    np.testing.assert_allclose(left, np.stack([fc_reference(x.T)[:, -1] for x in X], 1), rtol=1e-15)


@pytest.mark.parametrize(
    ("length", "direction", "kept"),
    [
        ("longest", "right", lambda x, n: np.pad(x, ((0, 0), (0, n - x.shape[1])), constant_values=-1.0)),
        ("longest", "left", lambda x, n: np.pad(x, ((0, 0), (n - x.shape[1], 0)), constant_values=-1.0)),
        ("shortest", "right", lambda x, n: x[:, :n]),
        ("shortest", "left", lambda x, n: x[:, x.shape[1] - n :]),
    ],
)
def test_padding_and_truncation_of_a_sequence_output(length, direction, kept):
    net = fc_net()
    X = sequences()
    target = max(LENGTHS) if length == "longest" else min(LENGTHS)
    options = {"SequenceLength": length, "SequencePaddingDirection": direction, "SequencePaddingValue": -1.0}
    Y = dlf.minibatchpredict(net, X, **options)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (K, len(X), target)
    expected = np.stack([fc_reference(kept(x.T, target)) for x in X], axis=1)
    np.testing.assert_allclose(numpy(Y), expected, rtol=1e-15, atol=1e-15)
    # one output per observation, the padding removed: each sequence's own steps (or the kept ones)
    items = dlf.minibatchpredict(net, X, UniformOutput=False, **options)
    assert len(items) == len(X) and {dlf.dims(item) for item in items} == {"CT"}
    for item, x in zip(items, X, strict=True):
        own = x.T if length == "longest" else kept(x.T, target)
        np.testing.assert_allclose(numpy(item), fc_reference(own), rtol=1e-15, atol=1e-15)


def test_recurrent_outputs_follow_predict_on_the_padded_batch():
    """Left padding, as MATLAB recommends for OutputMode "last": the padding runs through the
    LSTM first (no hidden masking: the result is predict on the padded batch, not on each
    sequence alone)."""
    torch.manual_seed(4)
    net = dlf.dlnetwork([dlf.sequenceInputLayer(C), dlf.lstmLayer(H, OutputMode="last")]).double()
    X = sequences()
    Y = dlf.minibatchpredict(net, X, SequencePaddingDirection="left")
    padded = np.stack([np.pad(x.T, ((0, 0), (max(LENGTHS) - len(x), 0))) for x in X], axis=1)
    expected = dlf.predict(net, dlf.dlarray(torch.from_numpy(padded), "CBT"))
    np.testing.assert_array_equal(numpy(Y), numpy(expected))
    alone = numpy(dlf.predict(net, dlf.dlarray(torch.from_numpy(X[0].T[:, None, :]), "CBT")))
    np.testing.assert_allclose(numpy(Y)[:, :1], alone, rtol=1e-12, atol=1e-14)  # the longest: no padding


def test_mini_batches_are_padded_on_their_own():
    net = fc_net(dlf.indexing1dLayer("last", HasPaddingMaskInput=True))
    X = sequences((5, 2, 4, 3, 6))
    whole = numpy(dlf.minibatchpredict(net, X))
    np.testing.assert_array_equal(numpy(dlf.minibatchpredict(net, X, MiniBatchSize=2)), whole)
    with pytest.raises(
        DLFormatError, match=r"different sizes in different mini-batches .* UniformOutput=False"
    ):
        dlf.minibatchpredict(fc_net(), X, MiniBatchSize=2)
    items = dlf.minibatchpredict(fc_net(), X, MiniBatchSize=2, UniformOutput=False)
    assert [tuple(item.shape) for item in items] == [(K, n) for n in (5, 2, 4, 3, 6)]


def test_layouts_formats_and_outputs():
    net = fc_net(dlf.indexing1dLayer("last", HasPaddingMaskInput=True))
    X = sequences()
    Y = numpy(dlf.minibatchpredict(net, X))
    columns = dlf.minibatchpredict(net, [x.T for x in X], InputDataFormats="CTB")  # c×s arrays
    np.testing.assert_array_equal(numpy(columns), Y)
    formatted = [dlf.dlarray(torch.from_numpy(x.T), "CT") for x in X]
    np.testing.assert_array_equal(numpy(dlf.minibatchpredict(net, formatted)), Y)
    rows = dlf.minibatchpredict(net, X, OutputDataFormats="BC")  # a plain N×K tensor
    assert isinstance(rows, torch.Tensor) and not isinstance(rows, dlf.DLArray)
    np.testing.assert_array_equal(rows.numpy(), Y.T)
    fc, last = dlf.minibatchpredict(net, X, Outputs=["fc", "indexing1d"])
    assert (dlf.dims(fc), dlf.dims(last)) == ("CBT", "CB")
    features = dlf.dlnetwork([dlf.featureInputLayer(C), dlf.fullyConnectedLayer(K)])
    rows_in = np.random.default_rng(0).standard_normal((7, C)).astype(np.float32)  # MATLAB: N×c
    out = dlf.minibatchpredict(features, rows_in, MiniBatchSize=3)
    assert dlf.dims(out) == "CB" and tuple(out.shape) == (K, 7)
    np.testing.assert_allclose(
        numpy(out), numpy(dlf.predict(features, dlf.dlarray(rows_in, "BC"))), rtol=1e-6
    )


def test_state_is_left_as_it_was():
    net = recurrent_net(dlf.lstmLayer(H))
    before = [value.clone() for value in net.State.Value]
    dlf.minibatchpredict(net, sequences())
    assert all(torch.equal(a, b) for a, b in zip(net.State.Value, before, strict=True))


def same(X):
    return [X]


@pytest.mark.parametrize(
    ("inputs", "options", "message"),
    [
        (
            same,
            {"SequenceLength": 4},
            r'SequenceLength must be "longest" or "shortest"; got 4 \(int\)\. MATLAB',
        ),
        (same, {"SequenceLength": "all"}, "SequenceLength"),
        (same, {"SequencePaddingDirection": "both"}, "SequencePaddingDirection"),
        (same, {"MiniBatchSize": 0}, "MiniBatchSize"),
        (same, {"UniformOutput": "yes"}, "UniformOutput must be true or false"),
        (same, {"InputDataFormats": "CT"}, 'each of InputDataFormats must have a "B" dimension; got "CT"'),
        (lambda X: [X, X], {}, r"the network has 1 input\(s\) \(sequenceinput\); got 2"),
        (lambda X: [[]], {}, "input 'sequenceinput' is an empty list"),
        (
            lambda X: [[x.T for x in X]],
            {},
            r'sequence 1 of input \'sequenceinput\' is 3×5; MATLAB\'s "auto" layout is s×c .* InputDataFormats="CTB"',
        ),
    ],
)
def test_minibatchpredict_errors(inputs, options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.minibatchpredict(fc_net(), *inputs(sequences()), **options)


def test_minibatchpredict_needs_an_initialized_dlnetwork():
    with pytest.raises(DLFormatError, match="minibatchpredict needs an initialized dlnetwork"):
        dlf.minibatchpredict(dlf.layerGraph([dlf.sequenceInputLayer(C)]), sequences())


# -- legacy predict on a cell array of c×s sequences ----------------------------------------------
def regression_network(mode):
    torch.manual_seed(5)
    lstm = dlf.lstmLayer(H, InputSize=C, OutputMode=mode, dtype=torch.float64)
    fc = dlf.fullyConnectedLayer(K, InputSize=H, dtype=torch.float64)
    return dlf.assembleNetwork([dlf.sequenceInputLayer(C), lstm, fc, dlf.regressionLayer()])


def test_legacy_predict_on_sequences_returns_each_sequence_without_padding():
    net = regression_network("sequence")
    X = [x.T for x in sequences()]  # the legacy layout: c×s
    Y = dlf.predict(net, X)
    assert isinstance(Y, list) and [tuple(y.shape) for y in Y] == [(K, n) for n in LENGTHS]
    for y, x in zip(Y, X, strict=True):  # right padding follows each sequence's own steps
        alone = dlf.predict(net, dlf.dlarray(torch.from_numpy(x[:, None, :]), "CBT"))
        assert dlf.dims(y) == "CT"
        np.testing.assert_allclose(numpy(y), numpy(alone)[:, 0], rtol=1e-12, atol=1e-14)
    # a number: each padded mini-batch split into chunks of 2 steps, the state carried between them
    chunked = dlf.predict(net, X, SequenceLength=2, MiniBatchSize=2)
    for a, b in zip(chunked, dlf.predict(net, X, MiniBatchSize=2), strict=True):
        np.testing.assert_array_equal(numpy(a), numpy(b))
    assert all(torch.equal(value, torch.zeros(H, 1, dtype=torch.float64)) for value in net.body.State.Value)


def test_legacy_predict_on_sequences_to_one_vector_each():
    net = regression_network("last")
    X = [x.T for x in sequences()]
    Y = dlf.predict(net, X, SequencePaddingDirection="left", SequencePaddingValue=0.5)
    padded = np.stack(
        [np.pad(x, ((0, 0), (max(LENGTHS) - x.shape[1], 0)), constant_values=0.5) for x in X], 1
    )
    expected = dlf.predict(net, dlf.dlarray(torch.from_numpy(padded), "CBT"))
    assert dlf.dims(Y) == "CB"
    np.testing.assert_array_equal(numpy(Y), numpy(expected))
    with pytest.raises(DLFormatError, match="predict: MiniBatchSize apply to a cell array"):
        dlf.predict(net, dlf.dlarray(torch.from_numpy(padded), "CBT"), MiniBatchSize=2)
    with pytest.raises(DLFormatError, match="predict of a dlnetwork takes no SequenceLength"):
        dlf.predict(fc_net(), X, SequenceLength="shortest")
    with pytest.raises(DLFormatError, match="SequenceLength"):
        dlf.predict(net, X, SequenceLength=0)
