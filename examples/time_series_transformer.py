"""MathWorks' transformer for time-series prediction, ported line by line and trained with trainNetwork.

The layer structure of MathWorks' example "Transformer Networks for Time Series Prediction"
(as issue 16 describes it): a sequence input whose position embedding is added to it, two
self-attention layers, the last time step, a fully connected layer and a regression output.
The demo's own sizes, data and options could not be read here, so those below were chosen for
this generated task and a short run:

    layers = [sequenceInputLayer(numChannels,Name="input")
              positionEmbeddingLayer(numChannels,maxPosition,Name="pos-emb")
              additionLayer(2,Name="add")
              selfAttentionLayer(numHeads,numKeyChannels,AttentionMask="causal")
              selfAttentionLayer(numHeads,numKeyChannels)
              indexing1dLayer("last")
              fullyConnectedLayer(numChannels)
              regressionLayer];
    lgraph = layerGraph(layers);
    lgraph = connectLayers(lgraph,"input","add/in2");
    net = trainNetwork(XTrain,TTrain,lgraph,options);

The data are generated here (no download): 3-channel noisy sine waves (one random frequency and
phase per observation, the channels a third of a period apart), 24 time steps each; the target
is the next value of each channel. ``trainNetwork`` trains with Adam and a piecewise
learning-rate schedule and prints MATLAB's legacy table.

It learned: the final validation loss (the regression layer's half mean squared error) must
be below 0.05; it starts near 0.75, and a fixed ``torch.manual_seed(0)`` makes the run
deterministic. About 20 s on a 2-core CPU.

    python examples/time_series_transformer.py
"""

from __future__ import annotations

import math
import sys

import torch

import dlformat as dlf

THRESHOLD = 0.05  # the final validation loss must fall below this
NUM_CHANNELS, NUM_STEPS = 3, 24


def generate_waves(count: int) -> tuple[list[torch.Tensor], torch.Tensor]:
    """``count`` C×T sequences (MATLAB's cell array) and the next value of each: a count×C array."""
    frequency = 0.05 + 0.1 * torch.rand(count, 1, 1)
    phase = 2 * math.pi * torch.rand(count, 1, 1)
    offset = 2 * math.pi / NUM_CHANNELS * torch.arange(NUM_CHANNELS).reshape(1, -1, 1)
    steps = torch.arange(NUM_STEPS + 1).reshape(1, 1, -1)
    waves = torch.sin(2 * math.pi * frequency * steps + phase + offset)
    waves = waves + 0.05 * torch.randn(waves.shape)
    return list(waves[:, :, :NUM_STEPS]), waves[:, :, NUM_STEPS]


def main(argv: list[str] | None = None) -> dict[str, object]:
    del argv  # no options: the run is the documented one
    torch.manual_seed(0)  # MATLAB: rng(0)
    XTrain, TTrain = generate_waves(256)
    XValidation, TValidation = generate_waves(32)

    maxPosition, numHeads, numKeyChannels = 256, 4, 64
    layers = [
        # MATLAB: sequenceInputLayer(numChannels,Name="input")
        dlf.sequenceInputLayer(NUM_CHANNELS, Name="input"),
        dlf.positionEmbeddingLayer(NUM_CHANNELS, maxPosition, Name="pos-emb"),
        dlf.additionLayer(2, Name="add"),  # MATLAB: additionLayer(2,Name="add")
        dlf.selfAttentionLayer(numHeads, numKeyChannels, AttentionMask="causal"),
        dlf.selfAttentionLayer(numHeads, numKeyChannels),
        dlf.indexing1dLayer("last"),  # MATLAB: indexing1dLayer("last")
        dlf.fullyConnectedLayer(NUM_CHANNELS),
        dlf.regressionLayer(),  # MATLAB: regressionLayer
    ]
    lgraph = dlf.layerGraph(layers)  # MATLAB: lgraph = layerGraph(layers);
    lgraph = dlf.connectLayers(lgraph, "input", "add/in2")  # MATLAB: connectLayers(lgraph,"input","add/in2")

    # MATLAB: options = trainingOptions("adam", MaxEpochs=30, MiniBatchSize=32, ...
    #             InitialLearnRate=0.01, LearnRateSchedule="piecewise", LearnRateDropPeriod=15, ...
    #             LearnRateDropFactor=0.5, GradientThreshold=1, Shuffle="every-epoch", ...
    #             ValidationData={XValidation,TValidation}, ValidationFrequency=80, ...
    #             Verbose=true, VerboseFrequency=80, Plots="none");
    options = dlf.trainingOptions(
        "adam",
        MaxEpochs=30,
        MiniBatchSize=32,
        InitialLearnRate=0.01,
        LearnRateSchedule="piecewise",
        LearnRateDropPeriod=15,
        LearnRateDropFactor=0.5,
        GradientThreshold=1,
        Shuffle="every-epoch",
        ValidationData=(XValidation, TValidation),  # MATLAB's {XValidation, TValidation}
        ValidationFrequency=80,
        Verbose=True,
        VerboseFrequency=80,
        Plots="none",
    )
    net, info = dlf.trainNetwork(XTrain, TTrain, lgraph, options)  # MATLAB: [net,info] = trainNetwork(...)

    YValidation = net.predict(XValidation)  # MATLAB: YValidation = predict(net,XValidation);
    # MATLAB's predict returns an N×C array; dlformat's a "CB" dlarray: C×N, hence the transpose
    errors = dlf.extractdata(YValidation) - TValidation.T
    rmse = float(errors.pow(2).mean().sqrt())  # MATLAB: rmse(YValidation,TValidation,"all")
    print(f"validation RMSE of the next value: {rmse:.4f}")
    final = float(info.FinalValidationLoss)
    print(f"final validation loss {final:.4f} (threshold {THRESHOLD})")
    if not final < THRESHOLD:
        raise SystemExit(f"the transformer did not learn: final validation loss {final:.4f} >= {THRESHOLD}")
    return {"net": net, "info": info, "rmse": rmse}


if __name__ == "__main__":
    main(sys.argv[1:])
