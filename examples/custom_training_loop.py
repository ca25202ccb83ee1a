"""MathWorks' nanoGPT-in-MATLAB training loop, ported line by line, on a generated corpus.

MathWorks' nanoGPT (matlab-deep-learning/nanogpt-in-matlab, ``+nanogpt/train.m`` and
``+nanogpt/modelLoss.m``) trains a character-level GPT with a custom training loop:

    function [loss, gradients] = modelLoss(net, X, T)
    Y = net.forward(X);
    loss = crossentropy(Y,T);
    seqLength = size(X, 3);
    loss = loss / seqLength; % So loss doesn't scale with sequence length
    if nargout > 1
        gradients = dlgradient(loss, net.Learnables);
    end
    end

    averageGrad = []; averageSqGrad = [];
    monitor = trainingProgressMonitor(Metrics=["TrainingLoss", "ValidationLoss"], XLabel="Iteration");
    groupSubPlot(monitor,"Loss",["TrainingLoss","ValidationLoss"]);
    iteration = 0;
    while iteration < opts.NumIterations && ~monitor.Stop
        iteration = iteration + 1;
        [X,T] = mbqTrain.next();
        [loss, gradients] = dlfeval(@nanogpt.modelLoss, net, X, T);
        [net,averageGrad,averageSqGrad] = adamupdate(net,gradients, ...
                averageGrad,averageSqGrad,iteration,opts.LearnRate);
        recordMetrics(monitor,iteration,TrainingLoss=loss);
        if mod(iteration, opts.ValidationFrequency) == 0 || iteration == 1
            validationLoss = 0;
            for ii = 1:opts.NumValidationIters
                [XVal, TVal] = mbqValidation.next();
                validationLoss = validationLoss + nanogpt.modelLoss(net, XVal, TVal)/opts.NumValidationIters;
            end
            recordMetrics(monitor,iteration,ValidationLoss=validationLoss);
        end
    end

The corpus is generated here (no download): sentences of a small grammar, tokenized by
character as MathWorks' ``CharacterTokenizer`` does (1-based token indices). Each observation is
a subsequence of the corpus and the same subsequence one step later, as MathWorks'
``SequenceForecastingDatastore`` makes them; ``minibatchqueue`` hands them out with
``MiniBatchFormat`` ``"BTC"`` (inputs) and ``"CBT"`` (one-hot targets). MathWorks' datastore draws
random subsequences forever; here a fixed set of them is reshuffled whenever a pass is done.

    python examples/custom_training_loop.py [--iterations 200] [--out DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch

import dlformat as dlf

SUBJECTS = ["the cat", "a dog", "my king", "the moon", "thy love", "a rose"]
VERBS = ["sees", "loves", "finds", "keeps", "sings to"]
OBJECTS = ["the sea", "a star", "the night", "my heart", "the day", "sweet time"]


def generate_corpus(sentences: int, generator: torch.Generator) -> str:
    """Sentences of a small grammar: subject, verb, object, full stop."""

    def pick(words: list[str]) -> str:
        return words[int(torch.randint(len(words), (1,), generator=generator))]

    return " ".join(f"{pick(SUBJECTS)} {pick(VERBS)} {pick(OBJECTS)}." for _ in range(sentences))


def subsequences(
    tokens: torch.Tensor, count: int, length: int, generator: torch.Generator
) -> tuple[torch.Tensor, ...]:
    """``count`` predictor rows and the response rows one step later (MathWorks' datastore read)."""
    starts = torch.randint(len(tokens) - length, (count,), generator=generator)
    predictors = torch.stack([tokens[start : start + length] for start in starts.tolist()])
    responses = torch.stack([tokens[start + 1 : start + length + 1] for start in starts.tolist()])
    return predictors, responses


def build_network(vocabulary: int, length: int, channels: int = 32, heads: int = 2) -> dlf.DLNetwork:
    """A one-block GPT: token and position embeddings, causal self-attention and an MLP, each with a
    residual connection and layer normalization before it, and a softmax over the vocabulary."""
    layers = [
        dlf.sequenceInputLayer(1, Name="input"),
        dlf.wordEmbeddingLayer(channels, vocabulary, Name="wordemb"),
        dlf.positionEmbeddingLayer(channels, length, Name="posemb"),
        dlf.additionLayer(2, Name="embedding"),
        dlf.layerNormalizationLayer(Name="norm1"),
        dlf.selfAttentionLayer(heads, channels, AttentionMask="causal", Name="attention"),
        dlf.additionLayer(2, Name="residual1"),
        dlf.layerNormalizationLayer(Name="norm2"),
        dlf.fullyConnectedLayer(4 * channels, Name="mlp1"),
        dlf.geluLayer(Name="gelu"),
        dlf.fullyConnectedLayer(channels, Name="mlp2"),
        dlf.additionLayer(2, Name="residual2"),
        dlf.layerNormalizationLayer(Name="norm3"),
        dlf.fullyConnectedLayer(vocabulary, Name="head"),
        dlf.softmaxLayer(Name="softmax"),
    ]
    net = dlf.dlnetwork()
    net = dlf.addLayers(net, layers)
    net = dlf.connectLayers(net, "wordemb", "embedding/in2")
    net = dlf.connectLayers(net, "embedding", "residual1/in2")
    net = dlf.connectLayers(net, "residual1", "residual2/in2")
    return dlf.initialize(net)


def sequence_loss(net: dlf.DLNetwork, X: dlf.DLArray, T: dlf.DLArray) -> dlf.DLArray:
    """MathWorks' ``modelLoss`` with one output: the loss only (no gradients)."""
    Y = dlf.forward(net, X)
    loss = dlf.crossentropy(Y, T)
    seqLength = X.shape[2]  # MATLAB: size(X, 3) of the "CBT" array, its T
    return loss / seqLength  # so the loss doesn't scale with the sequence length


def model_loss(net: dlf.DLNetwork, X: dlf.DLArray, T: dlf.DLArray) -> tuple[dlf.DLArray, object]:
    """MathWorks' ``[loss, gradients] = modelLoss(net, X, T)``."""
    loss = sequence_loss(net, X, T)
    gradients = dlf.dlgradient(loss, net.Learnables)
    return loss, gradients


def next_batch(mbq: dlf.MiniBatchQueue) -> tuple[dlf.DLArray, dlf.DLArray]:
    """``mbq.next()``, reshuffling once a pass is done (MathWorks' datastore never runs out)."""
    if not mbq.hasdata():
        mbq.shuffle()
    X, T = mbq.next()
    return X, T


def train(
    net: dlf.DLNetwork,
    mbqTrain: dlf.MiniBatchQueue,
    mbqValidation: dlf.MiniBatchQueue,
    NumIterations: int = 200,
    LearnRate: float = 3e-3,
    ValidationFrequency: int = 25,
    NumValidationIters: int = 2,
) -> tuple[dlf.DLNetwork, dlf.TrainingProgressMonitor]:
    """MathWorks' ``nanogpt.train``, line by line."""
    averageGrad = []
    averageSqGrad = []

    monitor = dlf.trainingProgressMonitor(Metrics=["TrainingLoss", "ValidationLoss"], XLabel="Iteration")
    dlf.groupSubPlot(monitor, "Loss", ["TrainingLoss", "ValidationLoss"])
    iteration = 0
    while iteration < NumIterations and not monitor.Stop:
        iteration = iteration + 1
        X, T = next_batch(mbqTrain)
        loss, gradients = dlf.dlfeval(model_loss, net, X, T)
        net, averageGrad, averageSqGrad = dlf.adamupdate(
            net, gradients, averageGrad, averageSqGrad, iteration, LearnRate
        )
        dlf.recordMetrics(monitor, iteration, TrainingLoss=loss)

        # every validation frequency, validate on NumValidationIters mini-batches of the validation set
        if iteration % ValidationFrequency == 0 or iteration == 1:
            validationLoss = 0.0
            with torch.no_grad():  # MATLAB: outside dlfeval nothing is traced
                for _ in range(NumValidationIters):
                    XVal, TVal = next_batch(mbqValidation)
                    validationLoss = validationLoss + sequence_loss(net, XVal, TVal) / NumValidationIters
            dlf.recordMetrics(monitor, iteration, ValidationLoss=validationLoss)
            print(
                f"iteration {iteration:4d}  training loss {dlf.extractdata(loss).item():.4f}  "
                f"validation loss {dlf.extractdata(validationLoss).item():.4f}",
                flush=True,
            )
        monitor.Progress = 100 * iteration / NumIterations
    monitor.close()
    return net, monitor


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--length", type=int, default=32, help="subsequence length (time steps)")
    parser.add_argument("--batch", type=int, default=16, help="MiniBatchSize")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for training_progress.png (needs matplotlib)"
    )
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    text = generate_corpus(400, generator)
    vocabulary = sorted(set(text))  # MathWorks' CharacterTokenizer: one token per character
    tokens = torch.tensor([vocabulary.index(character) + 1 for character in text])  # 1-based
    split = int(0.9 * len(tokens))

    def queue(part: torch.Tensor, count: int) -> dlf.MiniBatchQueue:
        predictors, responses = subsequences(part, count, args.length, generator)
        # the categorical responses one-hot encoded, classes along C: numClasses × observations × steps
        targets = torch.nn.functional.one_hot(responses - 1, len(vocabulary)).permute(2, 0, 1)
        # observations lie where each MiniBatchFormat puts B: predictors B × T, targets C × B × T
        return dlf.minibatchqueue(
            predictors, targets, MiniBatchSize=args.batch, MiniBatchFormat=["BTC", "CBT"]
        )

    mbqTrain = queue(tokens[:split], 64 * args.batch)
    mbqValidation = queue(tokens[split:], 4 * args.batch)
    net = build_network(len(vocabulary), args.length)
    net, monitor = train(net, mbqTrain, mbqValidation, NumIterations=args.iterations)

    training = [value for _, value in monitor.MetricData["TrainingLoss"]]
    validation = [value for _, value in monitor.MetricData["ValidationLoss"]]
    chance = math.log(len(vocabulary))
    print(f"vocabulary {len(vocabulary)} characters; chance level {chance:.4f}")
    print(f"validation loss from {validation[0]:.4f} to {validation[-1]:.4f}")
    plot = None
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
            plot = monitor.savePlot(args.out / "training_progress.png")
            print(f"training progress plot saved to {plot}")
        except dlf.DLFormatError as error:  # matplotlib (the plot extra) is not installed
            print(error)
    return {"training": training, "validation": validation, "vocabulary": vocabulary, "plot": plot}


if __name__ == "__main__":
    main(sys.argv[1:])
