"""The code blocks the issues show run as written."""

from __future__ import annotations


def test_the_dlarray_functions_and_custom_training_loop_example():
    import torch

    import dlformat as dlf

    X = dlf.dlarray(torch.randn(8, 4, 10), "CBT")
    assert dlf.dims(X[:, 0:2, :]) == "CBT" and tuple(X[:, 0:2, :].shape) == (8, 2, 10)
    S = dlf.sum(X, "T")  # MATLAB: sum(X, finddim(X, "T"))
    assert dlf.dims(S) == "CBT" and tuple(S.shape) == (8, 4, 1)
    Y = dlf.exp(X) * (X > 0) + X**2  # elementwise math keeps the format
    assert dlf.dims(Y) == "CBT"
    x = dlf.stripdims(X)
    torch.testing.assert_close(dlf.stripdims(Y), torch.exp(x) * (x > 0) + x**2)
    torch.testing.assert_close(dlf.stripdims(S), x.sum(2, keepdim=True))
    # finddim gives MATLAB's 1-based numbers, as every function taking a dimension does
    torch.testing.assert_close(dlf.stripdims(dlf.sum(X, dlf.finddim(X, "T"))), dlf.stripdims(S))
    net = dlf.dlnetwork([dlf.sequenceInputLayer(8), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()])
    T = dlf.dlarray(
        torch.nn.functional.one_hot(torch.randint(0, 3, (4, 10)), 3).permute(2, 0, 1).float(), "CBT"
    )

    def model_loss(net, X, T):
        Y = dlf.forward(net, X)
        loss = dlf.crossentropy(Y, T)
        return loss, dlf.dlgradient(loss, net.Learnables)

    loss, grads = dlf.dlfeval(model_loss, net, X, T)
    assert dlf.extractdata(loss).numel() == 1 and float(dlf.extractdata(loss)) > 0
    avg, avg_sq = [], []
    before = net.Layers[1].Weights.detach().clone()
    before_bias = net.Layers[1].Bias.detach().clone()
    net, avg, avg_sq = dlf.adamupdate(net, grads, avg, avg_sq, 1)
    assert not torch.equal(net.Layers[1].Weights.detach(), before)
    assert isinstance(net, dlf.DLNetwork) and dlf.dims(loss) == ""
    assert [row[:2] for row in grads] == [("fc", "Weights"), ("fc", "Bias")] == [row[:2] for row in avg]
    assert not torch.equal(net.Layers[1].Bias.detach(), before_bias)


def test_the_image_layers_example():
    """Issue 13's block, as written there."""
    import torch

    import dlformat as dlf

    layers = [
        dlf.imageInputLayer([28, 28, 1], Normalization="zscore", Mean=0.13, StandardDeviation=0.31),
        dlf.convolution2dLayer(3, 16, Padding="same"),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
        dlf.maxPooling2dLayer(2, Stride=2),
        dlf.convolution2dLayer(3, 32, Padding="same", Stride=2, DilationFactor=1),
        dlf.globalAveragePooling2dLayer(),
        dlf.flattenLayer(),
        dlf.fullyConnectedLayer(10),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork(layers)
    X = dlf.dlarray(torch.rand(28, 28, 1, 16), "SSCB")
    Y = dlf.forward(net, X)  # training behaviour: batch statistics, State updated
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (10, 16)
    assert set(net.State.Parameter) == {"TrainedMean", "TrainedVariance"}
    assert tuple(net.Layers[1].Weights.shape) == (3, 3, 1, 16)  # MATLAB's FilterSize×NumChannels×NumFilters


def test_the_sequence_layers_example():
    """Issue 14's block, as written there."""
    import torch

    import dlformat as dlf

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
    net = dlf.dlnetwork(layers, Initialize=False)
    net = dlf.connectLayers(net, "lstm", "add/in2")
    net = dlf.initialize(net)
    Y = dlf.predict(net, dlf.dlarray(torch.randn(3, 8, 50), "CBT"))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (1, 8)
    assert tuple(net.Layers[2].InputWeights.shape) == (4 * 32, 16)  # MATLAB: 4*NumHiddenUnits × InputSize
    Y1, state = dlf.predict(
        net, dlf.dlarray(torch.randn(3, 8, 1), "CBT"), ReturnState=True
    )  # MATLAB: [Y, state] = predict(...)
    assert dlf.dims(Y1) == "CB" and tuple(Y1.shape) == (1, 8)
    assert set(state.Parameter) == {"HiddenState", "CellState"}


def test_the_training_example():
    """Issue 16's block, as written there (trainNetwork, then trainnet, on variable-length sequences)."""
    import torch

    import dlformat as dlf

    torch.manual_seed(0)
    XTrain = [
        torch.randn(3, int(n)) for n in torch.randint(20, 40, (64,))
    ]  # MATLAB cell array of C×T sequences
    YTrain = torch.stack([x[:, -5:].mean().reshape(1) for x in XTrain])  # 64×1 responses
    layers = [
        dlf.sequenceInputLayer(3),
        dlf.lstmLayer(16, OutputMode="last"),
        dlf.fullyConnectedLayer(1),
        dlf.regressionLayer(),
    ]
    options = dlf.trainingOptions(
        "adam",
        MaxEpochs=30,
        MiniBatchSize=16,
        InitialLearnRate=0.01,
        LearnRateSchedule="piecewise",
        LearnRateDropPeriod=10,
        LearnRateDropFactor=0.5,
        GradientThreshold=1,
        Shuffle="every-epoch",
        Verbose=True,
        Plots="none",
        ValidationData=(XTrain[:8], YTrain[:8]),
        ValidationFrequency=4,
    )
    net, info = dlf.trainNetwork(XTrain, YTrain, layers, options)  # prints MATLAB's verbose table  # noqa: RUF059
    assert info.TrainingLoss[-1] < info.TrainingLoss[0]
    net2, info2 = dlf.trainnet(
        XTrain, YTrain, layers[:-1], "mse", options
    )  # trainnet: loss by name, dlnetwork out
    assert isinstance(net2, dlf.DLNetwork) and len(info2.TrainingHistory) > 0


def test_the_load_network_example(networks):
    """Issue 15's headline: MATLAB's saved vikas network classifies as MATLAB did."""
    import pytest

    pytest.importorskip("matio")
    import torch

    import dlformat as dlf
    from dlformat.io import load_network, loadmat

    net = load_network(f"{networks}/vikas_net.mat")  # a SeriesNetwork saved by MATLAB R2022b
    print(net)  # MATLAB's display: layers, classes
    ws = loadmat(f"{networks}/vikas_net.mat")  # the whole workspace, MATLAB objects decoded
    I = dlf.dlarray(torch.as_tensor(ws["I"]).float(), "SSCB")  # the 320×320×3 image saved beside the network  # noqa: E741
    labels, scores = dlf.classify(net, I)  # MATLAB saved: test_Pred, test_probs
    assert labels[0] == "apple_red_yellow_1"
    assert torch.allclose(
        dlf.extractdata(scores).ravel(), torch.as_tensor(ws["test_probs"]).float().ravel(), atol=1e-3
    )
