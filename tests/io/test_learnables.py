"""Learnables files: MATLAB's net.Learnables table as three N×1 cells."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import load_learnables, loadmat, save_learnables, savemat


def network(seed=0, dtype=torch.float32):
    torch.manual_seed(seed)
    return nn.ModuleDict(
        {
            "posemb": dlf.positionEmbeddingLayer(4, 6, Name="posemb", dtype=dtype),
            "second": dlf.positionEmbeddingLayer(
                3, 5, Name="pos-emb/2", dtype=dtype
            ),  # not a valid field name
            "head": nn.Linear(4, 2),
        }
    )


def learnables_file(path, rows, version="7"):
    columns = {name: np.empty((len(rows), 1), dtype=object) for name in ("Layer", "Parameter", "Value")}
    for index, (layer, parameter, value) in enumerate(rows):
        columns["Layer"][index, 0] = layer
        columns["Parameter"][index, 0] = parameter
        columns["Value"][index, 0] = value
    savemat(path, columns, version=version)
    return path


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_save_writes_matlabs_three_column_layout(tmp_path, version):
    net = network()
    save_learnables(net, tmp_path / "l.mat", version=version)
    table = loadmat(tmp_path / "l.mat")
    assert sorted(table) == ["Layer", "Parameter", "Value"]
    assert table["Layer"].shape == (2, 1) and table["Layer"].ravel().tolist() == ["posemb", "pos-emb/2"]
    assert table["Parameter"].ravel().tolist() == ["Weights", "Weights"]
    np.testing.assert_array_equal(table["Value"][0, 0], net["posemb"].Weights.detach().numpy())
    assert table["Value"][1, 0].shape == (3, 5) and table["Value"][1, 0].dtype == np.float32


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_round_trip_into_a_fresh_network_gives_identical_outputs(tmp_path, version):
    trained, fresh = network(seed=1), network(seed=2)
    save_learnables(trained, tmp_path / "l.mat", version=version)
    assert load_learnables(fresh, tmp_path / "l.mat") == ([], [])
    X = dlf.dlarray(torch.randn(4, 2, 6), "CBT")
    assert torch.equal(dlf.stripdims(fresh["posemb"](X)), dlf.stripdims(trained["posemb"](X)))
    assert torch.equal(fresh["second"].Weights, trained["second"].Weights)


def test_values_are_converted_to_the_parameters_dtype_in_place(tmp_path):
    net = network()
    weights = net["posemb"].Weights
    rows = [("posemb", "Weights", np.arange(24.0).reshape(4, 6)), ("pos-emb/2", "Weights", np.ones((3, 5)))]
    load_learnables(net, learnables_file(tmp_path / "l.mat", rows))
    assert net["posemb"].Weights is weights and weights.dtype == torch.float32
    np.testing.assert_array_equal(weights.detach().numpy(), np.arange(24.0, dtype=np.float32).reshape(4, 6))


def test_strict_names_missing_and_unexpected_rows_and_changes_nothing(tmp_path):
    net = network()
    before = {name: p.detach().clone() for name, p in net.named_parameters()}
    rows = [
        ("posemb", "Weights", np.ones((4, 6))),
        ("decoder", "Weights", np.ones((2, 2))),
        ("posemb", "Bias", np.ones((4, 1))),
    ]
    path = learnables_file(tmp_path / "l.mat", rows)
    message = r"missing rows: pos-emb/2/Weights; unexpected rows: decoder/Weights, posemb/Bias \(strict=False skips them\)"
    with pytest.raises(DLFormatError, match=message):
        load_learnables(net, path)
    assert all(torch.equal(p, before[name]) for name, p in net.named_parameters())
    result = load_learnables(net, path, strict=False)
    assert result.missing == ["pos-emb/2/Weights"] and result.unexpected == ["decoder/Weights", "posemb/Bias"]
    assert torch.equal(net["posemb"].Weights, torch.ones(4, 6))


def test_a_shape_mismatch_is_always_an_error_and_nothing_is_half_assigned(tmp_path):
    net = network()
    before = net["posemb"].Weights.detach().clone()
    rows = [("posemb", "Weights", np.zeros((4, 6))), ("pos-emb/2", "Weights", np.zeros((5, 3)))]
    path = learnables_file(tmp_path / "l.mat", rows)
    for strict in (True, False):
        with pytest.raises(
            DLFormatError,
            match=r"row 2: layer 'pos-emb/2' parameter 'Weights' is 5×3 in the file but 3×5 in the network",
        ):
            load_learnables(net, path, strict=strict)
    assert torch.equal(net["posemb"].Weights, before)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        (
            {"Layer": np.ones((1, 1))},
            r"is not a Learnables file: it lacks Parameter, Value \(it holds Layer\)",
        ),
        (
            {"Layer": np.ones((1, 1)), "Parameter": np.ones((1, 1)), "Value": np.ones((1, 1))},
            r"Layer must be an N×1 cell array; got ndarray",
        ),
    ],
)
def test_files_that_are_not_learnables_tables(tmp_path, mapping, message):
    savemat(tmp_path / "x.mat", mapping)
    with pytest.raises(DLFormatError, match=message):
        load_learnables(network(), tmp_path / "x.mat")


def test_rows_with_bad_entries(tmp_path):
    path = learnables_file(tmp_path / "l.mat", [("posemb", "Weights", "not numbers")])
    with pytest.raises(DLFormatError, match=r"row 1: Value of posemb/Weights must be a numeric array"):
        load_learnables(network(), path)
    twice = [("posemb", "Weights", np.ones((4, 6))), ("posemb", "Weights", np.ones((4, 6)))]
    path = learnables_file(tmp_path / "m.mat", twice)
    with pytest.raises(DLFormatError, match=r"row 2: posemb/Weights appears twice"):
        load_learnables(network(), path, strict=False)


def test_layers_need_unique_names(tmp_path):
    unnamed = nn.Sequential(dlf.positionEmbeddingLayer(2, 3))
    with pytest.raises(DLFormatError, match=r"a PositionEmbeddingLayer with learnables has no Name"):
        save_learnables(unnamed, tmp_path / "x.mat")
    twins = nn.Sequential(
        dlf.positionEmbeddingLayer(2, 3, Name="p"), dlf.positionEmbeddingLayer(2, 3, Name="p")
    )
    with pytest.raises(DLFormatError, match=r"two layers are named 'p'"):
        save_learnables(twins, tmp_path / "x.mat")
    with pytest.raises(DLFormatError, match=r"holds no named dlformat layer with learnable parameters"):
        save_learnables(nn.Linear(2, 2), tmp_path / "x.mat")
    assert list(tmp_path.iterdir()) == []


def test_state_rows_are_read_and_reported_as_unexpected(tmp_path):
    net = network()
    table = {name: np.empty((2, 1), dtype=object) for name in ("Layer", "Parameter", "Value")}
    for index, (layer, value) in enumerate([("posemb", np.ones((4, 6))), ("pos-emb/2", np.ones((3, 5)))]):
        table["Layer"][index, 0], table["Parameter"][index, 0], table["Value"][index, 0] = (
            layer,
            "Weights",
            value,
        )
    state = {name: np.empty((1, 1), dtype=object) for name in ("Layer", "Parameter", "Value")}
    state["Layer"][0, 0], state["Parameter"][0, 0], state["Value"][0, 0] = (
        "bn",
        "TrainedMean",
        np.zeros((4, 1)),
    )
    savemat(tmp_path / "l.mat", {**table, "State": state})
    with pytest.raises(DLFormatError, match=r"unexpected rows: bn/TrainedMean \(state\)"):
        load_learnables(net, tmp_path / "l.mat")
    result = load_learnables(net, tmp_path / "l.mat", strict=False)
    assert result.unexpected == ["bn/TrainedMean (state)"] and result.missing == []
    assert torch.equal(net["posemb"].Weights, torch.ones(4, 6))
    savemat(tmp_path / "bad.mat", {**table, "State": {"Layer": state["Layer"]}})
    with pytest.raises(DLFormatError, match=r"\(State\): Parameter is missing"):
        load_learnables(net, tmp_path / "bad.mat", strict=False)


def test_a_missing_h5py_is_named_with_its_install_command(tmp_path, monkeypatch):
    import sys

    save_learnables(network(), tmp_path / "l.mat", version="7.3")
    monkeypatch.setitem(sys.modules, "h5py", None)  # makes "import h5py" fail
    with pytest.raises(
        DLFormatError,
        match=r"^cannot read .*l\.mat: MAT-file version 7\.3 is HDF5, which needs the optional package h5py, the "
        r'dlformat\[hdf5\] extra; install it with pip install -e "\.\[hdf5\]" from the dlformat repository$',
    ):
        loadmat(tmp_path / "l.mat")
    with pytest.raises(DLFormatError, match=r"needs the optional package h5py"):
        savemat(tmp_path / "x.mat", {"x": 1}, version="7.3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.mat"]


def _built_in_inference_mode(net):
    with torch.inference_mode():
        net["third"] = dlf.positionEmbeddingLayer(2, 3, Name="third")
    return net


def _overlapping(net):
    # a parameter whose elements share memory: copying into it fails inside torch
    net["third"] = dlf.positionEmbeddingLayer(2, 3, Name="third")
    net["third"]._parameters["Weights"] = nn.Parameter(torch.zeros(1, 3).expand(2, 3))
    return net


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (
            _built_in_inference_mode,
            r"layer 'third' parameter 'Weights' was created under torch.inference_mode\(\), and PyTorch "
            r"allows no change to such a tensor outside it; .*\(nothing was assigned\)",
        ),
        (_overlapping, r"copying into layer 'third' parameter 'Weights' failed \(.*\); nothing was changed"),
    ],
    ids=["inference mode", "overlapping memory"],
)
def test_a_parameter_that_cannot_take_its_value_changes_nothing(tmp_path, spoil, message):
    # issue 11, defect 18: layers a and b were assigned, then a raw RuntimeError came at c
    net = spoil(network())
    rows = [
        ("posemb", "Weights", np.ones((4, 6))),
        ("pos-emb/2", "Weights", np.ones((3, 5))),
        ("third", "Weights", np.ones((2, 3))),
    ]
    path = learnables_file(tmp_path / "l.mat", rows)
    before = {name: p.detach().clone() for name, p in net.named_parameters()}
    with pytest.raises(DLFormatError, match=message):
        load_learnables(net, path, strict=False)
    assert all(torch.equal(p, before[name]) for name, p in net.named_parameters())


def test_a_network_built_in_inference_mode_loads_in_inference_mode(tmp_path):
    net = _built_in_inference_mode(network())
    rows = [("posemb", "Weights", np.ones((4, 6))), ("third", "Weights", np.full((2, 3), 2.0))]
    path = learnables_file(tmp_path / "l.mat", rows)
    with torch.inference_mode():
        load_learnables(net, path, strict=False)
    assert torch.equal(net["third"].Weights, torch.full((2, 3), 2.0))


def _series(seed):
    torch.manual_seed(seed)
    return dlf.assembleNetwork(
        [
            dlf.featureInputLayer(3, Name="in"),
            dlf.fullyConnectedLayer(2, InputSize=3, Name="fc 1-ä"),  # not a MATLAB field name
            dlf.regressionLayer(Name="out"),
        ]
    )


def test_a_series_network_saves_and_loads_as_it_is(tmp_path):
    """A SeriesNetwork (not a torch module) is taken whole; its output layer learns nothing."""
    ours, theirs = _series(0), _series(1)
    save_learnables(ours, tmp_path / "l.mat")
    assert list(loadmat(tmp_path / "l.mat")["Layer"].ravel()) == ["fc 1-ä", "fc 1-ä"]
    assert load_learnables(theirs, tmp_path / "l.mat") == ([], [])
    X = dlf.dlarray(torch.randn(3, 4), "CB")
    torch.testing.assert_close(dlf.extractdata(theirs.predict(X)), dlf.extractdata(ours.predict(X)))


def test_something_that_holds_no_layers_is_named(tmp_path):
    with pytest.raises(DLFormatError, match=r"expected a network, layer or torch module .*; got int"):
        save_learnables(3, tmp_path / "l.mat")


def meta_network():
    with torch.device("meta"):
        return dlf.dlnetwork(
            [
                dlf.featureInputLayer(4),
                dlf.fullyConnectedLayer(3, Name="fc"),
                dlf.batchNormalizationLayer(Name="bn"),
            ]
        )


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda net: None, r"^save_learnables: learnable 'Weights' of layer 'fc' is on the meta device"),
        (  # the learnables have values, a state parameter has none
            lambda net: [
                net.to_empty(device="cpu"),
                net.Layers[2].register_buffer("TrainedMean", torch.zeros(3, 1, device="meta")),
            ],
            r"^save_learnables: state parameter 'TrainedMean' of layer 'bn' is on the meta device",
        ),
    ],
)
def test_a_value_on_the_meta_device_is_named_by_its_layer_and_parameter(tmp_path, spoil, message):
    """Issue 23, item 10: the error named the table cell (Value{1}), not what holds no values."""
    net = meta_network()
    spoil(net)
    with pytest.raises(DLFormatError, match=message) as error:
        save_learnables(net, tmp_path / "learnables.mat")
    assert "Value{" not in str(error.value) and 'net.to_empty(device="cpu")' in str(error.value)
    assert not (tmp_path / "learnables.mat").exists()


def test_a_meta_network_given_values_as_the_message_says_saves(tmp_path):
    real = dlf.dlnetwork(
        [
            dlf.featureInputLayer(4),
            dlf.fullyConnectedLayer(3, Name="fc"),
            dlf.batchNormalizationLayer(Name="bn"),
        ]
    )
    save_learnables(real, tmp_path / "real.mat")
    net = meta_network()
    net.to_empty(device="cpu")
    assert load_learnables(net, tmp_path / "real.mat") == ([], [])
    save_learnables(net, tmp_path / "again.mat")
    saved, again = loadmat(tmp_path / "real.mat"), loadmat(tmp_path / "again.mat")
    for one, other in zip(saved["Value"].ravel(), again["Value"].ravel(), strict=True):
        np.testing.assert_array_equal(one, other)
