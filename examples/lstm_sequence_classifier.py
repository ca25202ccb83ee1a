"""An LSTM sequence-to-label classifier, as MATLAB's sequence classification examples build it.

MATLAB:

    layers = [sequenceInputLayer(numFeatures)
              lstmLayer(numHiddenUnits,OutputMode="last")
              fullyConnectedLayer(numClasses)
              softmaxLayer
              classificationLayer];
    net = trainNetwork(XTrain,TTrain,layers,options);
    YPred = classify(net,XValidation);
    accuracy = mean(YPred == TValidation);

The data are generated here (no download): sequences of 20 to 50 time steps (MATLAB's cell
array of C×T arrays: a Python list of 2×T tensors), each a noisy rotating phasor (its sine and
cosine as the 2 channels) turning at one of three speeds, the class label: "slow", "medium" or
"fast" (an array of names: the classes are their sorted distinct names, as a categorical's).
``trainNetwork`` pads each mini-batch's sequences on the right (``SequenceLength="longest"``)
and prints MATLAB's legacy table.

It learned: the accuracy of ``classify`` on the validation sequences must be at least 90 %
(chance is 33 %); a fixed ``torch.manual_seed(0)`` makes the run deterministic. About 15 s on a
2-core CPU.

    python examples/lstm_sequence_classifier.py
    python examples/lstm_sequence_classifier.py --plots docs/images/training_progress.png

``--plots PATH`` sets ``Plots`` to an image file (dlformat's extension of the option): the
training-progress figure written there (how docs/images/training_progress.png was made).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import torch

import dlformat as dlf

THRESHOLD = 90.0  # the validation accuracy (percent) must reach this
SPEEDS = {"slow": 0.03, "medium": 0.06, "fast": 0.12}  # turns per time step


def generate_sequences(count: int) -> tuple[list[torch.Tensor], np.ndarray]:
    """``count`` 2×T sequences of random lengths and their class names."""
    names = np.array(list(SPEEDS))
    kinds = torch.randint(0, len(names), (count,))
    lengths = torch.randint(20, 51, (count,))
    sequences = []
    for kind, length in zip(kinds.tolist(), lengths.tolist(), strict=True):
        angle = 2 * math.pi * (SPEEDS[names[kind]] * torch.arange(length) + torch.rand(1))
        sequences.append(torch.stack([angle.sin(), angle.cos()]) + 0.3 * torch.randn(2, length))
    return sequences, names[kinds.numpy()]


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description="Train the LSTM classifier (see the module docstring).")
    parser.add_argument("--plots", default="none", help='Plots: "none" or an image file for the figure')
    plots = parser.parse_args(argv).plots
    torch.manual_seed(0)  # MATLAB: rng(0)
    XTrain, TTrain = generate_sequences(240)
    XValidation, TValidation = generate_sequences(60)

    numFeatures, numHiddenUnits, numClasses = 2, 32, len(SPEEDS)
    layers = [
        dlf.sequenceInputLayer(numFeatures),  # MATLAB: sequenceInputLayer(numFeatures)
        # MATLAB: lstmLayer(numHiddenUnits,OutputMode="last")
        dlf.lstmLayer(numHiddenUnits, OutputMode="last"),
        dlf.fullyConnectedLayer(numClasses),  # MATLAB: fullyConnectedLayer(numClasses)
        dlf.softmaxLayer(),  # MATLAB: softmaxLayer
        dlf.classificationLayer(),  # MATLAB: classificationLayer
    ]

    # MATLAB: options = trainingOptions("adam", MaxEpochs=15, MiniBatchSize=24, ...
    #             InitialLearnRate=0.005, GradientThreshold=2, Shuffle="every-epoch", ...
    #             ValidationData={XValidation,TValidation}, ValidationFrequency=30, ...
    #             Verbose=true, VerboseFrequency=30, Plots="training-progress");
    options = dlf.trainingOptions(
        "adam",
        MaxEpochs=15,
        MiniBatchSize=24,
        InitialLearnRate=0.005,
        GradientThreshold=2,
        Shuffle="every-epoch",
        ValidationData=(XValidation, TValidation),  # MATLAB's {XValidation, TValidation}
        ValidationFrequency=30,
        Verbose=True,
        VerboseFrequency=30,
        Plots=plots,  # "none", or (dlformat's) an image file for MATLAB's training-progress figure
    )
    net, info = dlf.trainNetwork(XTrain, TTrain, layers, options)  # MATLAB: [net,info] = trainNetwork(...)

    YPred, _ = dlf.classify(net, XValidation)  # MATLAB: YPred = classify(net,XValidation);
    accuracy = 100 * float(np.mean(YPred == TValidation))  # MATLAB: 100*mean(YPred == TValidation)
    print(f"validation accuracy {accuracy:.2f}% (threshold {THRESHOLD}%)")
    if not accuracy >= THRESHOLD:
        raise SystemExit(f"the LSTM did not learn: validation accuracy {accuracy:.2f}% < {THRESHOLD}%")
    return {"net": net, "info": info, "accuracy": accuracy}


if __name__ == "__main__":
    main(sys.argv[1:])
