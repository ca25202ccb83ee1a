"""torch.compile (no graph breaks) and torch.export over dlarrays and positionEmbeddingLayer."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import dlformat as dlf

# dlformat's cached format plans must reach dynamo as constants, never traced through lru_cache
pytestmark = pytest.mark.filterwarnings("error:Dynamo detected a call to a `functools.lru_cache`")


class TokenAndPosition(nn.Module):
    """Token embedding + position embedding + addition, formats carried as dlarrays."""

    def __init__(self, vocabulary=50, channels=16, max_position=32):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, channels)
        self.posemb = dlf.positionEmbeddingLayer(channels, max_position, Name="posemb")

    def forward(self, ids: torch.Tensor) -> dlf.DLArray:
        X = dlf.dlarray(self.tokens(ids), "BTC")  # batch-first memory, labelled
        return X + self.posemb(X)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_compile_fullgraph_matches_eager(backend):
    torch.manual_seed(0)
    model = TokenAndPosition()
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    for batch, length in [(2, 7), (3, 11)]:
        ids = torch.randint(0, 50, (batch, length))
        expected, got = model(ids), compiled(ids)
        assert isinstance(got, dlf.DLArray) and dlf.dims(got) == "CBT"
        torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected), rtol=1e-6, atol=1e-6)


def test_compile_with_inductor_and_dlarray_inputs_and_backward():
    torch.manual_seed(0)
    layer = dlf.positionEmbeddingLayer(8, 16)

    def step(X: dlf.DLArray) -> torch.Tensor:
        Y = X * 2 + layer(X)
        return dlf.stripdims(Y, "BTC").square().sum()

    compiled = torch.compile(step, fullgraph=True)
    X = dlf.dlarray(torch.randn(8, 4, 10), "CBT")
    compiled(X).backward()
    compiled_grad = layer.Weights.grad.clone()
    layer.Weights.grad = None
    step(X).backward()
    torch.testing.assert_close(compiled_grad, layer.Weights.grad)


def test_export_succeeds_and_matches_eager():
    torch.manual_seed(0)
    model = TokenAndPosition().eval()
    ids = torch.randint(0, 50, (2, 9))
    program = torch.export.export(model, (ids,))
    result = program.module()(ids)
    assert isinstance(result, dlf.DLArray) and dlf.dims(result) == "CBT"
    torch.testing.assert_close(dlf.stripdims(result), dlf.stripdims(model(ids)), rtol=0, atol=0)


def test_export_with_a_dlarray_input():
    layer = dlf.positionEmbeddingLayer(4, 12).eval()

    class AddPosition(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        def forward(self, X):
            return X + self.layer(X)

    X = dlf.dlarray(torch.randn(4, 2, 6), "CBT")
    program = torch.export.export(AddPosition(), (X,))
    torch.testing.assert_close(dlf.stripdims(program.module()(X)), dlf.stripdims(X + layer(X)))


def test_changing_position_offset_is_seen_by_a_compiled_model():
    """Cached decoding moves PositionOffset between calls; a compiled graph must not keep the old one."""
    layer = dlf.positionEmbeddingLayer(4, 12, WeightsInitializer="glorot")
    compiled = torch.compile(lambda X: dlf.stripdims(layer(X)), fullgraph=True, backend="eager")
    X = dlf.dlarray(torch.zeros(4, 1, 1), "CBT")
    for offset in (0, 3, 7):
        layer.PositionOffset = offset
        torch.testing.assert_close(compiled(X)[:, 0, 0], layer.Weights[:, offset].detach(), rtol=0, atol=0)


def test_sinusoidal_and_rotary_layers_compile_without_graph_breaks():
    encode = dlf.sinusoidalPositionEncodingLayer(8)
    rotate = dlf.RotaryEmbedding(8, 32)

    def step(X: dlf.DLArray) -> torch.Tensor:
        return dlf.stripdims(rotate(X + encode(X)))

    compiled = torch.compile(step, fullgraph=True, backend="eager")
    X = dlf.dlarray(torch.randn(8, 2, 6), "CBT")
    torch.testing.assert_close(compiled(X), step(X), rtol=0, atol=0)


def test_a_whole_dlnetwork_compiles_without_graph_breaks_and_exports():
    torch.manual_seed(0)
    layers = [
        dlf.sequenceInputLayer(1, Name="input"),
        dlf.wordEmbeddingLayer(16, 32, Name="wordemb"),
        dlf.positionEmbeddingLayer(16, 32, Name="posemb"),
        dlf.additionLayer(2, Name="add"),
        dlf.layerNormalizationLayer(),
        dlf.selfAttentionLayer(2, 16, AttentionMask="causal"),
        dlf.fullyConnectedLayer(32),
        dlf.geluLayer(),
        dlf.softmaxLayer(),
    ]
    net = dlf.initialize(
        dlf.connectLayers(dlf.addLayers(dlf.dlnetwork(), layers), "wordemb", "add/in2")
    ).eval()
    X = dlf.dlarray(torch.randint(1, 33, (1, 3, 9)).float(), "CBT")
    compiled = torch.compile(net, fullgraph=True, backend="eager")
    torch.testing.assert_close(dlf.stripdims(compiled(X)), dlf.stripdims(net(X)))
    program = torch.export.export(net, (X,))
    torch.testing.assert_close(dlf.stripdims(program.module()(X)), dlf.stripdims(net(X)))


def test_convolution_pooling_and_normalization_functions_compile_without_graph_breaks():
    """MATLAB's padding (odd "same", [t b l r], mirrored values, avgpool's "mean") and weight
    layouts are planned in plain Python that dynamo folds."""
    from dlformat import functional as F

    torch.manual_seed(0)
    weights = [torch.randn(3, 3, 3, 8), torch.randn(2, 2, 1, 2, 8), torch.randn(4, 4, 3, 16)]

    def cnn(x: torch.Tensor) -> torch.Tensor:
        Y = F.dlconv(dlf.dlarray(x, "SSCB"), weights[0], torch.zeros(8), Padding="same", Stride=2)
        Y = F.batchnorm(Y, torch.zeros(8), torch.ones(8))
        Y = F.maxpool(F.relu(Y), 2, Stride=2, Padding="same")
        Y = F.dlconv(Y, weights[1], 0, Padding=(0, 1, 0, 1), PaddingValue="symmetric-exclude-edge")
        Y = F.avgpool(Y, [2, 3], Padding="same", PaddingValue="mean")
        Y = F.groupnorm(Y, 4, torch.zeros(16), torch.ones(16))
        Y = F.dltranspconv(Y, weights[2], 0, Stride=2, Cropping="same")
        return dlf.stripdims(F.instancenorm(Y, torch.zeros(3), torch.ones(3)))

    compiled = torch.compile(cnn, fullgraph=True, backend="eager")
    x = torch.randn(13, 11, 3, 2)
    torch.testing.assert_close(compiled(x), cnn(x))


def test_a_cnn_of_convolution_and_pooling_layers_compiles_and_trains_like_eager():
    """The convolution and pooling layers (and fullyConnectedLayer) under fullgraph=True: the same
    output and the same gradients as eager."""
    torch.manual_seed(0)
    model = nn.Sequential(
        dlf.convolution2dLayer(3, 8, NumChannels=3, Padding="same", Stride=2),
        dlf.reluLayer(),
        dlf.maxPooling2dLayer(2, Stride=2, Padding="same"),
        dlf.groupedConvolution2dLayer(3, 2, "channel-wise", Padding=[0, 1, 1, 0], PaddingValue="replicate"),
        dlf.averagePooling2dLayer(2, Padding="same", PaddingValue="mean"),
        dlf.transposedConv2dLayer(4, 4, Stride=2, Cropping="same"),
        dlf.globalAveragePooling2dLayer(),
        dlf.fullyConnectedLayer(5),
    )
    X = dlf.dlarray(torch.randn(13, 11, 3, 2), "SSCB")
    model(X)  # first call creates the lazy learnables
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    expected, got = model(X), compiled(X)
    assert dlf.dims(got) == "CB"
    torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected))
    eager_grads = torch.autograd.grad(dlf.stripdims(expected).sum(), list(model.parameters()))
    compiled_grads = torch.autograd.grad(dlf.stripdims(got).sum(), list(model.parameters()))
    for eager_grad, compiled_grad in zip(eager_grads, compiled_grads, strict=True):
        torch.testing.assert_close(compiled_grad, eager_grad)


def test_importing_dlformat_leaves_dynamo_unimported():
    """The compile marks are plain attributes: `import dlformat` must not pay for importing torch._dynamo."""
    import subprocess
    import sys

    code = "import sys, dlformat, dlformat.io; print('torch._dynamo' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _decode(layer, offset_of):
    """Compile one decoding step (token + position at an offset) and run 50 successive offsets."""
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    step = torch.compile(
        lambda X, offset: X + layer(X, **{offset_of: offset}), fullgraph=True, backend=counter
    )
    return counter, step


@pytest.mark.parametrize("as_tensor", [False, True], ids=["int", "0-d tensor"])
@pytest.mark.parametrize(
    ("make", "keyword"),
    [
        (lambda: dlf.positionEmbeddingLayer(8, 64), "PositionOffset"),
        (lambda: dlf.sinusoidalPositionEncodingLayer(8), "PositionOffset"),
        (lambda: dlf.RotaryEmbedding(8, 64), "position_offset"),
    ],
    ids=["positionEmbeddingLayer", "sinusoidalPositionEncodingLayer", "RotaryEmbedding"],
)
def test_fifty_offsets_run_under_one_graph_after_warm_up(make, keyword, as_tensor):
    layer = make()
    counter, step = _decode(layer, keyword)
    X = dlf.dlarray(torch.randn(8, 2, 1), "CBT")
    for offset in range(50):
        value = torch.tensor(offset) if as_tensor else offset
        got = step(X, value)
        expected = X + layer(X, **{keyword: offset})
        torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected), rtol=1e-5, atol=1e-6)
        if offset == 1:
            warmed_up = counter.frame_count
    # an int offset compiles twice at most (first as a constant, then as a symbol); a tensor once
    assert warmed_up <= (1 if as_tensor else 2)
    assert counter.frame_count == warmed_up


def test_the_issue_14_network_with_an_lstm_and_self_attention_compiles_and_exports():
    torch.manual_seed(0)
    layers = [
        dlf.sequenceInputLayer(3, Normalization="rescale-symmetric", Min=-2.0, Max=2.0),
        dlf.convolution1dLayer(3, 16, Padding="causal", DilationFactor=2),
        dlf.lstmLayer(32, OutputMode="sequence"),
        dlf.positionEmbeddingLayer(32, 128, Name="pos"),
        dlf.additionLayer(2, Name="add"),
        dlf.selfAttentionLayer(4, 64, AttentionMask="causal"),
        dlf.indexing1dLayer("last"),
        dlf.fullyConnectedLayer(1),
    ]
    net = dlf.connectLayers(dlf.dlnetwork(layers, Initialize=False), "lstm", "add/in2")
    net = dlf.initialize(net).eval()
    X = dlf.dlarray(torch.randn(3, 8, 50), "CBT")
    compiled = torch.compile(net, fullgraph=True, backend="eager")
    torch.testing.assert_close(dlf.stripdims(compiled(X)), dlf.stripdims(net(X)))
    program = torch.export.export(net, (X,))
    torch.testing.assert_close(dlf.stripdims(program.module()(X)), dlf.stripdims(net(X)))


class TransformerOptions(nn.Module):
    """The attention layers' mask input, scores output and mask array, and the vision layers."""

    def __init__(self):
        super().__init__()
        causal = torch.ones(6, 6).tril().T  # keys × queries
        self.sa = dlf.selfAttentionLayer(
            2, 8, InputSize=4, HasPaddingMaskInput=True, HasScoresOutput=True, AttentionMask=causal
        )
        self.cross = dlf.attentionLayer(2, Scale=0.5, HasPaddingMaskInput=True, HasScoresOutput=True)
        self.patches = dlf.patchEmbeddingLayer([2, 2], 4, InputSize=3)
        self.token = dlf.embeddingConcatenationLayer(InputSize=4)

    def forward(self, X, mask, image):
        Y, scores = self.sa(X, mask)
        Z, weights = self.cross(Y, X, X, mask)
        tokens = self.token(self.patches(image))
        return tuple(dlf.stripdims(value) for value in (Z, scores, weights, tokens))


def test_attention_options_and_vision_layers_compile_and_export():
    torch.manual_seed(0)
    model = TransformerOptions()
    X = dlf.dlarray(torch.randn(4, 2, 6), "CBT")
    mask = dlf.dlarray(torch.tensor([[1.0, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])[None], "CBT")
    image = dlf.dlarray(torch.randn(4, 6, 3, 2), "SSCB")
    expected = model(X, mask, image)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    for got, want in zip(compiled(X, mask, image), expected, strict=True):
        torch.testing.assert_close(got, want)
    program = torch.export.export(model, (X, mask, image))
    for got, want in zip(program.module()(X, mask, image), expected, strict=True):
        torch.testing.assert_close(got, want)
