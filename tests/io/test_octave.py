"""matlab/exportLearnables.m and importLearnables.m: Octave-written fixtures, and a live round trip.

The fixture tests always run (the files are committed, with their generator). The round trip
runs the .m files under GNU Octave when ``octave-cli`` is on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import load_learnables, loadmat, save_learnables

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "octave"
MATLAB = ROOT / "matlab"


def generated_values() -> tuple[np.ndarray, np.ndarray]:
    """NumPy recomputations of generate.m's formulas (MATLAB reshape is column-major)."""
    posemb = (np.arange(24.0).reshape(4, 6, order="F") / 8 - 1).astype(np.float32)
    second = np.arange(1.0, 16.0).reshape(3, 5, order="F") ** 2 / 7
    return posemb, second


def network() -> nn.Module:
    return nn.Sequential(
        dlf.positionEmbeddingLayer(4, 6, Name="posemb"),
        dlf.positionEmbeddingLayer(3, 5, Name="pos-emb/2", dtype=torch.float64),
    )


@pytest.mark.parametrize("name", ["learnables_v7.mat", "learnables_v6.mat"])
def test_octave_written_learnables_files(name):
    posemb, second = generated_values()
    table = loadmat(FIXTURES / name)
    assert table["Layer"].ravel().tolist() == ["posemb", "pos-emb/2"]
    assert table["Parameter"].ravel().tolist() == ["Weights", "Weights"]
    np.testing.assert_array_equal(table["Value"][0, 0], posemb)
    assert table["Value"][0, 0].dtype == np.float32
    np.testing.assert_allclose(table["Value"][1, 0], second, rtol=1e-15)
    net = network()
    assert load_learnables(net, FIXTURES / name) == ([], [])
    np.testing.assert_array_equal(net[0].Weights.detach().numpy(), posemb)
    np.testing.assert_allclose(net[1].Weights.detach().numpy(), second, rtol=1e-15)


def test_octave_written_version_4_file():
    loaded = loadmat(FIXTURES / "weights_v4.mat")
    np.testing.assert_allclose(loaded["W"], np.arange(6.0).reshape(2, 3, order="F") * np.pi, rtol=1e-15)
    assert loaded["W"].dtype == np.float64 and loaded["W"].dtype.isnative


OCTAVE = shutil.which("octave-cli")


def octave(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    path = folder / "script.m"
    path.write_text(f"addpath('{MATLAB}');\n{script}\n")
    return subprocess.run(
        [OCTAVE, "--norc", str(path)], capture_output=True, text=True, timeout=120, cwd=folder
    )


@pytest.mark.skipif(OCTAVE is None, reason="GNU Octave (octave-cli) is not on PATH")
def test_round_trip_python_to_octave_and_back(tmp_path):
    torch.manual_seed(0)
    net = network()
    save_learnables(net, tmp_path / "from_python.mat")
    stand_in = """
net.Learnables.Layer = {'posemb'; 'pos-emb/2'};
net.Learnables.Parameter = {'Weights'; 'Weights'};
net.Learnables.Value = {zeros(4, 6, 'single'); zeros(3, 5)};
net = importLearnables(net, 'from_python.mat');
assert(strcmp(class(net.Learnables.Value{1}), 'single'));
net.Learnables.Value{1} = 2 * net.Learnables.Value{1};
net.Learnables.Value{2} = net.Learnables.Value{2} + 1;
exportLearnables(net, 'from_octave.mat');
bad = net; bad.Learnables.Value{2} = zeros(5, 3);
try
  importLearnables(bad, 'from_octave.mat');
  disp('no error');
catch err
  disp(err.message);
end
"""
    result = octave(stand_in, tmp_path)
    assert (
        'Layer "pos-emb/2" parameter "Weights" is [3 5] in the file but [5 3] in the network.'
        in result.stdout
    ), result
    fresh = network()
    load_learnables(fresh, tmp_path / "from_octave.mat")
    torch.testing.assert_close(fresh[0].Weights, 2 * net[0].Weights, rtol=0, atol=0)
    torch.testing.assert_close(fresh[1].Weights, net[1].Weights + 1, rtol=0, atol=0)


@pytest.mark.skipif(OCTAVE is None, reason="GNU Octave (octave-cli) is not on PATH")
def test_octave_refuses_a_file_with_unknown_rows(tmp_path):
    save_learnables(network(), tmp_path / "from_python.mat")
    script = """
net.Learnables.Layer = {'posemb'};
net.Learnables.Parameter = {'Weights'};
net.Learnables.Value = {zeros(4, 6, 'single')};
try
  importLearnables(net, 'from_python.mat');
catch err
  disp(err.message);
end
"""
    result = octave(script, tmp_path)
    assert "The network has no learnable pos-emb/2/Weights (row 2 of from_python.mat)." in result.stdout, (
        result
    )


def test_python_refuses_an_octave_file_for_a_different_network():
    with pytest.raises(DLFormatError, match=r"unexpected rows: pos-emb/2/Weights"):
        load_learnables(
            nn.Sequential(dlf.positionEmbeddingLayer(4, 6, Name="posemb")), FIXTURES / "learnables_v7.mat"
        )


@pytest.mark.skipif(OCTAVE is None, reason="GNU Octave (octave-cli) is not on PATH")
def test_octave_exports_state_beside_learnables(tmp_path):
    script = """
net.Learnables.Layer = {'posemb'};
net.Learnables.Parameter = {'Weights'};
net.Learnables.Value = {ones(4, 6, 'single')};
net.State.Layer = {'bn'};
net.State.Parameter = {'TrainedMean'};
net.State.Value = {zeros(4, 1)};
exportLearnables(net, 'with_state.mat');
"""
    octave(script, tmp_path)
    table = loadmat(tmp_path / "with_state.mat")
    assert table["State"]["Layer"].ravel().tolist() == ["bn"]
    result = load_learnables(
        nn.Sequential(dlf.positionEmbeddingLayer(4, 6, Name="posemb")),
        tmp_path / "with_state.mat",
        strict=False,
    )
    assert result.unexpected == ["bn/TrainedMean (state)"]
