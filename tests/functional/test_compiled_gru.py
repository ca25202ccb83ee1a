"""``torch.gru`` under ``torch.compile``: one opaque operation where no gradient is recorded.

torch's compiler decomposes ``aten.gru`` into one step per time step, so a compiled GRU network's
graph (and its compile time) grew with the sequence length; dlformat/functional/_compiled_gru.py
runs the fused kernel as a custom operator instead. The forward graph torch's compiler builds is
counted here: the same for 3 and 12 time steps under ``no_grad``, growing when gradients are
recorded (training keeps torch's decomposition, which has a backward)."""

from __future__ import annotations

import pytest
import torch

import dlformat as dlf

pytest.importorskip("torch._dynamo")


def _counting_backend(counts: list[int]):
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def forward_graph(graph_module, example_inputs):
        counts.append(len(graph_module.graph.nodes))
        return make_boxed_func(graph_module.forward)

    return aot_autograd(fw_compiler=forward_graph, bw_compiler=lambda gm, _: make_boxed_func(gm.forward))


@pytest.fixture
def network():
    torch.manual_seed(0)
    return dlf.dlnetwork(
        [
            dlf.sequenceInputLayer(2),
            dlf.gruLayer(4, Name="gru"),
            dlf.gruLayer(3, Name="gru2", ResetGateMode="recurrent-bias-after-multiplication"),
        ]
    )


def _compiled_nodes(network, steps: int, grad: bool) -> int:
    counts: list[int] = []
    torch._dynamo.reset()

    def run(data):
        return dlf.stripdims(network.predict(dlf.dlarray(data, "CBT")))

    compiled = torch.compile(run, backend=_counting_backend(counts), fullgraph=True)
    x = torch.randn(2, 5, steps, generator=torch.Generator().manual_seed(steps))
    with torch.set_grad_enabled(grad):
        ours = compiled(x)
        expected = run(x)
    torch.testing.assert_close(ours, expected)
    if grad:  # the compiled backward agrees with eager
        (ours_grad,) = torch.autograd.grad(ours.sum(), network.Layers[1].InputWeights)
        (expected_grad,) = torch.autograd.grad(expected.sum(), network.Layers[1].InputWeights)
        torch.testing.assert_close(ours_grad, expected_grad)
    return counts[0]


def test_inference_graph_does_not_grow_with_the_sequence(network):
    assert _compiled_nodes(network, 3, grad=False) == _compiled_nodes(network, 12, grad=False)


def test_training_keeps_torchs_differentiable_decomposition(network):
    assert _compiled_nodes(network, 4, grad=True) > _compiled_nodes(network, 2, grad=True)
