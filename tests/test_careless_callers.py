"""Issue 11's careless-caller defects: each a clear DLFormatError (or the right result), never a raw
torch or Python exception, and nothing changed on error."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

import dlformat as dlf
from dlformat import DLFormatError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.positionEmbeddingLayer(10**400, 8), r"OutputSize must be at most 2\^53"),
        (
            lambda: dlf.positionEmbeddingLayer(2**52, 2**20),
            r"PositionEmbeddingLayer Weights of size 4503599627370496×1048576 would hold about 10\^21 values",
        ),
        (lambda: dlf.fullyConnectedLayer(3, InputSize=1e30), r"InputSize must be at most 2\^53"),
        (
            lambda: dlf.fullyConnectedLayer(
                3, InputSize=2, device="cuda:99" if torch.cuda.is_available() else "cuda"
            ),
            r"device 'cuda(:99)?' cannot be used here",
        ),
        pytest.param(
            lambda: dlf.dlarray(np.ones(3, dtype=np.longdouble)),
            r"NumPy dtype float128 has no torch counterpart",
            marks=pytest.mark.skipif(
                np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is double here"
            ),
        ),
    ],
    ids=["10**400 channels", "2**72 values", "InputSize 1e30", "missing device", "float128"],
)
def test_impossible_sizes_devices_and_dtypes_are_clear_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


@pytest.mark.parametrize(
    "make",
    [
        lambda: dlf.fullyConnectedLayer(2, Name="L"),
        lambda: dlf.selfAttentionLayer(1, 2, Name="L"),
        lambda: dlf.layerNormalizationLayer(Name="L"),
        lambda: dlf.softmaxLayer(Name="L"),
        lambda: dlf.geluLayer(Name="L"),
        lambda: dlf.reluLayer(Name="L"),
    ],
)
def test_integer_data_is_refused_naming_the_layer_and_logical_data_computes_as_single(make):
    layer = make()
    with pytest.raises(
        DLFormatError, match=r"'L' needs floating-point or logical data .* got dtype torch.int32"
    ):
        layer(dlf.dlarray(torch.ones(3, 2, 4, dtype=torch.int32), "CBT"))
    assert layer(dlf.dlarray(torch.ones(3, 2, 4, dtype=torch.bool), "CBT")).dtype == torch.float32


def test_dropout_refuses_integers_in_training_and_passes_logical_data_as_single():
    layer = dlf.dropoutLayer(0.5, Name="L")
    with pytest.raises(DLFormatError, match=r"DropoutLayer 'L' needs floating-point or logical data"):
        layer(dlf.dlarray(torch.ones(3, 2, dtype=torch.int64), "CB"), training=True)
    assert layer(dlf.dlarray(torch.ones(3, 2, dtype=torch.bool), "CB"), training=True).dtype == torch.float32


def test_param_groups_takes_a_list_of_layers():
    fc = dlf.fullyConnectedLayer(3, InputSize=2)
    groups = dlf.param_groups([fc], lr=0.1)
    assert sum(len(group["params"]) for group in groups) == 2 and {group["lr"] for group in groups} == {0.1}
    with pytest.raises(DLFormatError, match=r"param_groups needs a module or a list of layers"):
        dlf.param_groups([fc, "relu"], lr=0.1)


def test_read_only_python_properties_are_refused_as_matlab_does():
    layer = dlf.fullyConnectedLayer(3)
    with pytest.raises(DLFormatError, match=r"You cannot set the read-only property 'Initialized'"):
        layer.Initialized = False
    assert not layer.Initialized


def test_a_dataloader_batches_dlarrays_along_b():
    data = [(dlf.dlarray(torch.full((3, 5), float(i)), "CT"), i) for i in range(4)]
    X, labels = next(iter(DataLoader(data, batch_size=3)))
    assert dlf.dims(X) == "CBT" and tuple(X.shape) == (3, 3, 5) and labels.tolist() == [0, 1, 2]
    assert dlf.extractdata(X)[0, :, 0].tolist() == [0.0, 1.0, 2.0]
    batched = [dlf.dlarray(torch.randn(3, 2), "CB") for _ in range(3)]
    assert tuple(dlf.collate(batched).shape) == (3, 6)
    with pytest.raises(DLFormatError, match=r"cannot batch dlarrays of different formats"):
        dlf.collate([dlf.dlarray(torch.randn(3, 2), "CB"), dlf.dlarray(torch.randn(3, 2), "CT")])
    with pytest.raises(DLFormatError, match=r'cannot batch "CT" dlarrays of different sizes'):
        dlf.collate([dlf.dlarray(torch.randn(3, 2), "CT"), dlf.dlarray(torch.randn(3, 4), "CT")])


def test_a_layer_with_twenty_thousand_inputs_builds_names_and_displays():
    # quadratic bookkeeping took 9.5 s for 10,000 inputs; linear code takes a fraction of a second
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.additionLayer(20_000)], Initialize=False)
    assert len(net.InputNames) == 20_000 and net.InputNames[-1] == "addition/in20000"
    # the display summarizes them as MATLAB's compact display does (docs/networks.md#display)
    assert "InputNames: {1×20000 cell}" in repr(net) and len(net.Connections) == 1


@pytest.mark.parametrize("bad", [-3, 1.5, "2", None])
def test_rotary_offsets_are_checked_on_every_assignment(bad):
    rope = dlf.RotaryEmbedding(8, 64)
    with pytest.raises(DLFormatError, match=r"position_offset must be an integer >= 0"):
        rope.position_offset = bad
    assert rope.position_offset == 0
