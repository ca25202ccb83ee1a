"""The code the README and the core issue show runs as written."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"


def test_readme_python_examples_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write files
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 6
    networks = os.environ.get("DLFORMAT_MATLAB_NETWORKS")
    namespace: dict = {}
    for block in blocks:
        if "vikas_net.mat" in block:  # a real MATLAB-saved network, found through the variable
            if not networks:  # the example says where the file is and stops
                with pytest.raises(SystemExit, match="set DLFORMAT_MATLAB_NETWORKS to that folder"):
                    exec(compile(block, str(README), "exec"), namespace)
                continue
            exec(compile(block, str(README), "exec"), namespace)
            assert namespace["probs"].shape[0] > 1 and namespace["labels"][0] == "apple_red_yellow_1"
            continue
        exec(compile(block, str(README), "exec"), namespace)
    P = namespace["P"]
    assert namespace["dlf"].dims(P) == "CBT" and tuple(P.shape) == (128, 8, 20)
    assert namespace["table"]["Layer"].ravel().tolist() == ["posemb"]
    assert namespace["Z"].dtype == namespace["torch"].float32 and namespace["Y"].shape == (10, 2)
    assert (tmp_path / "learnables.mat").is_file()
    assert tuple(namespace["scores"].shape) == (10, 16)


def test_the_network_example_says_where_its_file_is_when_the_variable_is_unset(tmp_path, monkeypatch):
    """Issue 23, item 10: a new user has no vikas_net.mat; the example names its source and the
    variable, runs from any folder, and is not found by a path relative to the working folder."""
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S) if "vikas" in b]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DLFORMAT_MATLAB_NETWORKS", raising=False)
    with pytest.raises(SystemExit) as stop:
        exec(compile(block, str(README), "exec"), {})
    assert "github.com/Vikas-ABD/matlab_to_python_classification_using_DL" in str(stop.value)
    assert "DLFORMAT_MATLAB_NETWORKS" in str(stop.value)


def test_the_core_issue_example():
    import torch

    import dlformat as dlf

    X = dlf.dlarray(torch.randn(1, 8, 20), "CBT")  # 1 channel, 8 sequences, 20 time steps
    layer = dlf.positionEmbeddingLayer(64, 128, Name="posemb", WeightsInitializer="glorot")
    Y = layer(X)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (64, 8, 20)
    assert torch.equal(dlf.stripdims(Y, "BTC")[3, 5], layer.Weights[:, 5])
    Z = dlf.dlarray(torch.randn(64, 8, 20), "CBT") + Y  # word embedding + position embedding
    assert dlf.dims(Z) == "CBT" and tuple(Z.shape) == (64, 8, 20)
