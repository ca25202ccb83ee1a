"""Per-channel learnables and state keep MATLAB's size through dlformat's files (issue 23 item 2):
a `.pt` network file and a learnables file written from a network of 2-D image input give back
1×1×C values (MATLAB's size for that input, the batchNormalizationLayer page), and a file holding
them in another documented size (C×1, as dlformat wrote before) loads into the network's size."""

from __future__ import annotations

import numpy as np
import torch

import dlformat as dlf
from dlformat.io import load_learnables, savemat
from dlformat.io._network_file import read_network_file, write_network_file

C = 4


def image_network(seed: int = 0) -> dlf.DLNetwork:
    torch.manual_seed(seed)
    return dlf.dlnetwork(
        [
            dlf.imageInputLayer([5, 5, 3], Normalization="none"),
            dlf.convolution2dLayer(3, C),
            dlf.batchNormalizationLayer(ScaleInitializer="narrow-normal"),
            dlf.reluLayer(),
        ]
    )


def sizes(net: dlf.DLNetwork) -> dict[str, tuple[int, ...]]:
    rows = [*net.Learnables, *net.State]
    return {row[1]: tuple(row[2].shape) for row in rows if row[0] == "batchnorm"}


MATLAB_SIZES = dict.fromkeys(("Offset", "Scale", "TrainedMean", "TrainedVariance"), (1, 1, C))


def test_a_network_file_gives_back_matlabs_sizes(tmp_path):
    net = image_network()
    net.State = [(layer, name, torch.rand(1, 1, C) + 0.5) for layer, name, _ in net.State]
    assert sizes(net) == MATLAB_SIZES
    write_network_file(net, tmp_path / "net.pt")
    back = read_network_file(tmp_path / "net.pt")
    assert sizes(back) == MATLAB_SIZES
    for ours, theirs in zip(
        [*net.Learnables.Value, *net.State.Value], [*back.Learnables.Value, *back.State.Value], strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    dlf.resetState(back)  # the initial state keeps the size too
    assert sizes(back) == MATLAB_SIZES


def test_a_learnables_file_of_column_vectors_loads_into_the_networks_size(tmp_path):
    net = image_network()
    rows = [  # batch normalization's values as C×1 columns, times 2
        (layer, name, np.asarray(value.detach()) * (2 if layer == "batchnorm" else 1))
        for layer, name, value in net.Learnables
    ]
    rows = [
        (layer, name, value.reshape(-1, 1) if layer == "batchnorm" else value) for layer, name, value in rows
    ]
    columns = {key: np.empty((len(rows), 1), dtype=object) for key in ("Layer", "Parameter", "Value")}
    for index, row in enumerate(rows):
        for key, item in zip(columns, row, strict=True):
            columns[key][index, 0] = item
    savemat(tmp_path / "learnables.mat", columns)
    load_learnables(net, tmp_path / "learnables.mat")
    assert sizes(net) == MATLAB_SIZES
    for (_, _, value), (_, _, saved) in zip(net.Learnables, rows, strict=True):
        np.testing.assert_array_equal(value.detach().numpy().reshape(-1), saved.reshape(-1))
