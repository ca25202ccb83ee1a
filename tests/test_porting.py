"""docs/porting.md: its port of MATLAB's positionEmbeddingLayer example runs and is right."""

from __future__ import annotations

import re
from pathlib import Path

import torch

import dlformat as dlf

PORTING = Path(__file__).parents[1] / "docs" / "porting.md"


def python_block(containing: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", PORTING.read_text(), flags=re.S)
    return next(block for block in blocks if containing in block)


def test_the_documentation_example_port_runs_and_adds_word_and_position_embeddings():
    namespace = {"torch": torch, "dlf": dlf}
    torch.manual_seed(0)
    exec(compile(python_block("dlf.addLayers(net, layers)"), str(PORTING), "exec"), namespace)
    X, Y, net = namespace["X"], namespace["Y"], namespace["net"]
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (64, 8, 20)
    assert net.OutputNames == ("add",) and list(net.Connections)[-1] == ("wordemb", "add/in2")
    ids = dlf.stripdims(X)[0].long() - 1  # B × T, 0-based
    layers = {layer.Name: layer for layer in net.Layers}
    words = layers["wordemb"].Weights.detach()  # Dimension × NumWords, as MATLAB stores it
    positions = layers["posemb"].Weights.detach()
    got = dlf.stripdims(Y).detach()
    for b in range(8):
        for t in range(20):
            torch.testing.assert_close(got[:, b, t], words[:, ids[b, t]] + positions[:, t], rtol=0, atol=0)


def test_the_formatted_array_snippet_matches_its_comments():
    X = dlf.dlarray(torch.randn(3, 4, 5), "TCB")
    assert repr(X).startswith("4(C) × 5(B) × 3(T) dlarray")
    assert dlf.dims(X) == "CBT" and dlf.finddim(X, "T") == (3,)
    assert tuple(dlf.dlarray(torch.randn(6, 2), "CBT").shape) == (6, 2, 1)
