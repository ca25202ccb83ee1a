"""The code the README and the core issue show runs as written."""

from __future__ import annotations

import os
import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_python_examples_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write files
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 6
    networks = os.environ.get("DLFORMAT_MATLAB_NETWORKS")
    namespace: dict = {}
    for block in blocks:
        if "vikas_net.mat" in block:  # a real MATLAB-saved network: read where the files are
            if not networks:
                continue
            monkeypatch.chdir(networks)
            exec(compile(block, str(README), "exec"), namespace)
            monkeypatch.chdir(tmp_path)
            assert namespace["probs"].shape[0] > 1
            continue
        exec(compile(block, str(README), "exec"), namespace)
    P = namespace["P"]
    assert namespace["dlf"].dims(P) == "CBT" and tuple(P.shape) == (128, 8, 20)
    assert namespace["table"]["Layer"].ravel().tolist() == ["posemb"]
    assert namespace["Z"].dtype == namespace["torch"].float32 and namespace["Y"].shape == (10, 2)
    assert (tmp_path / "learnables.mat").is_file()
    assert tuple(namespace["scores"].shape) == (10, 16)


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
