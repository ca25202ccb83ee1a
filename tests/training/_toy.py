"""A small three-class problem the tests of the training reports share: 32 feature vectors,
four mini-batches of 8 per epoch, and 16 validation observations."""

from __future__ import annotations

import numpy as np
import torch

import dlformat as dlf

CLASSES = np.array(["a", "b", "c"])


def data(count: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(count, 2, generator=generator)
    labels = CLASSES[(X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()]
    return X, labels


X, LABELS = data(32, 0)
XV, LABELSV = data(16, 1)


def layers(classification_layer: bool = False) -> list:
    torch.manual_seed(0)
    body = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()]
    return [*body, dlf.classificationLayer()] if classification_layer else body


def options(**given):
    """adam, 2 epochs of 4 iterations, no shuffling, quiet; ``given`` adds or replaces options."""
    settings = {
        "InitialLearnRate": 0.05,
        "MaxEpochs": 2,
        "MiniBatchSize": 8,
        "Shuffle": "never",
        "Verbose": False,
    }
    return dlf.trainingOptions(given.pop("solver", "adam"), **{**settings, **given})


def one_hot(labels: np.ndarray) -> np.ndarray:
    return (np.asarray(labels)[:, None] == CLASSES[None, :]).astype(np.float64)
