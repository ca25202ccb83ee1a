"""sequenceFoldingLayer and sequenceUnfoldingLayer against MATLAB's column-major reshape, their
ports, formats, a CNN-LSTM network, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def numpy(Y):
    return dlf.extractdata(Y).numpy()


def test_ports_names_and_display():
    fold, unfold = dlf.sequenceFoldingLayer(), dlf.sequenceUnfoldingLayer(Name="unfold1")
    assert (fold.NumInputs, fold.InputNames, fold.NumOutputs, fold.OutputNames) == (
        1,
        ("in",),
        2,
        ("out", "miniBatchSize"),
    )
    assert (unfold.NumInputs, unfold.InputNames, unfold.NumOutputs, unfold.OutputNames) == (
        2,
        ("in", "miniBatchSize"),
        1,
        ("out",),
    )
    assert (fold.default_name, unfold.default_name, unfold.Name) == ("seqfold", "sequnfold", "unfold1")
    assert repr(fold).startswith("SequenceFoldingLayer with properties:")
    assert dlf.sequenceFoldingLayer("Name", "f").Name == "f"  # MATLAB's 'Name',value pair


@pytest.mark.parametrize(
    ("fmt", "sizes", "folded"),
    [
        ("SSCBT", (4, 3, 2, 5, 6), "SSCB"),
        ("SSSCBT", (3, 2, 2, 2, 3, 4), "SSSCB"),
        ("SCBT", (4, 3, 5, 6), "SCB"),
        ("CBT", (3, 5, 6), "CB"),
    ],
)
def test_folding_is_matlabs_column_major_reshape_and_unfolding_undoes_it(fmt, sizes, folded):
    x = np.random.default_rng(0).standard_normal(sizes)
    X = dlf.dlarray(torch.from_numpy(x), fmt)
    Y, N = dlf.sequenceFoldingLayer()(X)
    batch, steps = sizes[-2], sizes[-1]
    assert dlf.dims(Y) == folded and dlf.dims(N) == "" and int(N) == batch
    # MATLAB: reshape(X, [h w c N*T]); observation n + N*t (0-based) is step t of sequence n
    expected = x.reshape((*sizes[:-2], batch * steps), order="F")
    np.testing.assert_array_equal(numpy(Y), expected)
    np.testing.assert_array_equal(numpy(Y)[..., 1 + batch * 2], x[..., 1, 2])
    Z = dlf.sequenceUnfoldingLayer()(Y, N)
    assert dlf.dims(Z) == fmt
    np.testing.assert_array_equal(numpy(Z), x)


def test_a_cnn_lstm_network_runs_the_convolution_on_every_time_step():
    torch.manual_seed(0)
    conv = dlf.convolution2dLayer(3, 4)
    layers = [
        dlf.sequenceInputLayer([6, 6, 2], Name="in"),
        dlf.sequenceFoldingLayer(Name="fold"),
        conv,
        dlf.sequenceUnfoldingLayer(Name="unfold"),
        dlf.flattenLayer(),
        dlf.lstmLayer(5, OutputMode="last"),
    ]
    net = dlf.dlnetwork(layers, Initialize=False)
    assert net.InputNames == ("in", "unfold/miniBatchSize")
    net = dlf.connectLayers(net, "fold/miniBatchSize", "unfold/miniBatchSize")
    net = dlf.initialize(net).double()
    x = np.random.default_rng(1).standard_normal((6, 6, 2, 3, 4))
    (Y, folded) = dlf.predict(net, dlf.dlarray(torch.from_numpy(x), "SSCBT"), Outputs=["lstm", "unfold"])
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (5, 3) and dlf.dims(folded) == "SSCBT"
    for t in range(4):  # the convolution of each time step on its own
        step = net.Layers["conv"](dlf.dlarray(torch.from_numpy(x[..., t]), "SSCB"))
        np.testing.assert_allclose(numpy(folded)[..., t], numpy(step), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.sequenceFoldingLayer()(dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB")),
            r'needs a batch of sequences, a dlarray with "B" and "T" dimensions .* got format "SSCB"',
        ),
        (
            lambda: dlf.sequenceUnfoldingLayer()(dlf.dlarray(torch.randn(3, 2, 4), "CBT"), 2),
            r'needs folded data, a dlarray with a "B" dimension and no "T" .* got format "CBT"',
        ),
        (
            lambda: dlf.sequenceUnfoldingLayer()(dlf.dlarray(torch.randn(3, 7), "CB"), 2),
            "7 observations cannot be 2 sequences of equal length",
        ),
        (
            lambda: dlf.sequenceUnfoldingLayer()(dlf.dlarray(torch.randn(3, 4), "CB"), torch.tensor([2, 2])),
            "miniBatchSize must be one positive integer",
        ),
        (
            lambda: dlf.sequenceUnfoldingLayer()(dlf.dlarray(torch.randn(3, 4), "CB"), 0),
            "miniBatchSize",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
