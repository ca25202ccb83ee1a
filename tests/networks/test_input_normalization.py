"""Networks whose input layers normalize but have no statistics yet: MATLAB builds them (the
image input layers' default is "zerocenter" with an empty Mean) and trainnet/trainNetwork compute
the statistics (the input layers' pages, Tip: "the software, by default, automatically calculates
the normalization statistics at training time"). So dlnetwork, initialize, layerGraph → dlnetwork,
assembleNetwork and analyzeNetwork accept them; data that runs through before the statistics
exist is a DLFormatError naming the layer, the statistics and how to get them."""

from __future__ import annotations

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def image_layers():
    """The most common layer array (Deep Network Designer's and MathWorks' digits example)."""
    return [
        dlf.imageInputLayer([28, 28, 1]),  # Normalization "zerocenter", Mean []
        dlf.convolution2dLayer(3, 8),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
        dlf.fullyConnectedLayer(10),
        dlf.softmaxLayer(),
    ]


# (layers, example data, the learnable sizes initialization must find, the missing statistics)
KINDS = {
    "image": (image_layers, (28, 28, 1, 2), {"conv": (3, 3, 1, 8), "fc": (10, 26 * 26 * 8)}, "Mean is"),
    "image3d": (
        lambda: [
            dlf.image3dInputLayer([6, 6, 4, 2], Normalization="zscore"),
            dlf.convolution3dLayer(3, 4),
            dlf.reluLayer(),
            dlf.fullyConnectedLayer(2),
        ],
        (6, 6, 4, 2, 2),
        {"conv": (3, 3, 3, 2, 4), "fc": (2, 4 * 4 * 2 * 4)},
        "Mean and StandardDeviation are",
    ),
    "feature": (
        lambda: [dlf.featureInputLayer(5, Normalization="rescale-zero-one"), dlf.fullyConnectedLayer(3)],
        (5, 2),
        {"fc": (3, 5)},
        "Min and Max are",
    ),
    "sequence": (
        lambda: [
            dlf.sequenceInputLayer(4, Normalization="rescale-symmetric"),
            dlf.lstmLayer(6, OutputMode="last"),
            dlf.fullyConnectedLayer(2),
        ],
        (4, 2, 3),
        {"lstm": (24, 4), "fc": (2, 6)},
        "Min and Max are",
    ),
}


def built(how, layers):
    if how == "dlnetwork":
        return dlf.dlnetwork(layers)
    if how == "initialize":
        return dlf.initialize(dlf.dlnetwork(layers, Initialize=False))
    return dlf.dlnetwork(dlf.layerGraph(layers))


def weights(net, name):
    return next(
        value.shape
        for layer, parameter, value in net.Learnables
        if layer == name and parameter in ("Weights", "InputWeights")
    )


@pytest.mark.parametrize("how", ["dlnetwork", "initialize", "layerGraph"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_networks_are_built_and_initialized_without_the_statistics(kind, how):
    make, shape, sizes, missing = KINDS[kind]
    net = built(how, make())
    assert net.Initialized
    for name, size in sizes.items():
        assert tuple(weights(net, name)) == size
    first = net.Layers[0]
    assert all(getattr(first, name) is None for name in dlf.layers.input.STATISTICS_OF[first.Normalization])
    with pytest.raises(
        DLFormatError, match=rf"layer '{first.Name}' .*{first.Name}' has Normalization .*{missing} empty"
    ):
        dlf.predict(net, dlf.dlarray(torch.ones(shape), first.InputFormat))
    with pytest.raises(DLFormatError, match=r"train the network first with trainnet or trainNetwork"):
        dlf.forward(net, dlf.dlarray(torch.ones(shape), first.InputFormat))


def test_analyze_network_reports_the_common_image_layer_array(capsys):
    analysis = dlf.analyzeNetwork(dlf.dlnetwork(image_layers(), Initialize=False))
    assert analysis.error is None and analysis.failed_layer is None
    assert [row.Activations for row in analysis.rows] == [
        "28(S) × 28(S) × 1(C) × 1(B)", "26(S) × 26(S) × 8(C) × 1(B)", "26(S) × 26(S) × 8(C) × 1(B)",
        "26(S) × 26(S) × 8(C) × 1(B)", "10(C) × 1(B)", "10(C) × 1(B)",
    ]  # fmt: skip
    assert analysis.total == (3 * 3 * 8 + 8) + 2 * 8 + (10 * 26 * 26 * 8 + 10)
    assert "Formats stop" not in capsys.readouterr().out
    dlf.analyzeNetwork(dlf.dlnetwork(image_layers()), show=False)  # and once initialized


def test_the_sizes_run_puts_nothing_into_the_layers():
    net = dlf.dlnetwork(image_layers())
    assert net.Layers[0].Mean is None
    bn = net.Layers[2]
    assert torch.equal(bn.TrainedMean, torch.zeros_like(bn.TrainedMean))  # state put back


def test_assemble_network_takes_trained_layers_with_empty_statistics_and_classify_says_what_to_do():
    fc = dlf.fullyConnectedLayer(2, Weights=torch.eye(2), Bias=torch.zeros(2, 1))
    net = dlf.assembleNetwork([dlf.featureInputLayer(2, Normalization="zscore", Name="in"), fc,
                               dlf.softmaxLayer(), dlf.classificationLayer(Classes=["a", "b"])])  # fmt: skip
    assert isinstance(net, dlf.SeriesNetwork)
    with pytest.raises(
        DLFormatError, match=r"'in' has Normalization \"zscore\" but its Mean and StandardDeviation"
    ):
        dlf.classify(net, dlf.dlarray(torch.ones(2, 3), "CB"))
