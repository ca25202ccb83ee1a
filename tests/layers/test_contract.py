"""The contract every dlformat layer keeps: one table of layers, the same checks for each.

Add a layer by adding a row to LAYERS: a factory taking factory kwargs, and an input format
with sizes the layer accepts.
"""

from __future__ import annotations

import copy
import io

import pytest
import torch

import dlformat as dlf
from dlformat.io import load_learnables, save_learnables
from dlformat.layers import Layer
from dlformat.layers.output import OutputLayer

from ..conftest import DEVICES, FLOAT_DTYPES
from .test_custom import ChannelPReLU, OffsetLayer

PROJECTORS = {"InputProjectorInitializer": "orthogonal", "OutputProjectorInitializer": "glorot"}
LAYERS = [
    pytest.param(
        lambda **kw: dlf.PositionEmbeddingLayer(6, 10, Name="posemb", **kw),
        "CBT",
        (3, 2, 7),
        id="positionEmbedding",
    ),
    pytest.param(
        lambda **kw: dlf.PositionEmbeddingLayer(
            4, 5, PositionDimension="spatial", WeightsInitializer="he", **kw
        ),
        "SCB",
        (5, 2, 3),
        id="positionEmbedding-spatial",
    ),
    pytest.param(
        lambda **kw: dlf.SinusoidalPositionEncodingLayer(6, Name="enc"),
        "CBT",
        (6, 2, 7),
        id="sinusoidalPositionEncoding",
    ),
    pytest.param(lambda **kw: dlf.sequenceInputLayer(3, Name="in"), "CBT", (3, 2, 7), id="sequenceInput"),
    pytest.param(lambda **kw: dlf.featureInputLayer(5), "CB", (5, 4), id="featureInput"),
    pytest.param(lambda **kw: dlf.inputLayer([3, 2, 7], "CBT", Name="in"), "CBT", (3, 2, 7), id="input"),
    pytest.param(
        lambda **kw: dlf.imageInputLayer([4, 5, 3], Normalization="none", Name="image"),
        "SSCB",
        (4, 5, 3, 2),
        id="imageInput",
    ),
    pytest.param(
        lambda **kw: dlf.image3dInputLayer([4, 5, 6, 3], Normalization=lambda X: X * 2),
        "SSSCB",
        (4, 5, 6, 3, 2),
        id="image3dInput",
    ),
    pytest.param(
        lambda **kw: dlf.wordEmbeddingLayer(6, 20, Name="emb", **kw), "CBT", "indices", id="wordEmbedding"
    ),
    pytest.param(lambda **kw: dlf.additionLayer(3, Name="add"), "CBT", (3, 2, 7), id="addition"),
    pytest.param(lambda **kw: dlf.multiplicationLayer(2), "SSCB", (4, 5, 3, 2), id="multiplication"),
    pytest.param(lambda **kw: dlf.concatenationLayer(1, 2), "SSCB", (4, 5, 3, 2), id="concatenation"),
    pytest.param(lambda **kw: dlf.depthConcatenationLayer(3), "CBT", (3, 2, 7), id="depthConcatenation"),
    pytest.param(lambda **kw: dlf.flattenLayer(Name="flat"), "SSCBT", (4, 5, 3, 2, 3), id="flatten"),
    pytest.param(
        lambda **kw: dlf.selfAttentionLayer(2, 8, InputSize=6, AttentionMask="causal", **kw),
        "CBT",
        (6, 2, 7),
        id="selfAttention",
    ),
    pytest.param(
        lambda **kw: dlf.selfAttentionLayer(2, 4, NumValueChannels=6, OutputSize=5, InputSize=3, **kw),
        "SCB",
        (7, 3, 2),
        id="selfAttention-spatial",
    ),
    pytest.param(
        lambda **kw: dlf.selfAttentionLayer(2, 4, InputSize=3, HasPaddingMaskInput=True, **kw),
        "CBT",
        (3, 2, 7),
        id="selfAttention-mask",
    ),
    pytest.param(
        lambda **kw: dlf.attentionLayer(2, Scale=0.5, AttentionMask="causal", Name="cross"),
        "CBT",
        (4, 2, 7),
        id="attention",
    ),
    pytest.param(
        lambda **kw: dlf.embeddingConcatenationLayer(InputSize=3, Name="cls", **kw),
        "CBT",
        (3, 2, 7),
        id="embeddingConcatenation",
    ),
    pytest.param(
        lambda **kw: dlf.embeddingConcatenationLayer(InputSize=3, WeightsInitializer="glorot", **kw),
        "SCB",
        (7, 3, 2),
        id="embeddingConcatenation-spatial",
    ),
    pytest.param(
        lambda **kw: dlf.patchEmbeddingLayer([2, 3], 5, InputSize=3, **kw),
        "SSCB",
        (4, 6, 3, 2),
        id="patchEmbedding",
    ),
    pytest.param(
        lambda **kw: dlf.patchEmbeddingLayer([2, 2, 3], 4, InputSize=3, SpatialFlattenMode="row-major", **kw),
        "SSSCB",
        (4, 4, 6, 3, 2),
        id="patchEmbedding-3d",
    ),
    pytest.param(
        lambda **kw: dlf.fullyConnectedLayer(5, InputSize=12, Name="fc", **kw),
        "SCB",
        (4, 3, 2),
        id="fullyConnected",
    ),
    pytest.param(
        lambda **kw: dlf.layerNormalizationLayer(NumChannels=6, ScaleInitializer="glorot", **kw),
        "CBT",
        (6, 2, 7),
        id="layerNormalization",
    ),
    pytest.param(lambda **kw: dlf.lstmLayer(5, InputSize=3, Name="lstm", **kw), "CBT", (3, 2, 7), id="lstm"),
    pytest.param(
        lambda **kw: dlf.lstmLayer(
            4, InputSize=3, StateActivationFunction="softsign", GateActivationFunction="hard-sigmoid", **kw
        ),
        "CBT",
        (3, 2, 7),
        id="lstm-looped",
    ),
    pytest.param(
        lambda **kw: dlf.bilstmLayer(4, InputSize=6, OutputMode="last", **kw),
        "SCBT",
        (2, 3, 2, 5),
        id="bilstm",
    ),
    pytest.param(lambda **kw: dlf.gruLayer(5, InputSize=3, **kw), "CBT", (3, 2, 7), id="gru"),
    pytest.param(
        lambda **kw: dlf.gruLayer(4, InputSize=3, ResetGateMode="before-multiplication", **kw),
        "CBT",
        (3, 2, 7),
        id="gru-before-multiplication",
    ),
    pytest.param(
        lambda **kw: dlf.gruLayer(4, InputSize=3, ResetGateMode="recurrent-bias-after-multiplication", **kw),
        "CT",
        (3, 7),
        id="gru-recurrent-bias",
    ),
    pytest.param(
        lambda **kw: dlf.lstmProjectedLayer(5, 2, 2, InputSize=3, **PROJECTORS, **kw),
        "CBT",
        (3, 2, 7),
        id="lstmProjected",
    ),
    pytest.param(
        lambda **kw: dlf.gruProjectedLayer(
            4, 3, 2, InputSize=3, ResetGateMode="before-multiplication", **PROJECTORS, **kw
        ),
        "CBT",
        (3, 2, 7),
        id="gruProjected",
    ),
    pytest.param(lambda **kw: dlf.indexing1dLayer("last"), "CBT", (3, 2, 7), id="indexing1d"),
    pytest.param(lambda **kw: dlf.sequenceFoldingLayer(), "SSCBT", (4, 5, 3, 2, 3), id="sequenceFolding"),
    pytest.param(lambda **kw: dlf.sequenceUnfoldingLayer(), "SSCB", (4, 5, 3, 6), id="sequenceUnfolding"),
    pytest.param(lambda **kw: dlf.indexing1dLayer(Name="first"), "SCB", (5, 3, 2), id="indexing1d-spatial"),
    pytest.param(
        lambda **kw: dlf.batchNormalizationLayer(NumChannels=3, Name="bn", **kw),
        "SSCB",
        (4, 5, 3, 2),
        id="batchNormalization",
    ),
    pytest.param(
        lambda **kw: dlf.groupNormalizationLayer(2, NumChannels=4, ScaleInitializer="narrow-normal", **kw),
        "SCBT",
        (5, 4, 2, 3),
        id="groupNormalization",
    ),
    pytest.param(
        lambda **kw: dlf.instanceNormalizationLayer(NumChannels=3, **kw),
        "SSCB",
        (4, 5, 3, 2),
        id="instanceNormalization",
    ),
    pytest.param(
        lambda **kw: dlf.crossChannelNormalizationLayer(4, K=1),
        "SSCB",
        (3, 4, 6, 2),
        id="crossChannelNormalization",
    ),
    pytest.param(lambda **kw: dlf.reluLayer(), "SSCB", (2, 3, 4, 2), id="relu"),
    pytest.param(lambda **kw: dlf.geluLayer(Approximation="tanh"), "CBT", (3, 2, 4), id="gelu"),
    pytest.param(lambda **kw: dlf.dropoutLayer(0.3), "CB", (3, 4), id="dropout"),
    pytest.param(lambda **kw: dlf.leakyReluLayer(0.2), "SSCB", (2, 3, 4, 2), id="leakyRelu"),
    pytest.param(lambda **kw: dlf.clippedReluLayer(0.5), "CBT", (3, 2, 4), id="clippedRelu"),
    pytest.param(lambda **kw: dlf.eluLayer(0.5), "SCB", (5, 3, 2), id="elu"),
    pytest.param(lambda **kw: dlf.tanhLayer(), "CB", (3, 4), id="tanh"),
    pytest.param(lambda **kw: dlf.sigmoidLayer(), "CBT", (3, 2, 4), id="sigmoid"),
    pytest.param(lambda **kw: dlf.swishLayer(), "SSCB", (2, 3, 4, 2), id="swish"),
    pytest.param(lambda **kw: dlf.softplusLayer(), "CB", (3, 4), id="softplus"),
    pytest.param(lambda **kw: dlf.mishLayer(Name="mish"), "SCBT", (5, 3, 2, 4), id="mish"),
    pytest.param(lambda **kw: dlf.identityLayer(), "SSCB", (2, 3, 4, 2), id="identity"),
    pytest.param(lambda **kw: dlf.preluLayer(Name="prelu", **kw), "SSCB", (2, 3, 4, 2), id="prelu"),
    pytest.param(
        lambda **kw: dlf.preluLayer(Alpha=torch.full((1, 1, 4), 0.1), **kw),
        "SSCB",
        (2, 3, 4, 2),
        id="prelu-per-channel",
    ),
    pytest.param(lambda **kw: dlf.softmaxLayer(), "CBT", (4, 2, 3), id="softmax"),
    pytest.param(
        lambda **kw: dlf.classificationLayer(Classes=["a", "b", "c"], ClassWeights=[1, 2, 3]),
        "CB",
        (3, 4),
        id="classification",
    ),
    pytest.param(lambda **kw: dlf.regressionLayer(ResponseNames=["y"]), "CBT", (1, 2, 5), id="regression"),
    pytest.param(lambda **kw: dlf.pixelClassificationLayer(), "SSCB", (3, 4, 2, 2), id="pixelClassification"),
    pytest.param(
        lambda **kw: dlf.dicePixelClassificationLayer(Classes=["a", "b"]),
        "SSCB",
        (3, 4, 2, 2),
        id="dicePixelClassification",
    ),
    pytest.param(
        lambda **kw: dlf.spatialDropoutLayer(Probability=0.2), "SSCB", (3, 4, 5, 2), id="spatialDropout"
    ),
    pytest.param(
        lambda **kw: dlf.resize2dLayer(Scale=2, Method="bilinear"), "SSCB", (3, 4, 2, 2), id="resize2d"
    ),
    pytest.param(
        lambda **kw: dlf.resize3dLayer(OutputSize=[2, 3, 4]), "SSSCB", (3, 4, 2, 2, 2), id="resize3d"
    ),
    pytest.param(lambda **kw: dlf.crop2dLayer("centercrop", Name="crop"), "SSCB", (4, 5, 3, 2), id="crop2d"),
    pytest.param(
        lambda **kw: dlf.convolution1dLayer(3, 4, NumChannels=3, Padding="causal", DilationFactor=2, **kw),
        "CBT",
        (3, 2, 7),
        id="convolution1d",
    ),
    pytest.param(
        lambda **kw: dlf.convolution2dLayer(3, 4, NumChannels=3, Padding="same", Stride=2, Name="conv", **kw),
        "SSCB",
        (6, 5, 3, 2),
        id="convolution2d",
    ),
    pytest.param(
        lambda **kw: dlf.convolution3dLayer(2, 4, NumChannels=3, PaddingValue="replicate", Padding=1, **kw),
        "SSSCB",
        (4, 3, 5, 3, 2),
        id="convolution3d",
    ),
    pytest.param(
        lambda **kw: dlf.groupedConvolution2dLayer(3, 2, 2, NumChannelsPerGroup=2, Padding="same", **kw),
        "SSCB",
        (5, 6, 4, 2),
        id="groupedConvolution2d",
    ),
    pytest.param(
        lambda **kw: dlf.transposedConv1dLayer(3, 4, NumChannels=3, Stride=2, **kw),
        "CBT",
        (3, 2, 5),
        id="transposedConv1d",
    ),
    pytest.param(
        lambda **kw: dlf.transposedConv2dLayer(4, 2, NumChannels=3, Stride=2, Cropping="same", **kw),
        "SSCB",
        (4, 5, 3, 2),
        id="transposedConv2d",
    ),
    pytest.param(
        lambda **kw: dlf.transposedConv3dLayer(2, 2, NumChannels=3, Cropping=[1, 0, 0, 1, 0, 0], **kw),
        "SSSCB",
        (3, 4, 2, 3, 2),
        id="transposedConv3d",
    ),
    pytest.param(lambda **kw: dlf.maxPooling1dLayer(2, Stride=2), "CBT", (3, 2, 7), id="maxPooling1d"),
    pytest.param(
        lambda **kw: dlf.maxPooling2dLayer(3, Padding="same"), "SSCB", (5, 4, 3, 2), id="maxPooling2d"
    ),
    pytest.param(lambda **kw: dlf.maxPooling3dLayer(2), "SSSCB", (3, 4, 5, 2, 2), id="maxPooling3d"),
    pytest.param(lambda **kw: dlf.maxUnpooling2dLayer(), "SSCB", (4, 6, 3, 2), id="maxUnpooling2d"),
    pytest.param(
        lambda **kw: dlf.averagePooling1dLayer(3, Padding="same", PaddingValue="mean"),
        "SCB",
        (7, 3, 2),
        id="averagePooling1d",
    ),
    pytest.param(
        lambda **kw: dlf.averagePooling2dLayer(2, Stride=2), "SSCB", (6, 4, 3, 2), id="averagePooling2d"
    ),
    pytest.param(
        lambda **kw: dlf.averagePooling3dLayer(2, Padding=1), "SSSCB", (3, 4, 5, 2, 2), id="averagePooling3d"
    ),
    pytest.param(lambda **kw: dlf.globalMaxPooling1dLayer(), "CBT", (3, 2, 7), id="globalMaxPooling1d"),
    pytest.param(lambda **kw: dlf.globalMaxPooling2dLayer(), "SSCB", (5, 4, 3, 2), id="globalMaxPooling2d"),
    pytest.param(
        lambda **kw: dlf.globalMaxPooling3dLayer(), "SSSCB", (3, 4, 5, 2, 2), id="globalMaxPooling3d"
    ),
    pytest.param(
        lambda **kw: dlf.globalAveragePooling1dLayer(), "SCB", (7, 3, 2), id="globalAveragePooling1d"
    ),
    pytest.param(
        lambda **kw: dlf.globalAveragePooling2dLayer(), "SSCBT", (5, 4, 3, 2, 3), id="globalAveragePooling2d"
    ),
    pytest.param(
        lambda **kw: dlf.globalAveragePooling3dLayer(), "SSSCB", (3, 4, 5, 2, 2), id="globalAveragePooling3d"
    ),
    # custom layers (dlf.Layer subclasses, tests/layers/test_custom.py) and functionLayer
    pytest.param(lambda **kw: OffsetLayer(Name="offset").to(**kw), "CBT", (3, 2, 7), id="custom"),
    pytest.param(
        lambda **kw: ChannelPReLU(Name="prelu").to(**kw), "CBT", (3, 2, 7), id="custom-unformattable"
    ),
    pytest.param(
        lambda **kw: dlf.functionLayer(lambda X: X * 2 - 1, Name="f"), "SCB", (4, 3, 2), id="function"
    ),
    pytest.param(
        lambda **kw: dlf.functionLayer(lambda X: X * 2, Formattable=True),
        "CBT",
        (3, 2, 4),
        id="function-formattable",
    ),
]


def make_input(fmt, sizes, device="cpu", dtype=torch.float32):
    if sizes == "indices":  # 1-based word indices, one per element
        return dlf.dlarray(torch.randint(1, 21, (1, 2, 7), device=device).to(dtype), fmt)
    return dlf.dlarray(torch.randn(sizes, device=device, dtype=dtype), fmt)


def call(layer, X):
    """A layer's output for ``X`` fed to every input it has (an input layer takes the data itself).

    A sequence unfolding layer's second input is the mini-batch size (2: ``B`` = 2 sequences ×
    ``T``); of a sequence folding layer's two outputs the data, the first, is checked; a max
    unpooling layer gets the three outputs of a max pooling layer on ``X``."""
    if isinstance(layer, dlf.SequenceUnfoldingLayer):
        return layer(X, 2)
    if isinstance(layer, dlf.MaxUnpooling2DLayer):  # unpools what a max pooling layer gives it
        return layer(*dlf.maxPooling2dLayer(2, Stride=2, HasUnpoolingOutputs=True)(X))
    Y = layer(*[X] * max(layer.NumInputs, 1))
    return Y[0] if isinstance(layer, dlf.SequenceFoldingLayer) else Y


# layers whose inputs MATLAB names after their roles (the optional ones last)
ROLE_INPUTS = {
    dlf.Crop2DLayer: ("in", "ref"),
    dlf.SequenceUnfoldingLayer: ("in", "miniBatchSize"),
    dlf.AttentionLayer: ("query", "key", "value", "mask"),
    dlf.SelfAttentionLayer: ("in", "mask"),
    dlf.MaxUnpooling2DLayer: ("in", "indices", "size"),
}


@pytest.mark.parametrize(("factory", "fmt", "sizes"), LAYERS)
class TestLayerContract:
    def test_is_a_module_with_matlab_ports(self, factory, fmt, sizes):
        layer = factory()
        assert isinstance(layer, torch.nn.Module) and isinstance(layer, Layer)
        expected_inputs = {0: (), 1: ("in",)}.get(
            layer.NumInputs, tuple(f"in{i}" for i in range(1, layer.NumInputs + 1))
        )
        named = next((names for kind, names in ROLE_INPUTS.items() if isinstance(layer, kind)), None)
        if named is not None:
            expected_inputs = named[: layer.NumInputs]
        assert layer.InputNames == expected_inputs
        # output layers (classificationLayer, ...) end a network: MATLAB gives them no outputs
        outputs = (0, ()) if isinstance(layer, OutputLayer) else (1, ("out",))
        if isinstance(layer, dlf.SequenceFoldingLayer):
            outputs = (2, ("out", "miniBatchSize"))
        assert (layer.NumOutputs, layer.OutputNames) == outputs
        assert layer.default_name and layer.matlab_type

    @pytest.mark.parametrize("device", DEVICES)
    @pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
    def test_output_is_a_formatted_dlarray_on_the_layers_device_and_dtype(
        self, factory, fmt, sizes, device, dtype
    ):
        layer = factory(device=device, dtype=dtype)
        Y = call(layer, make_input(fmt, sizes, device, dtype))
        assert isinstance(Y, dlf.DLArray) and dlf.dims(Y)
        assert Y.dtype == dtype and Y.device.type == device

    def test_gradients_reach_every_learnable(self, factory, fmt, sizes):
        layer = factory()
        if not layer.learnables:
            pytest.skip("the layer has no learnable parameters")
        dlf.stripdims(call(layer, make_input(fmt, sizes))).square().sum().backward()
        for name in layer.learnables:
            grad = getattr(layer, name).grad
            assert grad is not None and grad.abs().sum() > 0, name

    def test_state_dict_round_trip_gives_the_same_output(self, factory, fmt, sizes):
        layer, fresh = factory().eval(), factory().eval()  # eval: dropout is deterministic
        buffer = io.BytesIO()
        torch.save(layer.state_dict(), buffer)
        buffer.seek(0)
        fresh.load_state_dict(torch.load(buffer))
        assert sorted(layer.state_dict()) == sorted([*layer.learnables, *layer.State])
        X = make_input(fmt, sizes)
        torch.testing.assert_close(
            dlf.stripdims(call(fresh, X)), dlf.stripdims(call(layer, X)), rtol=0, atol=0
        )

    def test_learnables_round_trip_through_a_mat_file(self, factory, fmt, sizes, tmp_path):
        layer, fresh = factory().eval(), factory().eval()
        if not layer.learnables:
            pytest.skip("the layer has no learnable parameters")
        layer.Name = fresh.Name = layer.Name or "layer"
        save_learnables(layer, tmp_path / "learnables.mat")
        result = load_learnables(fresh, tmp_path / "learnables.mat")
        assert not result.missing and not result.unexpected
        for name in layer.learnables:
            assert torch.equal(getattr(fresh, name), getattr(layer, name)), name

    def test_config_round_trips(self, factory, fmt, sizes):
        layer = factory()
        rebuilt = type(layer).from_config(layer.get_config())
        assert rebuilt.get_config() == layer.get_config()
        assert set(layer.get_config()) == set(layer.config_keys)

    def test_deepcopy_is_independent(self, factory, fmt, sizes):
        layer = factory()
        twin = copy.deepcopy(layer)
        for name in layer.learnables:
            with torch.no_grad():
                getattr(twin, name).add_(1)
            assert not torch.equal(getattr(twin, name), getattr(layer, name))
        assert twin.get_config() == layer.get_config()

    def test_repr_is_matlabs_display(self, factory, fmt, sizes):
        layer = factory()
        text = repr(layer)
        assert text.startswith(f"{type(layer).__name__} with properties:\n")
        for key in layer.config_keys:
            assert f"{key}: " in text, key
        assert ("Learnable Parameters" in text) == bool(layer.learnables)
        assert f"Name={layer.Name!r}" in layer.extra_repr()

    def test_reset_parameters_is_reproducible_with_a_generator(self, factory, fmt, sizes):
        layer = factory()
        if not layer.learnables:
            pytest.skip("the layer has no learnable parameters")
        layer.reset_parameters(torch.Generator().manual_seed(7))
        first = {name: getattr(layer, name).detach().clone() for name in layer.learnables}
        layer.reset_parameters(torch.Generator().manual_seed(7))
        for name, value in first.items():
            assert torch.equal(getattr(layer, name), value)
