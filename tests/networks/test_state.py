"""Network State, MATLAB's way: net.State, ReturnState, which state stays after a call, resetState,
predictAndUpdateState, state_dict and learnables files."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import load_learnables, loadmat, save_learnables


class CountingState(dlf.Layer):
    """Recurrent-style state (the protocol LSTM layers follow): every call assigns new state, which
    a network puts back afterwards unless the class lets its updates persist."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_state("HiddenState", torch.full((3, 1), 5.0))

    def predict(self, X):
        self.HiddenState = self.HiddenState + 1
        return X + dlf.dlarray(self.HiddenState)


class PersistingCount(CountingState):
    state_updates_persist = True


def bn_net(**options):
    return dlf.dlnetwork(
        [
            dlf.featureInputLayer(3, Name="in"),
            dlf.batchNormalizationLayer(Name="bn", **options),
            dlf.fullyConnectedLayer(2, Name="fc"),
        ]
    )


def data(seed=0, batch=6):
    generator = np.random.default_rng(seed)
    return generator.normal(1.5, 2.0, size=(3, batch))


def running_update(trained, x, decay=0.1):
    """MathWorks' rule over a "CB" batch: (mean, biased variance) each decay·batch + (1 − decay)·trained."""
    mean, variance = trained
    batch_mean = x.mean(axis=1, keepdims=True)
    batch_variance = ((x - batch_mean) ** 2).mean(axis=1, keepdims=True)
    return decay * batch_mean + (1 - decay) * mean, decay * batch_variance + (1 - decay) * variance


def test_forward_updates_batch_normalization_state_and_predict_does_not():
    net = bn_net()
    assert set(net.State.Parameter) == {"TrainedMean", "TrainedVariance"}
    assert net.State.Layer == ("bn", "bn") and net.State.columns == ("Layer", "Parameter", "Value")
    expected = (np.zeros((3, 1)), np.ones((3, 1)))
    for seed in range(3):
        x = data(seed)
        dlf.forward(net, dlf.dlarray(torch.from_numpy(x).float(), "CB"))
        expected = running_update(expected, x)
        np.testing.assert_allclose(net.State.Value[0].numpy(), expected[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(net.State.Value[1].numpy(), expected[1], rtol=1e-5, atol=1e-6)
    before = [value.clone() for value in net.State.Value]
    net.predict(dlf.dlarray(torch.from_numpy(data(9)).float(), "CB"))
    dlf.predict(net, dlf.dlarray(torch.from_numpy(data(8)).float(), "CB"))
    for value, old in zip(net.State.Value, before, strict=True):
        assert torch.equal(value, old)


def test_return_state_gives_the_updated_table_after_the_outputs():
    net = bn_net()
    X = dlf.dlarray(torch.from_numpy(data()).float(), "CB")
    Y, state = dlf.forward(net, X, ReturnState=True)
    assert dlf.dims(Y) == "CB" and state.columns == ("Layer", "Parameter", "Value") and len(state) == 2
    for returned, held in zip(state.Value, net.State.Value, strict=True):
        assert torch.equal(returned, held)  # batch normalization's updates also stay in the network
    _, state2 = net.predict(X, ReturnState=True)
    assert torch.equal(state2.Value[0], state.Value[0])
    plain = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
    Y3, empty = dlf.predict(plain, X, ReturnState=True)
    assert len(empty) == 0 and dlf.dims(Y3) == "CB"


def test_non_persisting_state_is_put_back_unless_the_caller_assigns_it():
    net = dlf.dlnetwork([dlf.featureInputLayer(3, Name="in"), CountingState(Name="rnn")])
    X = dlf.dlarray(torch.zeros(3, 2), "CB")
    for run in (dlf.forward, dlf.predict, lambda net, X, **kw: net(X, **kw)):
        Y, state = run(net, X, ReturnState=True)
        torch.testing.assert_close(dlf.extractdata(Y), torch.full((3, 2), 6.0))
        torch.testing.assert_close(state.Value[0], torch.full((3, 1), 6.0))  # the value the call computed
        torch.testing.assert_close(net.Layers["rnn"].HiddenState, torch.full((3, 1), 5.0))  # put back
    net.State = state  # MATLAB's net.State = state
    torch.testing.assert_close(net.Layers["rnn"].HiddenState, torch.full((3, 1), 6.0))
    Y = dlf.predictAndUpdateState(net, X)  # legacy: predict, then keep the state
    torch.testing.assert_close(dlf.extractdata(Y), torch.full((3, 2), 7.0))
    torch.testing.assert_close(net.Layers["rnn"].HiddenState, torch.full((3, 1), 7.0))
    assert net.resetState() is net
    torch.testing.assert_close(net.Layers["rnn"].HiddenState, torch.full((3, 1), 5.0))


class Failing(dlf.Layer):
    def predict(self, X):
        raise DLFormatError("boom")


def test_persisting_state_stays_and_a_failed_call_changes_nothing():
    net = dlf.dlnetwork([dlf.featureInputLayer(3, Name="in"), PersistingCount(Name="count")])
    torch.testing.assert_close(
        net.Layers["count"].HiddenState, torch.full((3, 1), 5.0)
    )  # initialize keeps it
    dlf.predict(net, dlf.dlarray(torch.zeros(3, 2), "CB"))
    torch.testing.assert_close(net.Layers["count"].HiddenState, torch.full((3, 1), 6.0))
    net.addLayers(Failing(Name="fail"))
    net.connectLayers("count", "fail")
    with pytest.raises(DLFormatError, match="boom"):
        dlf.predict(net, dlf.dlarray(torch.zeros(3, 2), "CB"))
    torch.testing.assert_close(net.Layers["count"].HiddenState, torch.full((3, 1), 6.0))


def test_reset_state_restores_initial_values():
    net = bn_net(TrainedMean=np.full((3, 1), 0.5))
    dlf.forward(net, dlf.dlarray(torch.from_numpy(data()).float(), "CB"))
    assert not torch.equal(net.State.Value[0], torch.full((3, 1), 0.5))
    assert dlf.resetState(net) is net
    # a given value keeps its dtype (float64 here), as given learnables do
    torch.testing.assert_close(net.State.Value[0], torch.full((3, 1), 0.5, dtype=torch.float64))
    torch.testing.assert_close(net.State.Value[1], torch.ones(3, 1))


def test_lazy_batch_normalization_gets_state_from_its_first_input():
    net = dlf.dlnetwork([dlf.batchNormalizationLayer(Name="bn")], Initialize=False)  # an unconnected input
    assert len(net.State) == 0
    X = dlf.dlarray(torch.randn(4, 5, 3, 2), "SSCB")
    Y, state = dlf.forward(net, X, ReturnState=True)
    # MATLAB's 1×1×NumChannels for 2-D image input (the batchNormalizationLayer page)
    assert dlf.dims(Y) == "SSCB" and [tuple(value.shape) for value in state.Value] == [(1, 1, 3), (1, 1, 3)]
    dlf.resetState(net)
    torch.testing.assert_close(net.State.Value[0], torch.zeros(1, 1, 3))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (lambda s: [("nope", "TrainedMean", s[0][2]), *s[1:]], r"State: the network has no layer 'nope'"),
        (
            lambda s: [("bn", "Mean", s[0][2]), *s[1:]],
            r"State: layer 'bn' has no state parameter 'Mean'; its state parameters are: TrainedMean, "
            r"TrainedVariance",
        ),
        (
            lambda s: [("bn", "TrainedMean", torch.ones(4, 1)), *s[1:]],
            r"TrainedMean must have size 3×1, 1×3, 1×1×3 or 1×1×1×3 \(.*\); got 4×1",
        ),
        (lambda s: s[:1], r"State: the table has no row for bn/TrainedVariance"),
        (lambda s: [*s, s[0]], r"State: bn/TrainedMean appears twice"),
        (lambda s: [("bn", "TrainedMean", torch.ones(3, 1, dtype=torch.int64)), *s[1:]], r"floating-point"),
        (lambda s: "table", r"State must be a table with columns Layer, Parameter, Value"),
        (lambda s: dlf.dlnetwork([dlf.featureInputLayer(3)]).Connections, r"got columns Source, Destination"),
    ],
)
def test_assigning_state_checks_every_row_first(rows, message):
    net = bn_net()
    before = [value.clone() for value in net.State.Value]
    good = [(layer, parameter, torch.full((3, 1), 9.0)) for layer, parameter, _ in net.State]
    with pytest.raises(DLFormatError, match=message):
        net.State = rows(good)
    for value, old in zip(net.State.Value, before, strict=True):
        assert torch.equal(value, old)  # nothing half-assigned


def test_assigned_state_keeps_dtype_and_takes_matlab_shapes():
    net = bn_net()
    net.State = [("bn", "TrainedMean", np.full((1, 1, 3), 2.0)), ("bn", "TrainedVariance", np.ones((3, 1)))]
    value = net.Layers["bn"].TrainedMean
    assert value.dtype == torch.float32 and tuple(value.shape) == (3, 1) and float(value[0, 0]) == 2.0


def test_state_dict_and_learnables_files_carry_state(tmp_path):
    net = bn_net()
    dlf.forward(net, dlf.dlarray(torch.from_numpy(data()).float(), "CB"))
    assert "layers.bn.TrainedMean" in net.state_dict() and "layers.bn.TrainedVariance" in net.state_dict()
    fresh = bn_net()
    fresh.load_state_dict(net.state_dict())
    torch.testing.assert_close(fresh.State.Value[0], net.State.Value[0], rtol=0, atol=0)

    save_learnables(net, tmp_path / "l.mat")
    table = loadmat(tmp_path / "l.mat")
    assert table["State"]["Parameter"].ravel().tolist() == ["TrainedMean", "TrainedVariance"]
    other = bn_net()
    result = load_learnables(other, tmp_path / "l.mat")
    assert not result.missing and not result.unexpected
    for loaded, saved in zip(other.State.Value, net.State.Value, strict=True):
        torch.testing.assert_close(loaded, saved, rtol=0, atol=0)


def test_a_matlab_state_struct_with_image_shaped_statistics_loads(tmp_path):
    from dlformat.io import savemat

    net = bn_net()
    cells = {name: np.empty((2, 1), dtype=object) for name in ("Layer", "Parameter", "Value")}
    cells["Layer"][:, 0] = ["bn", "bn"]
    cells["Parameter"][:, 0] = ["TrainedMean", "TrainedVariance"]
    cells["Value"][0, 0] = np.arange(3.0).reshape(1, 1, 3)  # MATLAB: 1×1×NumChannels for 2-D images
    cells["Value"][1, 0] = np.full((1, 1, 3), 4.0)
    learnables = {name: np.empty((4, 1), dtype=object) for name in ("Layer", "Parameter", "Value")}
    for index, (layer, parameter) in enumerate(
        [("bn", "Offset"), ("bn", "Scale"), ("fc", "Weights"), ("fc", "Bias")]
    ):
        value = getattr(net.Layers[layer], parameter).detach().numpy()
        learnables["Layer"][index, 0], learnables["Parameter"][index, 0] = layer, parameter
        learnables["Value"][index, 0] = value
    savemat(tmp_path / "m.mat", {**learnables, "State": cells})
    result = load_learnables(net, tmp_path / "m.mat")
    assert not result.missing and not result.unexpected
    torch.testing.assert_close(net.Layers["bn"].TrainedMean, torch.tensor([[0.0], [1.0], [2.0]]))
    cells["Parameter"][1, 0] = "Variance"
    savemat(tmp_path / "bad.mat", {**learnables, "State": cells})
    with pytest.raises(DLFormatError, match=r"unexpected rows: bn/Variance \(state\)"):
        load_learnables(net, tmp_path / "bad.mat")
    assert load_learnables(net, tmp_path / "bad.mat", strict=False).missing == ["bn/TrainedVariance (state)"]


def test_the_issue_network_shape_of_state_after_forward():
    """The issue's check, on the layers that exist here: a network with batch normalization has
    State parameters TrainedMean and TrainedVariance after forward."""
    layers = [
        dlf.sequenceInputLayer(3, Name="in"),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
        dlf.fullyConnectedLayer(4),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork(layers)
    Y = dlf.forward(net, dlf.dlarray(torch.randn(3, 2, 5), "CBT"))
    assert dlf.dims(Y) == "CBT"
    assert set(net.State.Parameter) == {"TrainedMean", "TrainedVariance"}
    assert "State: [2×3 table]" in repr(net)


def test_compiled_network_with_batch_normalization_matches_eager():
    net = bn_net()
    compiled = torch.compile(net, fullgraph=True, backend="eager")
    X = dlf.dlarray(torch.from_numpy(data()).float(), "CB")
    twin = bn_net()
    twin.load_state_dict(net.state_dict())
    got, expected = compiled(X, training=True), twin(X, training=True)
    torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected))
    torch.testing.assert_close(net.State.Value[0], twin.State.Value[0])


def test_compiled_network_puts_back_non_persisting_state():
    net = dlf.dlnetwork([dlf.featureInputLayer(3, Name="in"), CountingState(Name="rnn")])
    compiled = torch.compile(net, fullgraph=True, backend="eager")
    Y, state = compiled(dlf.dlarray(torch.zeros(3, 2), "CB"), training=False, ReturnState=True)
    torch.testing.assert_close(dlf.extractdata(Y), torch.full((3, 2), 6.0))
    torch.testing.assert_close(state.Value[0], torch.full((3, 1), 6.0))
    torch.testing.assert_close(net.Layers["rnn"].HiddenState, torch.full((3, 1), 5.0))
