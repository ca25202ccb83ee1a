"""A small image classifier trained with trainnet, as MATLAB's "Create Simple Deep Learning
Neural Network for Classification" example builds it, on generated 16×16 images.

MATLAB:

    layers = [imageInputLayer([16 16 1])
              convolution2dLayer(3,8,Padding="same")
              batchNormalizationLayer
              reluLayer
              maxPooling2dLayer(2,Stride=2)
              convolution2dLayer(3,16,Padding="same")
              batchNormalizationLayer
              reluLayer
              fullyConnectedLayer(numClasses)
              softmaxLayer];
    net = trainnet(XTrain,TTrain,layers,"crossentropy",options);
    scores = minibatchpredict(net,XValidation);
    YValidation = scores2label(scores,classNames);
    accuracy = mean(YValidation == TValidation);

The data are generated here (no download): 16×16 grayscale images (MATLAB's H×W×C×N array)
each holding one bright filled shape, a "circle" or a "square" of random size and position, on
a noisy background; the label is the shape (an array of names: the classes are their sorted
distinct names, as a categorical's). ``trainnet`` trains with SGDM (MATLAB's defaults apart
from the rate and epochs), reports the accuracy metric and prints its own verbose table.

It learned: the accuracy of ``scores2label(minibatchpredict(...))`` on the validation images must
be at least 90 % (chance is 50 %); a fixed ``torch.manual_seed(0)`` makes the run
deterministic. About 10 s on a 2-core CPU.

    python examples/image_cnn_trainnet.py
"""

from __future__ import annotations

import sys

import numpy as np
import torch

import dlformat as dlf

THRESHOLD = 90.0  # the validation accuracy (percent) must reach this
SIZE = 16
CLASS_NAMES = np.array(["circle", "square"])


def generate_images(count: int) -> tuple[torch.Tensor, np.ndarray]:
    """``count`` images as MATLAB's 16×16×1×count array, and their class names."""
    kinds = torch.randint(0, len(CLASS_NAMES), (count,))
    radius = torch.randint(3, 6, (count, 1, 1)).float()  # half the side of a square
    center_row, center_column = (
        radius + 1 + torch.rand(count, 1, 1) * (SIZE - 2 * radius - 3) for _ in range(2)
    )
    rows = torch.arange(SIZE).reshape(1, -1, 1).float()
    columns = torch.arange(SIZE).reshape(1, 1, -1).float()
    dy, dx = rows - center_row, columns - center_column
    circle = dy**2 + dx**2 <= radius**2
    square = (dy.abs() <= radius - 1) & (dx.abs() <= radius - 1)  # a little smaller: similar areas
    shapes = torch.where(kinds.reshape(-1, 1, 1) == 0, circle, square).float()
    images = shapes + 0.2 * torch.randn(count, SIZE, SIZE)
    return images.permute(1, 2, 0).unsqueeze(2), CLASS_NAMES[kinds.numpy()]  # H×W×C×N


def main(argv: list[str] | None = None) -> dict[str, object]:
    del argv  # no options: the run is the documented one
    torch.manual_seed(0)  # MATLAB: rng(0)
    XTrain, TTrain = generate_images(512)
    XValidation, TValidation = generate_images(128)
    classNames = np.unique(TTrain)  # MATLAB: classNames = categories(TTrain);
    numClasses = len(classNames)  # MATLAB: numClasses = numel(classNames);

    layers = [
        dlf.imageInputLayer([SIZE, SIZE, 1]),  # MATLAB: imageInputLayer([16 16 1])
        dlf.convolution2dLayer(3, 8, Padding="same"),  # MATLAB: convolution2dLayer(3,8,Padding="same")
        dlf.batchNormalizationLayer(),  # MATLAB: batchNormalizationLayer
        dlf.reluLayer(),  # MATLAB: reluLayer
        dlf.maxPooling2dLayer(2, Stride=2),  # MATLAB: maxPooling2dLayer(2,Stride=2)
        dlf.convolution2dLayer(3, 16, Padding="same"),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
        dlf.fullyConnectedLayer(numClasses),  # MATLAB: fullyConnectedLayer(numClasses)
        dlf.softmaxLayer(),  # MATLAB: softmaxLayer
    ]

    # MATLAB: options = trainingOptions("sgdm", InitialLearnRate=0.02, MaxEpochs=10, ...
    #             MiniBatchSize=32, Shuffle="every-epoch", Metrics="accuracy", ...
    #             ValidationData={XValidation,TValidation}, ValidationFrequency=32, ...
    #             Verbose=true, VerboseFrequency=32, Plots="none");
    options = dlf.trainingOptions(
        "sgdm",
        InitialLearnRate=0.02,
        MaxEpochs=10,
        MiniBatchSize=32,
        Shuffle="every-epoch",
        Metrics="accuracy",
        ValidationData=(XValidation, TValidation),  # MATLAB's {XValidation, TValidation}
        ValidationFrequency=32,
        Verbose=True,
        VerboseFrequency=32,
        Plots="none",
    )
    # MATLAB: [net,info] = trainnet(XTrain,TTrain,layers,"crossentropy",options);
    net, info = dlf.trainnet(XTrain, TTrain, layers, "crossentropy", options)

    scores = dlf.minibatchpredict(net, XValidation)  # MATLAB: scores = minibatchpredict(net,XValidation);
    # MATLAB: YValidation = scores2label(scores,classNames);
    YValidation, _ = dlf.scores2label(scores, classNames)
    # MATLAB: accuracy = 100*mean(YValidation == TValidation);
    accuracy = 100 * float(np.mean(YValidation == TValidation))
    print(f"validation accuracy {accuracy:.2f}% (threshold {THRESHOLD}%)")
    if not accuracy >= THRESHOLD:
        raise SystemExit(f"the CNN did not learn: validation accuracy {accuracy:.2f}% < {THRESHOLD}%")
    return {"net": net, "info": info, "accuracy": accuracy}


if __name__ == "__main__":
    main(sys.argv[1:])
