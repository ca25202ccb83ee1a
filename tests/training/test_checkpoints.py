"""Checkpoints: MATLAB's file names at the iterations or epochs CheckpointFrequency picks, the
network they hold (load_network reads it back, outputs equal), resuming training from one."""

from __future__ import annotations

import re
import time

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training._checkpoints import checkpoint_name, is_main_process

from . import _toy

NAME = re.compile(r"net_checkpoint__(\d+)__\d{4}_\d\d_\d\d__\d\d_\d\d_\d\d\.pt")


def written(folder) -> dict[int, object]:
    files = {}
    for path in folder.iterdir():
        match = NAME.fullmatch(path.name)
        assert match, f"unexpected file {path.name}"  # no temporary files left either
        files[int(match.group(1))] = path
    return files


def test_the_name_is_matlabs_with_the_pt_extension():
    when = time.struct_time((2024, 5, 3, 20, 19, 25, 4, 124, 0))
    assert checkpoint_name(3472, when) == "net_checkpoint__3472__2024_05_03__20_19_25.pt"


@pytest.mark.parametrize(
    ("frequency", "unit", "iterations"),
    [(1, "epoch", [4, 8, 12]), (2, "epoch", [8]), (3, "iteration", [3, 6, 9, 12]), (5, "iteration", [5, 10])],
)
def test_checkpoints_are_written_at_the_right_iterations(tmp_path, frequency, unit, iterations):
    options = _toy.options(MaxEpochs=3, CheckpointPath=str(tmp_path), CheckpointFrequency=frequency,
                           CheckpointFrequencyUnit=unit)  # fmt: skip
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    assert sorted(written(tmp_path)) == iterations


def outputs(net):
    return dlf.extractdata(dlf.predict(net, dlf.dlarray(_toy.XV, "BC")))


def test_a_checkpoint_loads_back_as_the_network_of_its_iteration(tmp_path):
    options = _toy.options(
        CheckpointPath=str(tmp_path), CheckpointFrequencyUnit="iteration", CheckpointFrequency=4
    )
    net, _ = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    files = written(tmp_path)
    last = dlf.io.load_network(files[8])
    assert isinstance(last, dlf.DLNetwork)
    assert torch.equal(outputs(last), outputs(net))
    assert not torch.equal(outputs(dlf.io.load_network(files[4])), outputs(net))


def test_resuming_from_a_checkpoint_continues_training(tmp_path):
    """Stateless SGD (no momentum, no shuffling): one epoch from the epoch-1 checkpoint ends where
    two epochs in one run end."""
    common = dict(solver="sgdm", Momentum=0, L2Regularization=0)
    options = _toy.options(**common, CheckpointPath=str(tmp_path))
    full, _ = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    start = dlf.io.load_network(written(tmp_path)[4])
    resumed, info = dlf.trainnet(
        _toy.X, _toy.LABELS, start, "crossentropy", _toy.options(**common, MaxEpochs=1)
    )
    assert len(info.TrainingHistory) == 4
    torch.testing.assert_close(outputs(resumed), outputs(full), rtol=1e-6, atol=1e-7)


def test_trainnetwork_checkpoints_hold_its_legacy_network(tmp_path):
    options = _toy.options(CheckpointPath=str(tmp_path), MaxEpochs=1)
    net, _ = dlf.trainNetwork(_toy.X, _toy.LABELS, _toy.layers(True), options)
    saved = dlf.io.load_network(written(tmp_path)[4])
    assert type(saved).__name__ == "SeriesNetwork"
    assert torch.equal(outputs(saved), outputs(net))
    labels, _ = dlf.classify(saved, dlf.dlarray(_toy.XV, "BC"))
    assert list(labels) == list(dlf.classify(net, dlf.dlarray(_toy.XV, "BC"))[0])
    # MATLAB's way to go on training a SeriesNetwork: its layers
    dlf.trainNetwork(_toy.X, _toy.LABELS, saved.Layers, _toy.options(MaxEpochs=1))


def test_a_missing_folder_is_an_error_before_training(tmp_path):
    with pytest.raises(DLFormatError, match="is not an existing folder; create it before training"):
        _toy.options(CheckpointPath=str(tmp_path / "missing"))
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(DLFormatError, match="is not an existing folder"):
        _toy.options(CheckpointPath=str(file))


def test_only_the_main_process_writes():
    assert is_main_process()  # no torch.distributed group: the one process writes
